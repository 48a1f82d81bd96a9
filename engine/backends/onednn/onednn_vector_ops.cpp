#include "engine/backends/onednn/onednn_vector_ops.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include "engine/backends/onednn/onednn_common.h"
#include "engine/backends/onednn/planar_pool.h"
#include "engine/core/op_semantics.h"
#include "engine/core/parallel_for.h"
#include "engine/backends/broadcast_binary_rows.h"

namespace tilebank::engine {

namespace {

using dnnl::algorithm;
using dnnl::memory;
using dnnl::prop_kind;

int64_t NormalizedAxis(const OpSpec& op, int64_t fallback) {
  const int64_t rank = static_cast<int64_t>(op.inputs[0].shape.size());
  int64_t axis = op.Int("axis", fallback);
  return axis < 0 ? axis + rank : axis;
}

// `shape` with leading 1s up to `rank` (numpy broadcasting aligns trailing axes).
std::vector<int64_t> PaddedTo(std::vector<int64_t> shape, size_t rank) {
  shape.insert(shape.begin(), rank - shape.size(), 1);
  return shape;
}

// The dims oneDNN's binary primitive runs `out` (src0) and `other` (src1, padded to out's rank) in.
// Its JIT kernels broadcast src1 over the trailing dims from dim 1 on ("per channel"), but a
// broadcast whose full dims lead (a [3,1,1] mean over a [3,H,W] image: dim 0 is the batch to
// oneDNN) fell to its reference kernel, 15 ms for 3x320x320. Such a pattern, full dims then
// broadcast dims, runs as [1, full, rest] against [1, full, 1], the same elements in the same
// order; other patterns keep their shapes.
std::pair<std::vector<int64_t>, std::vector<int64_t>> BinaryDims(const std::vector<int64_t>& out, const std::vector<int64_t>& other) {
  int64_t full = 1, rest = 1;
  bool in_rest = false, per_channel = true, any_broadcast = false;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    const bool broadcast = other[d] == 1;
    any_broadcast |= broadcast;
    if (broadcast) in_rest = true;
    else if (in_rest) per_channel = false;  // a full dim after a broadcast one
    (in_rest ? rest : full) *= out[d];
  }
  if (!per_channel || !any_broadcast || full == 1) return {out, other};
  return {{1, full, rest}, {1, full, 1}};
}

// `out` and `other` with out's size-1 dims dropped and each run of neighbouring dims that are all
// full or all broadcast in `other` merged into one: [1,64,3,49,49] against [1,64,1,49,49] (Swin's
// shifted-window mask over its heads) is [64,3,2401] against [64,1,2401], which oneDNN's JIT
// kernels broadcast ("per minibatch and spatial"); in five dims it fell to the reference kernel,
// 22 ms a step.
std::pair<std::vector<int64_t>, std::vector<int64_t>> MergedBroadcastDims(const std::vector<int64_t>& out, const std::vector<int64_t>& other) {
  std::vector<int64_t> a, b;
  bool last_broadcast = false;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    const bool broadcast = other[d] == 1;
    if (!a.empty() && broadcast == last_broadcast) {
      a.back() *= out[d];
      b.back() *= broadcast ? 1 : out[d];
    } else {
      a.push_back(out[d]);
      b.push_back(broadcast ? 1 : out[d]);
    }
    last_broadcast = broadcast;
  }
  if (a.empty()) a.push_back(1), b.push_back(1);
  return {a, b};
}

// A binary operand repeated into one row oneDNN broadcasts at full speed (ShortRunBroadcast): the
// output's values per outer index (`row`), each operand value repeated `run` times within it, the
// row repeated `tiles` times; run 0: none.
struct ShortRow {
  int64_t row = 0, run = 0, tiles = 1;
};

// Where `other` (padded to out's rank) is full over a block of axes [j, k] and broadcast before and
// after it, the after part a short run (2 to 15 values: StyleGAN's [1,C,1,1] modulation of 3x3
// taps), the elements per outer index (out's axes from j on) and the run's length: the operand
// repeated over the run is then one row oneDNN broadcasts over the outer index at full speed, where
// it ran a masked vector per run (256x256x3x3 by 1x256x1x1: 537 us). And where there is no such
// run but the row is short (under 16 values: PointNet++'s [1,1024,3] less a centroid [1,1,3], a
// vector per row of 3, 10-12 us), the row repeated `tiles` times (a power of two dividing the
// outer count, to 1024 values) is the row oneDNN broadcasts. {0, 0, 1} otherwise, and where the row
// would exceed 64Ki values.
ShortRow ShortRunBroadcast(const std::vector<int64_t>& out, const std::vector<int64_t>& other) {
  const int rank = static_cast<int>(out.size());
  int j = 0, k = rank - 1;
  while (j < rank && other[j] == 1) ++j;
  while (k >= 0 && other[k] == 1) --k;
  if (j > k) return {};
  int64_t row = 1, run = 1;
  for (int a = j; a < rank; ++a) {
    if (a <= k && other[a] != out[a]) return {};
    row *= out[a];
    if (a > k) run *= out[a];
  }
  if (row == 0 || row > (int64_t{1} << 16) || run > 15) return {};
  if (run >= 2) return {row, run, 1};
  if (row >= 16) return {};
  const int64_t outer = Tensor::NumElements(out) / row;
  int64_t tiles = 1;
  while (outer % (tiles * 2) == 0 && row * tiles * 2 <= 1024) tiles *= 2;
  if (tiles < 4) return {};
  return {row, 1, tiles};
}

bool IsGlobalPooling(const std::string& t) { return t == "GlobalAveragePool" || t == "GlobalMaxPool"; }
bool IsPooling(const std::string& t) { return t == "MaxPool" || t == "AveragePool" || IsGlobalPooling(t); }

// The input that oneDNN takes as src0 (it must have the output's shape), or -1.
int BinaryFirst(const OpSpec& op) {
  const auto& out = op.outputs[0].shape;
  if (op.inputs[0].shape == out) return 0;
  if ((op.op_type == "Add" || op.op_type == "Mul") && op.inputs[1].shape == out) return 1;
  return -1;
}

// A primitive with its memories: Prepare creates both (the primitive descriptor needs no data,
// but creating it there keeps Build cheap and its exceptions in one place).
class VectorKernel : public Kernel {
 public:
  explicit VectorKernel(OpSpec op) : op_(std::move(op)), stream_(OneDnnCpuEngine()) {}

  Status Prepare(const std::vector<const Tensor*>& in) override {
    direct_.clear();
    direct_output_ = false;
    return CreateCatching(in);
  }
  Status Run() override {
    if (short_run_per_call_) RepeatShortRuns();
    if (small_binary_) small_binary_->Run(static_cast<const float*>(args_.at(DNNL_ARG_SRC_0).get_data_handle()),
                                          static_cast<const float*>(args_.at(DNNL_ARG_SRC_1).get_data_handle()), static_cast<float*>(args_.at(DNNL_ARG_DST).get_data_handle()));
    else if (own_pool_) own_pool_->Run(static_cast<const float*>(args_.at(DNNL_ARG_SRC).get_data_handle()), static_cast<float*>(args_.at(DNNL_ARG_DST).get_data_handle()));
    else if (small_) RunOnThisThread([&] { ExecuteAndWait(prim_, stream_, args_); });
    else ExecuteAndWait(prim_, stream_, args_);
    return Status::Ok();
  }
  Status Fetch(Tensor* out) override {
    *out = TensorFromMemory(args_.at(DNNL_ARG_DST), op_.outputs[0].shape);
    return Status::Ok();
  }
  // Every operand is a plain row-major memory: the primitive reads the caller's inputs and writes
  // its output in place; constants (LayerNorm's scale and shift, a bias) are copied once here.
  // The caller's operands get memories without a buffer (their handles are set at each run), so
  // binding allocates and copies nothing the size of an activation.
  Result<bool> BindDirect(const std::vector<std::vector<int64_t>>& shapes, const std::vector<const Tensor*>& constants) override {
    std::vector<const Tensor*> in(shapes.size(), nullptr);
    direct_.assign(shapes.size(), false);
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (i < constants.size() && constants[i]) in[i] = constants[i];
      else direct_[i] = true;
    }
    direct_output_ = true;
    Status s = CreateCatching(in);
    if (!s.ok()) return s;
    return true;
  }
  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    if (small_binary_ && direct_.size() == 2) {  // no memory handles set: a constant operand's buffer is the one bound
      const float* x[2];
      for (size_t i = 0; i < 2; ++i) x[i] = direct_[i] ? in[i] : small_bound_[i];
      small_binary_->Run(x[small_first_], x[1 - small_first_], out);
      return Status::Ok();
    }
    for (size_t i = 0; i < direct_.size(); ++i)
      if (direct_[i]) {
        const int arg = ArgOfInput(i);
        (short_run_ && arg == DNNL_ARG_SRC_1 ? short_run_operand_ : args_.at(arg)).set_data_handle(const_cast<float*>(in[i]));
      }
    args_.at(DNNL_ARG_DST).set_data_handle(out);
    return Run();
  }

 private:
  // The primitive argument op input `i` is bound to.
  int ArgOfInput(size_t i) const {
    const std::string& t = op_.op_type;
    if (t == "LayerNormalization") return i == 0 ? DNNL_ARG_SRC : i == 1 ? DNNL_ARG_SCALE : DNNL_ARG_SHIFT;
    if (t == "Softmax" || IsPooling(t) || IsUnaryElementwiseOp(t)) return DNNL_ARG_SRC;
    return static_cast<int>(i) == BinaryFirst(op_) ? DNNL_ARG_SRC_0 : DNNL_ARG_SRC_1;
  }

  // ShortRunBroadcast's operand repeated over its run into repeated_ (src1).
  void RepeatShortRuns() {
    const float* given = static_cast<const float*>(short_run_operand_.get_data_handle());
    float* at = repeated_.data();
    for (size_t i = 0; i < static_cast<size_t>(short_row_ / short_run_); ++i, at += short_run_) std::fill(at, at + short_run_, given[i]);
    for (size_t from = static_cast<size_t>(short_row_); from < repeated_.size(); from += static_cast<size_t>(short_row_))
      std::copy(repeated_.begin(), repeated_.begin() + short_row_, repeated_.begin() + static_cast<int64_t>(from));
  }

  // Outputs this small run on the calling thread alone: a few microseconds of waking oneDNN's
  // threads cost more than the work (an RNN unrolled into ops on vectors of a few hundred values).
  static constexpr int64_t kSmallOutput = 16384;
  bool small_ = false;
  std::vector<bool> direct_;    // BindDirect: which inputs are read from the caller's memory
  bool direct_output_ = false;  // BindDirect: the output is written to the caller's memory

  // A memory of `md` holding a copy of `t`; without a buffer where `t` is null (a direct operand).
  static memory InputMemory(const Tensor* t, const memory::desc& md) {
    return t ? MemoryFromTensor(*t, md) : memory(md, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
  }
  memory OutputMemory(const memory::desc& md) const {
    return direct_output_ ? memory(md, OneDnnCpuEngine(), DNNL_MEMORY_NONE) : memory(md, OneDnnCpuEngine());
  }

  Status CreateCatching(const std::vector<const Tensor*>& in) {
    return CatchOneDnnErrors([&] {
      Create(in);
      return Status::Ok();
    });
  }
  // `in`: the op's inputs; null for one a direct run hands over (BindDirect).
  void Create(const std::vector<const Tensor*>& in) {
    auto& engine = OneDnnCpuEngine();
    const std::string& t = op_.op_type;
    const auto& shape = op_.inputs[0].shape;
    args_.clear();
    own_pool_.reset();
    small_ = Tensor::NumElements(op_.outputs[0].shape) <= kSmallOutput;
    small_binary_.reset();
    if (IsPooling(t)) {
      memory::desc src = RowMajorDesc(shape), dst = RowMajorDesc(op_.outputs[0].shape);
      // oneDNN's kernels for channels-first tensors are scalar loops short of JIT (simple_nchw), and
      // its JIT kernel ran slower than the own loop in models (PoolFormer's 3x3 averages: 64x56x56
      // 333 -> 180 us, 320x14x14 342 -> 158): oneDNN pools only windows the own loop refuses.
      if (auto window = OwnPoolWindowOf(op_); window.ok()) {
        own_pool_.emplace(*window, shape[0] * shape[1]);
      } else {
        auto pd = OneDnnPoolingPrimitive(op_, src, dst);
        prim_ = dnnl::pooling_v2_forward(pd);
        if (pd.scratchpad_desc().get_size() > 0) args_[DNNL_ARG_SCRATCHPAD] = memory(pd.scratchpad_desc(), engine);
      }
      args_[DNNL_ARG_SRC] = InputMemory(in[0], src);
      args_[DNNL_ARG_DST] = OutputMemory(dst);
    } else if (t == "Softmax") {
      memory::desc md = RowMajorDesc(shape);
      auto pd = dnnl::softmax_v2_forward::primitive_desc(
          {prop_kind::forward_inference, algorithm::softmax_accurate, md, md, static_cast<int>(NormalizedAxis(op_, -1))}, engine);
      prim_ = dnnl::softmax_v2_forward(pd);
      args_[DNNL_ARG_SRC] = InputMemory(in[0], md);
      args_[DNNL_ARG_DST] = OutputMemory(md);
    } else if (t == "LayerNormalization") {
      const int64_t axis = NormalizedAxis(op_, -1);
      int64_t rows = 1, len = 1;
      for (size_t i = 0; i < shape.size(); ++i) (static_cast<int64_t>(i) < axis ? rows : len) *= shape[i];
      memory::desc md = RowMajorDesc({rows, len}), vec = RowMajorDesc({len});
      const bool bias = in.size() > 2;
      auto flags = dnnl::normalization_flags::use_scale | (bias ? dnnl::normalization_flags::use_shift : dnnl::normalization_flags::none);
      auto pd = dnnl::layer_normalization_forward::primitive_desc(
          {prop_kind::forward_inference, md, static_cast<float>(op_.Real("epsilon", 1e-5)), flags}, engine);
      prim_ = dnnl::layer_normalization_forward(pd);
      args_[DNNL_ARG_SRC] = InputMemory(in[0], md);
      args_[DNNL_ARG_SCALE] = InputMemory(in[1], vec);
      if (bias) args_[DNNL_ARG_SHIFT] = InputMemory(in[2], vec);
      if (pd.mean_desc().get_size() > 0) args_[DNNL_ARG_MEAN] = memory(pd.mean_desc(), engine);
      if (pd.variance_desc().get_size() > 0) args_[DNNL_ARG_VARIANCE] = memory(pd.variance_desc(), engine);
      if (pd.scratchpad_desc().get_size() > 0) args_[DNNL_ARG_SCRATCHPAD] = memory(pd.scratchpad_desc(), engine);
      args_[DNNL_ARG_DST] = OutputMemory(md);
    } else if (IsUnaryElementwiseOp(t)) {
      memory::desc md = RowMajorDesc(shape);
      algorithm a = t == "Relu" ? algorithm::eltwise_relu : t == "Sigmoid" ? algorithm::eltwise_logistic
                    : t == "Tanh" ? algorithm::eltwise_tanh
                    : op_.Text("approximate", "none") == "tanh" ? algorithm::eltwise_gelu_tanh : algorithm::eltwise_gelu_erf;
      prim_ = dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc({prop_kind::forward_inference, a, md, 0.f, 0.f}, engine));
      args_[DNNL_ARG_SRC] = InputMemory(in[0], md);
      args_[DNNL_ARG_DST] = OutputMemory(md);
    } else {
      const auto& out = op_.outputs[0].shape;
      const int first = BinaryFirst(op_);
      const std::vector<int64_t> other = PaddedTo(op_.inputs[1 - first].shape, out.size());
      auto [a_dims, b_dims] = BinaryDims(out, other);
      const auto [row, run, tiles] = ShortRunBroadcast(out, other);
      if (small_ && !run) {  // the primitive is still made: its memories carry the operands' handles
        auto [merged_a, merged_b] = MergedBroadcastDims(out, other);
        small_binary_.emplace(t, merged_a, merged_b);
        small_first_ = first;
      }
      if (run) a_dims = {Tensor::NumElements(out) / (row * tiles), row * tiles}, b_dims = {1, row * tiles};
      memory::desc a = RowMajorDesc(a_dims), b = RowMajorDesc(b_dims);
      auto pd = dnnl::binary::primitive_desc({OneDnnBinaryAlgorithm(t), a, b, a}, engine);
      if (!run && IsReferenceImplementation(pd)) {  // the same elements in merged dims may reach a JIT kernel
        std::tie(a_dims, b_dims) = MergedBroadcastDims(out, other);
        memory::desc ma = RowMajorDesc(a_dims), mb = RowMajorDesc(b_dims);
        auto merged = dnnl::binary::primitive_desc({OneDnnBinaryAlgorithm(t), ma, mb, ma}, engine);
        if (!IsReferenceImplementation(merged)) a = ma, b = mb, pd = merged;
      }
      prim_ = dnnl::binary(pd);
      args_[DNNL_ARG_SRC_0] = InputMemory(in[first], a);
      args_[DNNL_ARG_SRC_1] = InputMemory(in[1 - first], b);
      args_[DNNL_ARG_DST] = OutputMemory(a);
      short_run_ = run;
      if (small_binary_) {
        small_bound_[first] = static_cast<const float*>(args_.at(DNNL_ARG_SRC_0).get_data_handle());
        small_bound_[1 - first] = static_cast<const float*>(args_.at(DNNL_ARG_SRC_1).get_data_handle());
      }
      if (run) {  // src1 is the repeated row; the operand as given goes to short_run_operand_
        short_run_operand_ = InputMemory(in[1 - first], RowMajorDesc({row / run}));
        repeated_.resize(static_cast<size_t>(row * tiles));
        short_row_ = row;
        args_[DNNL_ARG_SRC_1] = memory(b, engine, repeated_.data());
        short_run_per_call_ = !in[1 - first];
        if (!short_run_per_call_) RepeatShortRuns();
      }
    }
  }

  OpSpec op_;
  dnnl::stream stream_;
  dnnl::primitive prim_;
  std::unordered_map<int, memory> args_;
  int64_t short_run_ = 0;            // a binary op's operand broadcast over this short run (ShortRunBroadcast); 0: none
  int64_t short_row_ = 0;            // the row's values before it is tiled
  bool short_run_per_call_ = false;  // that operand is given on each run (else repeated once, at bind)
  memory short_run_operand_;         // the operand as given
  std::vector<float> repeated_;      // the operand repeated over the run: src1's row
  std::optional<PlanarPool> own_pool_;  // a pool oneDNN would run on a scalar loop, on ours
  std::optional<BroadcastBinaryRows> small_binary_;  // a small binary op: on the calling thread, no primitive run
  int small_first_ = 0;                              // the input that is its full operand (BinaryFirst)
  const float* small_bound_[2] = {nullptr, nullptr}; // each input's buffer as bound (a constant's copy)
};

}  // namespace

PoolWindow WindowOf(const OpSpec& op) {
  const auto& in = op.inputs[0].shape;
  const auto& out = op.outputs[0].shape;
  const size_t spatial = in.size() - 2;
  PoolWindow w;
  const auto k = op.Ints("kernel_shape", {}), s = op.Ints("strides", {}), d = op.Ints("dilations", {}), p = op.Ints("pads", {});
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t ki = i < k.size() ? k[i] : 1, si = i < s.size() ? s[i] : 1, di = i < d.size() ? d[i] : 1;
    const int64_t pl = i < p.size() / 2 ? p[i] : 0, pr = i < p.size() / 2 ? p[i + spatial] : 0;
    const int64_t need_r = (out[i + 2] - 1) * si + (ki - 1) * di + 1 - in[i + 2] - pl;
    w.kernel.push_back(ki), w.strides.push_back(si), w.dilation.push_back(di - 1), w.pad_l.push_back(pl);
    w.pad_r.push_back(std::max<int64_t>(need_r, 0));
    w.padded_past_pads |= need_r > pr;
  }
  return w;
}

dnnl::pooling_v2_forward::primitive_desc OneDnnGlobalPoolingPrimitive(bool max, const dnnl::memory::desc& src, const dnnl::memory::desc& dst) {
  const memory::dims dims = src.dims(), window(dims.begin() + 2, dims.end()), ones(window.size(), 1), zeros(window.size(), 0);
  return dnnl::pooling_v2_forward::primitive_desc(
      {prop_kind::forward_inference, max ? algorithm::pooling_max : algorithm::pooling_avg_exclude_padding, src, dst, ones, window, zeros, zeros, zeros},
      OneDnnCpuEngine());
}

dnnl::pooling_v2_forward::primitive_desc OneDnnPoolingPrimitive(const OpSpec& op, const dnnl::memory::desc& src, const dnnl::memory::desc& dst) {
  if (IsGlobalPooling(op.op_type)) return OneDnnGlobalPoolingPrimitive(op.op_type == "GlobalMaxPool", src, dst);
  const PoolWindow w = WindowOf(op);
  const algorithm a = op.op_type == "MaxPool" ? algorithm::pooling_max
                      : op.Int("count_include_pad", 0) ? algorithm::pooling_avg_include_padding : algorithm::pooling_avg_exclude_padding;
  return dnnl::pooling_v2_forward::primitive_desc({prop_kind::forward_inference, a, src, dst, w.strides, w.kernel, w.dilation, w.pad_l, w.pad_r},
                                                  OneDnnCpuEngine());
}

std::vector<std::string> OneDnnVectorOps() {
  std::vector<std::string> types = {"Softmax", "LayerNormalization", "Relu", "Sigmoid", "Tanh", "Gelu",  // oneDNN has no plain erf
                                    "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"};
  const std::vector<std::string> binary = OpTypesOf(OpRole::kBinaryElementwise);
  types.insert(types.end(), binary.begin(), binary.end());
  return types;
}

bool OneDnnImplementsVectorOp(const std::string& t) {
  const auto types = OneDnnVectorOps();
  return std::find(types.begin(), types.end(), t) != types.end();
}

Status OneDnnSupportsVectorOp(const OpSpec& op) {
  const std::string& t = op.op_type;
  if (op.inputs.empty() || op.outputs.empty()) return Status::InvalidInput(op.name + ": needs an input and an output");
  const size_t rank = op.inputs[0].shape.size();
  if (rank == 0 || rank > 6) return Status::InvalidInput("impl.onednn: " + op.name + " has rank " + std::to_string(rank) + " (1 to 6 supported)");
  if (t == "Softmax" || t == "LayerNormalization") {
    const int64_t axis = NormalizedAxis(op, -1);
    if (axis < 0 || axis >= static_cast<int64_t>(rank)) return Status::InvalidInput("impl.onednn: " + op.name + ": axis out of range");
    if (t == "LayerNormalization" && op.inputs.size() < 2) return Status::InvalidInput("impl.onednn: " + op.name + " needs a scale input");
    if (t == "LayerNormalization" && op.outputs.size() > 1) return Status::InvalidInput("impl.onednn: " + op.name + ": mean and inverse deviation outputs are not supported");
    // oneDNN's softmax along the last axis writes a row with a NaN or a +inf finite (ONNX: NaN);
    // softmax.simd and softmax.rowwise run it.
    // The axes after the softmax axis all 1 is the last axis to oneDNN (its dense kernel).
    int64_t inner = 1;
    for (size_t a = static_cast<size_t>(axis) + 1; a < rank; ++a) inner *= op.inputs[0].shape[a];
    if (t == "Softmax" && inner == 1)
      return Status::InvalidInput("impl.onednn: " + op.name + ": Softmax along the last axis or before only 1s (oneDNN's loses a row's NaN)");
    return Status::Ok();
  }
  if (IsPooling(t)) {
    if (rank < 3 || rank > 5 || op.outputs[0].shape.size() != rank) return Status::InvalidInput("impl.onednn: " + op.name + ": 1-D to 3-D pooling over [N, C, ...]");
    if (op.outputs.size() > 1) return Status::InvalidInput("impl.onednn: " + op.name + ": MaxPool's indices output is not supported");
    if (IsGlobalPooling(t)) return Status::Ok();
    if (op.Text("auto_pad", "NOTSET") != "NOTSET") return Status::InvalidInput("impl.onednn: " + op.name + ": auto_pad " + op.Text("auto_pad", ""));
    if (op.Ints("kernel_shape", {}).size() != rank - 2) return Status::InvalidInput("impl.onednn: " + op.name + ": kernel_shape must name every spatial axis");
    const PoolWindow window = WindowOf(op);
    // ONNX counts ceil_mode's extra positions out of the average even with count_include_pad.
    if (t == "AveragePool" && op.Int("count_include_pad", 0) && window.padded_past_pads)
      return Status::InvalidInput("impl.onednn: " + op.name + ": count_include_pad with ceil_mode windows past the pads");
    for (int64_t v : window.pad_l)
      if (v < 0) return Status::InvalidInput("impl.onednn: " + op.name + ": negative pads");
    return Status::Ok();
  }
  if (IsBinaryElementwiseOp(t)) {
    if (op.inputs.size() != 2) return Status::InvalidInput("impl.onednn: " + op.name + " takes two inputs");
    if (op.inputs[1].shape.size() > op.outputs[0].shape.size() || op.inputs[0].shape.size() > op.outputs[0].shape.size())
      return Status::InvalidInput("impl.onednn: " + op.name + ": an input has more axes than the output");
    if (BinaryFirst(op) < 0) return Status::InvalidInput("impl.onednn: " + op.name + ": oneDNN broadcasts only the second input of " + t);
  }
  return Status::Ok();
}

std::unique_ptr<Kernel> OneDnnVectorKernel(const OpSpec& op) { return std::make_unique<VectorKernel>(op); }

}  // namespace tilebank::engine
