// LSTM (with peepholes), GRU (linear_before_reset 0 and 1) and RNN on oneDNN's RNN primitives.
// ONNX's gate orders become oneDNN's: LSTM i, o, f, c -> i, f, c, o (peepholes i, o, f -> i, f, o);
// GRU z, r, h -> u, r, o. W's and R's bias are summed per gate, except linear_before_reset's
// candidate, whose R bias is oneDNN's fourth LBR bias (inside the reset gate's product).
// X and Y are read and written in ONNX's layouts (tnc, or ntc with layout=1); a bidirectional
// layer runs its two directions side by side, one thread each, where a step is too small to share
// out or the threads are no more than the directions (else one after the other, each on every
// thread), each writing its outputs into Y's. A long sequence runs in pieces of steps, each piece's last
// state the next one's first, so that a primitive's scratchpad (which grows with the steps: 7 KiB a
// step at input 256, hidden 128) stays near kMostRecurrentScratchBytes.
#include "engine/kernels/onednn_rnn_kernel.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <mutex>
#include <optional>

#include "engine/core/run_queue_watch.h"
#include "engine/backends/measured_choice_cache.h"
#include "engine/backends/onednn/call_scratch.h"
#include "engine/backends/onednn/onednn_common.h"
#include "engine/core/parallel_for.h"
#include "engine/core/sample_stats.h"

namespace tilebank::engine::kernels {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

std::atomic<int64_t> onednn_calls{0};

constexpr int kChoiceRounds = 3;  // rounds of the weights layout's timing

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The node's activation names, lower case (empty: the defaults).
std::vector<std::string> ActivationNames(const KernelInfo& info) {
  std::vector<std::string> names;
  if (info.attrs.Has("activations"))
    for (const auto& a : info.attrs.json()["activations"]) names.push_back(Lower(a.get<std::string>()));
  return names;
}

int Gates(RecurrentCell cell) { return cell == RecurrentCell::kLstm ? 4 : cell == RecurrentCell::kGru ? 3 : 1; }

// oneDNN's gate g is ONNX's gate kOnnxGate[g].
const std::vector<int>& GateMap(RecurrentCell cell) {
  static const std::vector<int> lstm = {0, 2, 3, 1}, gru = {0, 1, 2}, rnn = {0};
  return cell == RecurrentCell::kLstm ? lstm : cell == RecurrentCell::kGru ? gru : rnn;
}

std::optional<dnnl::algorithm> RnnActivation(const std::string& name) {
  if (name == "tanh") return dnnl::algorithm::eltwise_tanh;
  if (name == "relu") return dnnl::algorithm::eltwise_relu;
  if (name == "sigmoid") return dnnl::algorithm::eltwise_logistic;
  return std::nullopt;
}

class OneDnnRecurrent : public OpKernel {
 public:
  OneDnnRecurrent(KernelInfo info, RecurrentCell cell, std::unique_ptr<OpKernel> fallback)
      : info_(std::move(info)), cell_(cell), fallback_(std::move(fallback)) {
    const std::string direction = info_.attrs.String("direction", "forward");
    dirs_ = direction == "bidirectional" ? 2 : 1;
    reverse_ = direction == "reverse";
    batch_first_ = info_.attrs.Int("layout", 0) != 0;
    lbr_ = cell_ == RecurrentCell::kGru && info_.attrs.Int("linear_before_reset", 0) != 0;
    // W, R, B and P reordered once when the graph holds them; otherwise on every call.
    weights_constant_ = info_.IsConstantInput(1) && info_.IsConstantInput(2);
    for (size_t i : {3, 7}) weights_constant_ = weights_constant_ && (!info_.HasInput(i) || info_.IsConstantInput(i));
    // ...and packed at load, the graph's copy then freed, where X's shape is static and the sequence
    // lengths are constant (a run that could need the fallback would find the weights gone).
    const bool static_x = !info_.input_shapes.empty() && info_.input_shapes[0].has_value();
    holds_weights_ = weights_constant_ && static_x && (!info_.HasInput(4) || info_.IsConstantInput(4));
    const auto names = ActivationNames(info_);
    activation_ = names.empty() ? dnnl::algorithm::eltwise_tanh : RnnActivation(names[0]).value_or(dnnl::algorithm::eltwise_tanh);
  }

  Status Compute(const KernelInputs& in, std::vector<TypedTensor>* out) const override {
    const bool released = in.size() > 2 && in[1] && in[1]->bytes.empty() && in[1]->size() > 0;
    if (!Takes(in)) return released ? info_.Bad("its weights were released, and this run is not oneDNN's") : fallback_->Compute(in, out);
    std::lock_guard<std::mutex> lock(mutex_);
    Status s = CatchOneDnnErrors([&]() -> Status { return Run(in, out); });
    if (!s.ok()) return released ? s : fallback_->Compute(in, out);
    return s;
  }

  // W, R, B and P, once packed (PrepareAhead or a first run).
  bool HoldsConstantInput(int k) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return holds_weights_ && plan_.has_value() && (k == 1 || k == 2 || k == 3 || k == 7);
  }

  // The plan made at load, its weights packed (and their layout timed where it is not known), on
  // zeros for X and the initial states, so that the graph may free its float copy.
  void PrepareAhead(const KernelInputs& in) const override {
    if (!holds_weights_) return;
    std::vector<TypedTensor> zeros;
    zeros.reserve(in.size());
    KernelInputs filled = in;
    for (size_t i : {0, 5, 6})
      if (i < in.size() && in[i]) {
        zeros.emplace_back(in[i]->dtype, in[i]->shape);  // zero-filled
        filled[i] = &zeros.back();
      }
    if (!Takes(filled)) return;
    std::vector<TypedTensor> out(static_cast<size_t>(info_.num_outputs));
    std::lock_guard<std::mutex> lock(mutex_);
    if (!CatchOneDnnErrors([&]() -> Status { return ChoosePlan(filled, SizesOf(filled), &out); }).ok()) plan_.reset();
  }

 private:
  struct Sizes {
    int64_t S = 0, B = 0, I = 0, H = 0;
    bool operator==(const Sizes& o) const { return S == o.S && B == o.B && I == o.I && H == o.H; }
  };
  // A primitive over `steps` steps with its scratchpad's descriptor: the room is the running
  // thread's (call_scratch.h), so that the two directions may run at once, and no primitive holds
  // one between runs (Demucs's two LSTM layers, both directions: 33 MB).
  struct Piece {
    dnnl::primitive prim;
    memory::desc scratchpad;
    int64_t steps = 0;
  };
  struct Direction {
    // The sequence in pieces of piece.steps, the last `tail.steps` (0: none) by tail.
    Piece piece, tail;
    memory weights_layer, weights_iter, peephole, bias;  // in the primitives' layouts
  };
  struct Plan {
    Sizes sizes;
    std::vector<const void*> weights;  // W, R, B, P as they were when reordered
    bool peephole = false;
    std::vector<Direction> dirs;
  };

  static const TypedTensor* Optional(const KernelInputs& in, size_t i) { return in.size() > i ? in[i] : nullptr; }

  // Float32 operands of ONNX's shapes and every sequence at its full length: anything else is the
  // fallback's (which also names bad shapes).
  bool Takes(const KernelInputs& in) const {
    if (in.size() < 3 || !in[0] || !in[1] || !in[2] || in[0]->rank() != 3 || in[1]->rank() != 3 || in[2]->rank() != 3) return false;
    for (size_t i : {0, 1, 2, 3, 5, 6, 7})
      if (const TypedTensor* t = Optional(in, i); t && t->dtype != DType::kFloat32) return false;
    const Sizes z = SizesOf(in);
    const int64_t G = Gates(cell_) * z.H;
    if (in[1]->shape != std::vector<int64_t>{dirs_, G, z.I} || in[2]->shape != std::vector<int64_t>{dirs_, G, z.H}) return false;
    const int64_t state = dirs_ * z.B * z.H;
    if (const TypedTensor* b = Optional(in, 3); b && b->size() != dirs_ * 2 * G) return false;
    if (const TypedTensor* h = Optional(in, 5); h && h->size() != state) return false;
    if (const TypedTensor* c = Optional(in, 6); c && c->size() != state) return false;
    if (const TypedTensor* p = Optional(in, 7); p && p->size() != dirs_ * 3 * z.H) return false;
    if (const TypedTensor* lens = Optional(in, 4)) {
      if (lens->size() != z.B) return false;
      for (int64_t b = 0; b < z.B; ++b)
        if (lens->IntAt(b) != z.S) return false;
    }
    return z.S > 0 && z.B > 0 && z.I > 0 && z.H > 0;
  }

  Sizes SizesOf(const KernelInputs& in) const {
    const auto& x = in[0]->shape;
    Sizes z;
    z.S = batch_first_ ? x[1] : x[0], z.B = batch_first_ ? x[0] : x[1], z.I = x[2];
    z.H = info_.attrs.Int("hidden_size", in[2]->shape.back());
    return z;
  }

  // Direction d's weights `onnx` ([G*H, K] rows gate-major, ONNX's gate order) as oneDNN's
  // {1, 1, K, G, H} in the primitive's layout `md`.
  memory Weights(const float* onnx, int64_t K, int64_t H, const memory::desc& md, dnnl::stream& stream) const {
    const int G = Gates(cell_);
    std::vector<float> ldgoi(static_cast<size_t>(G * H * K));
    for (int g = 0; g < G; ++g)
      std::memcpy(ldgoi.data() + g * H * K, onnx + GateMap(cell_)[g] * H * K, static_cast<size_t>(H * K) * sizeof(float));
    dnnl::engine& engine = OneDnnCpuEngine();
    memory user({{1, 1, K, G, H}, memory::data_type::f32, tag::ldgoi}, engine, ldgoi.data());
    memory packed(md, engine);
    dnnl::reorder(user, packed).execute(stream, user, packed);
    stream.wait();
    return packed;
  }

  // Direction d's bias {1, 1, G (LBR: 4), H}: W's and R's summed per gate in oneDNN's order.
  memory Bias(const float* wb, int64_t H) const {
    const int G = Gates(cell_);
    const auto& map = GateMap(cell_);
    memory bias({{1, 1, G + (lbr_ ? 1 : 0), H}, memory::data_type::f32, tag::ldgo}, OneDnnCpuEngine());
    float* b = static_cast<float*>(bias.get_data_handle());
    const float* rb = wb ? wb + G * H : nullptr;
    for (int g = 0; g < G; ++g)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t k = map[g] * H + h;
        const bool candidate_of_lbr = lbr_ && g == 2;
        b[g * H + h] = wb ? wb[k] + (candidate_of_lbr ? 0.0f : rb[k]) : 0.0f;
      }
    if (lbr_)
      for (int64_t h = 0; h < H; ++h) b[3 * H + h] = rb ? rb[2 * H + h] : 0.0f;
    return bias;
  }

  // The primitives and packed weights for weights in `weights_tag` (oneDNN's choice: any); a
  // oneDNN error as kInvalidInput.
  Result<Plan> PlanFor(const KernelInputs& in, const Sizes& z, memory::format_tag weights_tag) const {
    return CatchOneDnnErrors([&]() -> Result<Plan> { return MakePlan(in, z, weights_tag); });
  }
  // `steps` steps of a sequence of z.S in ONNX's layout (tnc, or ntc with layout=1) as oneDNN's
  // {steps, B, channels}, with `interleave` sequences side by side in it (Y's directions): a view,
  // strided where the steps are fewer than z.S or interleaved.
  memory::desc SequenceView(int64_t steps, const Sizes& z, int64_t channels, int64_t interleave) const {
    const memory::dims strides = batch_first_ ? memory::dims{interleave * channels, z.S * interleave * channels, 1}
                                              : memory::dims{interleave * z.B * channels, channels, 1};
    return memory::desc({steps, z.B, channels}, memory::data_type::f32, strides);
  }
  // Where SequenceView's step `first` of sequence `d` starts, in elements.
  int64_t SequenceOffset(int64_t first, int d, const Sizes& z, int64_t channels, int64_t interleave) const {
    return batch_first_ ? (first * interleave + d) * channels : (first * interleave + d) * z.B * channels;
  }

  // Direction d's primitive over `steps` steps, and the weights layouts it reads.
  Piece MakePiece(int d, int64_t steps, const Sizes& z, bool peephole, memory::format_tag weights_tag, memory::desc* wl, memory::desc* wi) const {
    dnnl::engine& engine = OneDnnCpuEngine();
    const int G = Gates(cell_);
    const memory::data_type f32 = memory::data_type::f32;
    const memory::desc src_layer = SequenceView(steps, z, z.I, 1), dst_layer = SequenceView(steps, z, z.H, dirs_), state({1, 1, z.B, z.H}, f32, tag::ldnc),
        weights_layer({1, 1, z.I, G, z.H}, f32, weights_tag), weights_iter({1, 1, z.H, G, z.H}, f32, weights_tag),
        bias_md({1, 1, G + (lbr_ ? 1 : 0), z.H}, f32, tag::ldgo), peephole_md({1, 1, 3, z.H}, f32, tag::ldgo);
    const auto inference = dnnl::prop_kind::forward_inference;
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const auto direction = reverse_ || d == 1 ? dnnl::rnn_direction::unidirectional_right2left : dnnl::rnn_direction::unidirectional_left2right;
    Piece piece;
    piece.steps = steps;
    auto take = [&](const auto& pd, auto prim) {
      piece.prim = prim, piece.scratchpad = pd.scratchpad_desc(), *wl = pd.weights_layer_desc(), *wi = pd.weights_iter_desc();
    };
    if (cell_ == RecurrentCell::kLstm) {
      auto desc = peephole ? dnnl::lstm_forward::desc(inference, direction, src_layer, state, state, weights_layer, weights_iter, peephole_md, bias_md,
                                                      dst_layer, state, state)
                           : dnnl::lstm_forward::desc(inference, direction, src_layer, state, state, weights_layer, weights_iter, bias_md, dst_layer,
                                                      state, state);
      dnnl::lstm_forward::primitive_desc pd(desc, attr, engine);
      take(pd, dnnl::lstm_forward(pd));
    } else if (lbr_) {
      dnnl::lbr_gru_forward::primitive_desc pd(
          dnnl::lbr_gru_forward::desc(inference, direction, src_layer, state, weights_layer, weights_iter, bias_md, dst_layer, state), attr, engine);
      take(pd, dnnl::lbr_gru_forward(pd));
    } else if (cell_ == RecurrentCell::kGru) {
      dnnl::gru_forward::primitive_desc pd(dnnl::gru_forward::desc(inference, direction, src_layer, state, weights_layer, weights_iter, bias_md, dst_layer, state),
                                           attr, engine);
      take(pd, dnnl::gru_forward(pd));
    } else {
      dnnl::vanilla_rnn_forward::primitive_desc pd(
          dnnl::vanilla_rnn_forward::desc(inference, activation_, direction, src_layer, state, weights_layer, weights_iter, bias_md, dst_layer, state),
          attr, engine);
      take(pd, dnnl::vanilla_rnn_forward(pd));
    }
    return piece;
  }

  // Direction d's primitives: the whole sequence in one, or, where its scratchpad would pass
  // kMostRecurrentScratchBytes, in pieces of the steps that fit and a shorter last one, when their
  // weights layouts are the whole one's.
  void MakePieces(Direction* dir, int d, const Sizes& z, bool peephole, memory::format_tag weights_tag, memory::desc* wl, memory::desc* wi) const {
    dir->piece = MakePiece(d, z.S, z, peephole, weights_tag, wl, wi);
    const int64_t steps = RecurrentPieceSteps(z.S, dir->piece.scratchpad.get_size());
    if (steps == z.S) return;
    memory::desc piece_wl, piece_wi, tail_wl, tail_wi;
    Piece piece = MakePiece(d, steps, z, peephole, weights_tag, &piece_wl, &piece_wi), tail;
    if (z.S % steps) tail = MakePiece(d, z.S % steps, z, peephole, weights_tag, &tail_wl, &tail_wi);
    if (piece_wl != *wl || piece_wi != *wi || (tail.steps && (tail_wl != *wl || tail_wi != *wi))) return;
    dir->piece = std::move(piece), dir->tail = std::move(tail);
  }

  Result<Plan> MakePlan(const KernelInputs& in, const Sizes& z, memory::format_tag weights_tag) const {
    dnnl::engine& engine = OneDnnCpuEngine();
    dnnl::stream stream(engine);
    const TypedTensor *bias = Optional(in, 3), *peep = Optional(in, 7);
    Plan p;
    p.sizes = z;
    p.weights = {in[1]->bytes.data(), in[2]->bytes.data(), bias ? bias->bytes.data() : nullptr, peep ? peep->bytes.data() : nullptr};
    p.peephole = cell_ == RecurrentCell::kLstm && peep;
    const memory::desc peephole_md({1, 1, 3, z.H}, memory::data_type::f32, tag::ldgo);
    for (int d = 0; d < dirs_; ++d) {
      Direction dir;
      memory::desc wl, wi;
      MakePieces(&dir, d, z, p.peephole, weights_tag, &wl, &wi);
      const int64_t G_H = Gates(cell_) * z.H;
      dir.weights_layer = Weights(in[1]->data<float>() + d * G_H * z.I, z.I, z.H, wl, stream);
      dir.weights_iter = Weights(in[2]->data<float>() + d * G_H * z.H, z.H, z.H, wi, stream);
      dir.bias = Bias(bias ? bias->data<float>() + d * 2 * G_H : nullptr, z.H);
      if (p.peephole) {  // ONNX's i, o, f as oneDNN's i, f, o
        dir.peephole = memory(peephole_md, engine);
        float* pp = static_cast<float*>(dir.peephole.get_data_handle());
        const float* onnx = peep->data<float>() + d * 3 * z.H;
        for (int g = 0; g < 3; ++g) std::memcpy(pp + g * z.H, onnx + (g == 0 ? 0 : g == 1 ? 2 : 1) * z.H, static_cast<size_t>(z.H) * sizeof(float));
      }
      p.dirs.push_back(std::move(dir));
    }
    return p;
  }

  // oneDNN 2.6 picks its brgemm RNN for weights in the layout it chooses; with plain ldigo weights
  // it runs its GEMM-based one, which computes the input projection (all steps in one product) apart.
  // Which is faster depends on the CPU: on a Zen 4 (AVX-512), one LSTM layer at batch 1, input
  // 1024, hidden 256, ran 1.34 ms by brgemm and 0.85 by GEMM, but input 32, hidden 64, 3.5x slower
  // by GEMM; on a Zen 3 (AVX2), CRNN's 1024/256 layer 3.15 ms by GEMM and 2.1 by brgemm. With
  // constant weights both are timed on the first call, alternated, once per instance and host
  // (engine/backends/measured_choice_cache.h); otherwise oneDNN chooses.
  Status ChoosePlan(const KernelInputs& in, const Sizes& z, std::vector<TypedTensor>* out) const {
    auto keep = [&](Result<Plan> plan) {
      if (plan.ok()) plan_ = std::move(*plan);
      return plan.status();
    };
    if (!weights_constant_) return keep(PlanFor(in, z, tag::any));
    std::string key = std::string("registry rnn weights v2|") + std::to_string(static_cast<int>(cell_)) + (lbr_ ? "lbr" : "") +
                      (cell_ == RecurrentCell::kLstm && Optional(in, 7) ? "p" : "") + (Optional(in, 3) ? "b" : "") + (batch_first_ ? "ntc|" : "tnc|") +
                      std::to_string(static_cast<int>(activation_)) + "|";
    for (int64_t v : {static_cast<int64_t>(dirs_), z.S, z.B, z.I, z.H}) key += std::to_string(v) + ",";
    if (const auto known = RecallMeasuredChoice(key)) {  // only the plan chosen is made
      auto plan = PlanFor(in, z, *known == "plain" ? tag::ldigo : tag::any);
      return plan.ok() || *known != "plain" ? keep(std::move(plan)) : keep(PlanFor(in, z, tag::any));
    }
    auto chosen = PlanFor(in, z, tag::any);
    if (!chosen.ok()) return chosen.status();
    auto plain = PlanFor(in, z, tag::ldigo);
    std::string choice = "library";
    const RunQueueWatch watch;
    const bool timed = plain.ok() && plain->dirs[0].weights_iter.get_desc() != chosen->dirs[0].weights_iter.get_desc();
    if (timed) {
      const std::vector<double> fastest = FastestOfAlternated(kChoiceRounds, 2, 1,
                                                              {[&] { return RunPlan(*chosen, in, z, out).ok(); },
                                                               [&] { return RunPlan(*plain, in, z, out).ok(); }});
      if (fastest[1] < fastest[0]) choice = "plain";
    }
    RememberMeasuredChoice(key, choice, timed ? &watch : nullptr);  // "library" untimed: kept whatever the machine ran
    plan_ = std::move(choice == "plain" ? *plain : *chosen);
    return Status::Ok();
  }

  Status Run(const KernelInputs& in, std::vector<TypedTensor>* out) const {
    const Sizes z = SizesOf(in);
    const TypedTensor *bias = Optional(in, 3), *peep = Optional(in, 7);
    const std::vector<const void*> weights = {in[1]->bytes.data(), in[2]->bytes.data(), bias ? bias->bytes.data() : nullptr,
                                              peep ? peep->bytes.data() : nullptr};
    const bool packed = plan_ && plan_->sizes == z && (holds_weights_ || (weights_constant_ && plan_->weights == weights));
    if (!packed) {
      if (holds_weights_ && in[1]->bytes.empty()) return info_.Bad("its weights were released, and its plan no longer fits");
      plan_.reset();
      TB_RETURN_IF_ERROR(ChoosePlan(in, z, out));
    }
    onednn_calls++;
    return RunPlan(*plan_, in, z, out);
  }

  Status RunPlan(const Plan& p, const KernelInputs& in, const Sizes& z, std::vector<TypedTensor>* out) const {
    const TypedTensor *h0 = Optional(in, 5), *c0 = Optional(in, 6);
    dnnl::engine& engine = OneDnnCpuEngine();
    const memory::data_type f32 = memory::data_type::f32;
    const memory::desc state({1, 1, z.B, z.H}, f32, tag::ldnc);
    const std::vector<int64_t> y_shape = batch_first_ ? std::vector<int64_t>{z.B, z.S, dirs_, z.H} : std::vector<int64_t>{z.S, dirs_, z.B, z.H};
    const std::vector<int64_t> state_shape = batch_first_ ? std::vector<int64_t>{z.B, dirs_, z.H} : std::vector<int64_t>{dirs_, z.B, z.H};
    TypedTensor& y = (*out)[0];  // the caller's buffer of the last run: nothing allocated or cleared
    ReshapeForOverwrite(&y, DType::kFloat32, y_shape);
    TypedTensor yh(DType::kFloat32, state_shape), yc(DType::kFloat32, state_shape);
    // A state [dirs, B, H] (ntc: [B, dirs, H]) at (d, b) starts here.
    auto state_at = [&](int d, int64_t b) { return batch_first_ ? (b * dirs_ + d) * z.H : (d * z.B + b) * z.H; };
    // Each direction's initial and final states (its outputs are written into Y's).
    struct Buffers {
      std::vector<float> h_in, c_in, h_out, c_out;
    };
    std::vector<Buffers> buffers(dirs_);
    auto run_direction = [&](int d) {
      const Direction& dir = p.dirs[d];
      Buffers& buf = buffers[d];
      for (auto* v : {&buf.h_in, &buf.c_in, &buf.h_out, &buf.c_out}) v->assign(static_cast<size_t>(z.B * z.H), 0.0f);
      auto gather = [&](const TypedTensor* from, std::vector<float>& to) {
        for (int64_t b = 0; b < z.B; ++b) std::memcpy(to.data() + b * z.H, from->data<float>() + state_at(d, b), static_cast<size_t>(z.H) * sizeof(float));
      };
      if (h0) gather(h0, buf.h_in);
      if (c0 && cell_ == RecurrentCell::kLstm) gather(c0, buf.c_in);
      const float* x = in[0]->data<float>();
      // The pieces in the order the direction walks the sequence; each takes the state the last left.
      const bool backward = reverse_ || d == 1;
      const int64_t whole = (z.S - dir.tail.steps) / dir.piece.steps;
      dnnl::stream own_stream(engine);
      for (int64_t k = 0; k < whole + (dir.tail.steps ? 1 : 0); ++k) {
        const int64_t forward_k = backward ? whole + (dir.tail.steps ? 1 : 0) - 1 - k : k;  // the piece's place from the start
        const Piece& piece = forward_k < whole ? dir.piece : dir.tail;
        const int64_t first = forward_k * dir.piece.steps;  // its first step
        const memory::desc piece_x = SequenceView(piece.steps, z, z.I, 1), piece_y = SequenceView(piece.steps, z, z.H, dirs_);
        if (k > 0) {
          std::swap(buf.h_in, buf.h_out);
          std::swap(buf.c_in, buf.c_out);
        }
        std::unordered_map<int, memory> args = {
            {DNNL_ARG_SRC_LAYER, memory(piece_x, engine, const_cast<float*>(x) + SequenceOffset(first, 0, z, z.I, 1))},
            {DNNL_ARG_WEIGHTS_LAYER, dir.weights_layer},
            {DNNL_ARG_WEIGHTS_ITER, dir.weights_iter},
            {DNNL_ARG_BIAS, dir.bias},
            {DNNL_ARG_SCRATCHPAD, memory(piece.scratchpad, engine, CallScratch(piece.scratchpad.get_size()))},
            {DNNL_ARG_DST_LAYER, memory(piece_y, engine, y.data<float>() + SequenceOffset(first, d, z, z.H, dirs_))},
            {DNNL_ARG_SRC_ITER, memory(state, engine, buf.h_in.data())},
            {DNNL_ARG_DST_ITER, memory(state, engine, buf.h_out.data())}};
        if (cell_ == RecurrentCell::kLstm) {
          args[DNNL_ARG_SRC_ITER_C] = memory(state, engine, buf.c_in.data());
          args[DNNL_ARG_DST_ITER_C] = memory(state, engine, buf.c_out.data());
          if (p.peephole) args[DNNL_ARG_WEIGHTS_PEEPHOLE] = dir.peephole;
        }
        ExecuteAndWait(piece.prim, own_stream, args);
      }
    };
    std::vector<Status> status(dirs_);  // each direction's own
    auto run_directions = [&](int64_t begin, int64_t end) {
      for (int64_t d = begin; d < end; ++d) {
        try {  // nothing may leave a pool thread
          run_direction(static_cast<int>(d));
        } catch (const std::exception& e) {
          status[d] = Status::InvalidInput(std::string("oneDNN: ") + e.what());
        }
      }
    };
    // Side by side when each direction's step is too small to share among threads, or no thread
    // would be left idle; otherwise each direction on all the threads in turn.
    const bool side_by_side = dirs_ > 1 && (z.B * z.H < 1024 || ParallelThreads() <= dirs_);
    if (side_by_side) ParallelFor(dirs_, 1, run_directions);
    else run_directions(0, dirs_);
    for (const Status& s : status) TB_RETURN_IF_ERROR(s);
    for (int d = 0; d < dirs_; ++d) {
      const Buffers& buf = buffers[d];
      for (int64_t b = 0; b < z.B; ++b) {
        std::memcpy(yh.data<float>() + state_at(d, b), buf.h_out.data() + b * z.H, static_cast<size_t>(z.H) * sizeof(float));
        if (cell_ == RecurrentCell::kLstm)
          std::memcpy(yc.data<float>() + state_at(d, b), buf.c_out.data() + b * z.H, static_cast<size_t>(z.H) * sizeof(float));
      }
    }
    if (out->size() > 1) (*out)[1] = std::move(yh);
    if (out->size() > 2 && cell_ == RecurrentCell::kLstm) (*out)[2] = std::move(yc);
    return Status::Ok();
  }

  KernelInfo info_;
  RecurrentCell cell_;
  std::unique_ptr<OpKernel> fallback_;
  int dirs_ = 1;
  bool reverse_ = false, batch_first_ = false, lbr_ = false, weights_constant_ = false, holds_weights_ = false;
  dnnl::algorithm activation_ = dnnl::algorithm::eltwise_tanh;
  mutable std::mutex mutex_;
  mutable std::optional<Plan> plan_;
};

}  // namespace

int64_t RecurrentPieceSteps(int64_t steps, size_t scratch_bytes) {
  if (scratch_bytes <= kMostRecurrentScratchBytes || steps <= kFewestPieceSteps) return steps;
  const int64_t pieces = static_cast<int64_t>((scratch_bytes + kMostRecurrentScratchBytes - 1) / kMostRecurrentScratchBytes);
  return std::min(steps, std::max(kFewestPieceSteps, (steps + pieces - 1) / pieces));
}

bool OneDnnTakesRecurrent(const KernelInfo& info, RecurrentCell cell) {
  if (info.attrs.Has("clip") || info.attrs.Int("input_forget", 0) != 0) return false;
  const std::string direction = info.attrs.String("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") return false;
  const auto names = ActivationNames(info);
  if (names.empty()) return true;
  const size_t dirs = direction == "bidirectional" ? 2 : 1;
  std::vector<std::string> defaults;
  if (cell == RecurrentCell::kLstm) defaults = {"sigmoid", "tanh", "tanh"};
  if (cell == RecurrentCell::kGru) defaults = {"sigmoid", "tanh"};
  if (cell == RecurrentCell::kRnn) {
    if (names.size() != dirs || !RnnActivation(names[0]) || std::count(names.begin(), names.end(), names[0]) != static_cast<long>(dirs)) return false;
    return !info.attrs.Has("activation_alpha") && !info.attrs.Has("activation_beta");
  }
  if (names.size() != defaults.size() * dirs) return false;
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] != defaults[i % defaults.size()]) return false;
  return true;
}

std::unique_ptr<OpKernel> MakeOneDnnRecurrent(const KernelInfo& info, RecurrentCell cell, std::unique_ptr<OpKernel> fallback) {
  return std::make_unique<OneDnnRecurrent>(info, cell, std::move(fallback));
}

int64_t OneDnnRecurrentCalls() { return onednn_calls.load(); }

}  // namespace tilebank::engine::kernels
