#include "engine/backends/onednn/winograd_conv_kernel.h"

#include <dnnl.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <utility>

#include "engine/backends/onednn/onednn_common.h"
#include "engine/backends/simd/winograd_transforms.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;
using Kind = WinogradEpilogueStep::Kind;

// The activations' layout of a kernel: a tag of oneDNN's (nChw16c, nChw8c, nhwc) and the channel
// blocks of source and destination it makes (nhwc: one block of all the channels).
struct ActivationLayout {
  tag t = tag::nChw16c;
  int64_t block = 16, out_block = 16;
};

ActivationLayout LayoutOf(tag t, const ConvProblem& p) {
  if (t == tag::nhwc) return {t, p.C, p.OC};
  const int64_t b = t == tag::nChw8c ? 8 : 16;
  return {t, b, b};
}

bool NhwcFits(const ConvProblem& p) { return p.C % 8 == 0 && p.OC % 8 == 0; }

// The own algorithms, smallest tile first: the policy's name and m.
constexpr std::pair<const char*, int> kOwnWinograd[] = {{"winograd_f2", 2}, {"winograd_f4", 4}, {"winograd_f6", 6}};

// The layout oneDNN's direct convolution of `p` hands its output over in here, of those the kernel
// takes; nChw16c when it picks none of them.
ActivationLayout LayoutOneDnnPicks(const ConvProblem& p) {
  try {
    const memory::dims dst{p.N, p.OC, p.OH, p.OW};
    const auto desc = ConvDesc(p, "direct", "blocked");  // alive while the descriptor is made
    const dnnl::convolution_forward::primitive_desc pd(desc, OneDnnCpuEngine());
    const std::string picked = HandoverLayoutOf(pd.dst_desc()).key;
    for (tag t : {tag::nChw16c, tag::nChw8c, tag::nhwc})
      if (picked == HandoverLayoutOf(memory::desc(dst, dt::f32, t)).key && (t != tag::nhwc || NhwcFits(p))) return LayoutOf(t, p);
  } catch (const dnnl::error&) {
  }
  return LayoutOf(tag::nChw16c, p);
}

// Memory a run writes and no later call reads (the transformed tiles, their products, the blocked
// copies of NCHW activations): one buffer per thread, shared by every own Winograd kernel it runs,
// grown to the largest; `floats` of it, 64-byte aligned. Valid until the thread's next call.
float* RunScratch(size_t floats) {
  thread_local std::vector<float> scratch;
  if (scratch.size() < floats + 16) scratch.resize(floats + 16);
  const uintptr_t at = reinterpret_cast<uintptr_t>(scratch.data());
  return scratch.data() + ((64 - at % 64) % 64) / sizeof(float);
}

size_t FloatsOf(const memory::desc& md) { return (md.get_size() / sizeof(float) + 15) / 16 * 16; }

class OwnWinogradKernel : public Kernel {
 public:
  // `layout`: the activations' layout inside (and handed over); `plain`: NCHW outside.
  OwnWinogradKernel(const ConvProblem& p, std::vector<int64_t> shape, int m, std::vector<WinogradEpilogueStep> steps, int residual_input,
                    ActivationLayout layout, bool plain)
      : p_(p), shape_(std::move(shape)), residual_input_(residual_input), plain_(plain), stream_(OneDnnCpuEngine()) {
    epilogue_.steps = std::move(steps);
    epilogue_.channels = p.OC;
    g_ = MakeWinogradGeometry(m, p.N, p.C, p.H, p.W, p.OC, p.OH, p.OW, p.ph, p.pw, layout.block, layout.out_block);
    src_md_ = memory::desc({p.N, p.C, p.H, p.W}, dt::f32, layout.t);
    dst_md_ = memory::desc({p.N, p.OC, p.OH, p.OW}, dt::f32, layout.t);
  }

  // The output may be placed over the residual: each output value reads its residual at the same
  // address just before writing it (the executor places it so only where their layouts are equal),
  // or the residual is reordered into the scratch first.
  int InPlaceInput() const override { return residual_input_; }

  // The measured path: as a model's neighbours hand them over, the source (and residual) are put in
  // the policy's layout here, not in Run (NCHW for layout "plain", else channel-blocked).
  Status Prepare(const std::vector<const Tensor*>& in) override {
    TB_RETURN_IF_ERROR(Setup(*in[1], p_.bias ? in[2] : nullptr));
    return CatchOneDnnErrors([&] {
      handed_src_ = handed_dst_ = handed_residual_ = false;
      BindScratch();
      if (plain_) {
        measured_src_ = in[0]->data;
        if (residual_input_ >= 0) measured_residual_ = in[residual_input_]->data;
      } else {
        const float* src = Reordered(plain_src_, in[0]->data.data(), src_reorder_, blocked_src_);
        measured_src_.assign(src, src + src_md_.get_size() / sizeof(float));
        if (residual_input_ >= 0) {
          const float* residual = Reordered(plain_residual_, in[residual_input_]->data.data(), residual_reorder_, blocked_residual_);
          measured_residual_.assign(residual, residual + dst_md_.get_size() / sizeof(float));
        }
      }
      measured_dst_.assign((plain_ ? static_cast<size_t>(Tensor::NumElements(shape_)) : dst_md_.get_size() / sizeof(float)), 0.f);
      handed_src_ = handed_dst_ = handed_residual_ = !plain_;
      return Status::Ok();
    });
  }
  Status Run() override {
    std::vector<const float*> in(std::max(3, residual_input_ + 1), nullptr);
    in[0] = measured_src_.data();
    if (residual_input_ >= 0) in[residual_input_] = measured_residual_.data();
    return RunDirect(in, measured_dst_.data());
  }
  Status Fetch(Tensor* out) override {
    return CatchOneDnnErrors([&] {
      *out = Tensor(shape_);
      if (plain_) {
        out->data = measured_dst_;
        return Status::Ok();
      }
      const memory::desc plain_md({p_.N, p_.OC, p_.OH, p_.OW}, dt::f32, tag::nchw);
      memory blocked(dst_md_, OneDnnCpuEngine(), measured_dst_.data()), plain(plain_md, OneDnnCpuEngine(), out->data.data());
      dnnl::reorder(blocked, plain).execute(stream_, blocked, plain);
      stream_.wait();
      return Status::Ok();
    });
  }

  // Weights and bias must be constants: they are transformed and packed here, once.
  Result<bool> BindDirect(const std::vector<std::vector<int64_t>>&, const std::vector<const Tensor*>& constants) override {
    if (constants.size() < 2 || !constants[1] || (p_.bias && (constants.size() < 3 || !constants[2]))) return false;
    TB_RETURN_IF_ERROR(Setup(*constants[1], p_.bias ? constants[2] : nullptr));
    if (residual_input_ >= 0 && static_cast<size_t>(residual_input_) < constants.size() && constants[residual_input_])
      residual_constant_ = constants[residual_input_]->data;
    return true;
  }
  HandoverLayout NativeLayout(int input) const override {
    if (plain_) return {};
    if (input == 0) return HandoverLayoutOf(src_md_);
    if (input == -1 || input == residual_input_) return HandoverLayoutOf(dst_md_);
    return {};
  }
  Status UseNativeLayouts(const std::vector<bool>& inputs, bool output) override {
    handed_src_ = !inputs.empty() && inputs[0];
    handed_dst_ = output;
    handed_residual_ = residual_input_ >= 0 && static_cast<size_t>(residual_input_) < inputs.size() && inputs[residual_input_];
    if (plain_ && (handed_src_ || handed_dst_ || handed_residual_)) return Status::InvalidInput("this convolution's policy keeps its activations in NCHW");
    return Status::Ok();
  }

  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    return CatchOneDnnErrors([&] {
      BindScratch();
      const float* src = in[0];
      if (!handed_src_) src = Reordered(plain_src_, src, src_reorder_, blocked_src_);
      const float* residual = nullptr;
      if (residual_input_ >= 0) {
        residual = in[residual_input_] ? in[residual_input_] : residual_constant_.data();
        if (!handed_residual_ || !in[residual_input_]) residual = Reordered(plain_residual_, residual, residual_reorder_, blocked_residual_);
      }
      float* dst = handed_dst_ ? out : static_cast<float*>(blocked_dst_.get_data_handle());
      float* v = static_cast<float*>(v_.get_data_handle());
      ParallelFor(g_.tiles(), 1, [&](int64_t begin, int64_t end) { WinogradInputTransform(g_, src, v, begin, end); });
      ExecuteAndWait(matmul_, stream_, {{DNNL_ARG_SRC, v_}, {DNNL_ARG_WEIGHTS, u_}, {DNNL_ARG_DST, products_}});
      epilogue_.residual = residual;
      const float* products = static_cast<const float*>(products_.get_data_handle());
      ParallelFor(g_.tiles(), 1, [&](int64_t begin, int64_t end) { WinogradOutputTransform(g_, products, epilogue_, dst, begin, end); });
      if (!handed_dst_) {
        plain_dst_.set_data_handle(out);
        dst_reorder_.execute(stream_, {{DNNL_ARG_FROM, blocked_dst_}, {DNNL_ARG_TO, plain_dst_}});
        stream_.wait();
      }
      return Status::Ok();
    });
  }

 private:
  // The transformed weights in the batched matmul's layout, the bias, the matmul and the buffers.
  Status Setup(const Tensor& weights, const Tensor* bias) {
    return CatchOneDnnErrors([&]() -> Status {
      const int64_t a2 = static_cast<int64_t>(g_.alpha()) * g_.alpha(), tiles = g_.tiles();
      const int64_t cp = g_.c_blocks * g_.block, ocp = g_.oc_blocks * g_.out_block;
      const std::vector<float> u = WinogradWeights(g_.m, weights.data.data(), p_.OC, p_.C, ocp, cp);
      const memory::desc v_md({a2, tiles, cp}, dt::f32, tag::abc), u_md({a2, cp, ocp}, dt::f32, tag::any), m_md({a2, tiles, ocp}, dt::f32, tag::abc);
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(v_md, u_md, m_md), OneDnnCpuEngine());
      TB_RETURN_IF_ERROR(RefuseReference(pd));
      matmul_ = dnnl::matmul(pd);
      memory user_u({{a2, cp, ocp}, dt::f32, tag::abc}, OneDnnCpuEngine(), const_cast<float*>(u.data()));
      u_ = memory(pd.weights_desc(), OneDnnCpuEngine());
      dnnl::reorder(user_u, u_).execute(stream_, user_u, u_);
      stream_.wait();
      v_ = memory(pd.src_desc(), OneDnnCpuEngine(), DNNL_MEMORY_NONE);
      products_ = memory(pd.dst_desc(), OneDnnCpuEngine(), DNNL_MEMORY_NONE);
      bias_.assign(static_cast<size_t>(ocp), 0.f);
      if (bias) std::copy(bias->data.begin(), bias->data.begin() + p_.OC, bias_.begin());
      epilogue_.bias = p_.bias ? bias_.data() : nullptr;
      const memory::desc plain_src({p_.N, p_.C, p_.H, p_.W}, dt::f32, tag::nchw), plain_dst({p_.N, p_.OC, p_.OH, p_.OW}, dt::f32, tag::nchw);
      plain_src_ = memory(plain_src, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
      plain_dst_ = memory(plain_dst, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
      blocked_src_ = memory(src_md_, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
      blocked_dst_ = memory(dst_md_, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
      src_reorder_ = dnnl::reorder(plain_src_, blocked_src_);
      dst_reorder_ = dnnl::reorder(blocked_dst_, plain_dst_);
      if (residual_input_ >= 0) {
        plain_residual_ = memory(plain_dst, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
        blocked_residual_ = memory(dst_md_, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
        residual_reorder_ = dnnl::reorder(plain_residual_, blocked_residual_);
      }
      return Status::Ok();
    });
  }

  // The run's buffers in this thread's scratch: the transformed tiles, their products, and those of
  // the blocked source, destination and residual this run reorders through (not handed over).
  void BindScratch() {
    const bool constant_residual = !residual_constant_.empty();
    memory* parts[] = {&v_, &products_, handed_src_ ? nullptr : &blocked_src_, handed_dst_ ? nullptr : &blocked_dst_,
                       residual_input_ >= 0 && (!handed_residual_ || constant_residual) ? &blocked_residual_ : nullptr};
    size_t total = 0;
    for (memory* m : parts)
      if (m) total += FloatsOf(m->get_desc());
    float* at = RunScratch(total);
    for (memory* m : parts)
      if (m) m->set_data_handle(at), at += FloatsOf(m->get_desc());
  }

  // `data` (NCHW) reordered into `blocked`; its data.
  const float* Reordered(memory& plain, const float* data, dnnl::reorder& reorder, memory& blocked) {
    plain.set_data_handle(const_cast<float*>(data));
    reorder.execute(stream_, {{DNNL_ARG_FROM, plain}, {DNNL_ARG_TO, blocked}});
    stream_.wait();
    return static_cast<const float*>(blocked.get_data_handle());
  }

  ConvProblem p_;
  std::vector<int64_t> shape_;
  int residual_input_ = -1;
  bool plain_ = false;
  dnnl::stream stream_;
  WinogradGeometry g_;
  WinogradEpilogue epilogue_;
  std::vector<float> bias_;
  memory::desc src_md_, dst_md_;  // the layouts inside (ActivationLayout)
  dnnl::matmul matmul_;
  memory u_, v_, products_;
  memory plain_src_, plain_dst_, plain_residual_, blocked_src_, blocked_dst_, blocked_residual_;
  dnnl::reorder src_reorder_, dst_reorder_, residual_reorder_;
  bool handed_src_ = false, handed_dst_ = false, handed_residual_ = false;
  std::vector<float> residual_constant_;  // a residual that is a constant
  std::vector<float> measured_src_, measured_residual_, measured_dst_;  // the measured path (Prepare, Run, Fetch)
};

}  // namespace

int OwnWinogradTile(const std::string& algo) {
  for (const auto& [name, m] : kOwnWinograd)
    if (algo == name) return m;
  return 0;
}

std::vector<std::pair<std::string, std::string>> OwnWinogradOffers(const ConvProblem& p) {
  std::vector<std::pair<std::string, std::string>> offers;
  if (!OwnWinogradRefuses(p).empty()) return offers;
  for (const auto& [algo, m] : kOwnWinograd)
    for (const char* layout : {"blocked", "plain", "nhwc"})
      if (std::string(layout) != "nhwc" || NhwcFits(p)) offers.emplace_back(algo, layout);
  return offers;
}

std::string OwnWinogradRefuses(const ConvProblem& p) {
  if (p.KH != 3 || p.KW != 3) return "the own Winograd runs 3x3 convolutions only";
  if (p.sh != 1 || p.sw != 1) return "the own Winograd runs stride-1 convolutions only";
  if (p.dh != 1 || p.dw != 1) return "the own Winograd runs undilated convolutions only";
  if (p.G != 1) return "the own Winograd runs ungrouped convolutions only";
  return "";
}

Result<std::unique_ptr<Kernel>> OwnWinogradConvKernel(const ConvProblem& p, const std::vector<int64_t>& out_shape, int m,
                                                      const std::vector<ChainStep>& post_ops, const std::string& layout) {
  static const std::map<std::string, Kind> kActivations = {{"Relu", Kind::kRelu},       {"LeakyRelu", Kind::kLeakyRelu}, {"Clip", Kind::kClip},
                                                           {"Sigmoid", Kind::kSigmoid}, {"Swish", Kind::kSwish},         {"HardSwish", Kind::kHardSwish},
                                                           {"Tanh", Kind::kTanh},       {"GeluTanh", Kind::kGeluTanh}};
  if (std::string why = OwnWinogradRefuses(p); !why.empty()) return Status::InvalidInput(why);
  if (!WinogradTileKnown(m)) return Status::InvalidInput("the own Winograd has no F(" + std::to_string(m) + ", 3)");
  if (layout != "auto" && layout != "blocked" && layout != "plain" && layout != "nhwc")
    return Status::InvalidInput("the own Winograd keeps its activations channel-blocked, in NHWC or NCHW, not '" + layout + "'");
  if (layout == "nhwc" && !NhwcFits(p)) return Status::InvalidInput("the own Winograd takes NHWC where the channel counts are multiples of 8");
  std::vector<WinogradEpilogueStep> steps;
  int residual_input = -1, operand_input = p.bias ? 3 : 2;
  for (const ChainStep& op : post_ops) {
    WinogradEpilogueStep s;
    if (op.has_operand) {
      if (op.op_type != "Add" || op.operand_shape != out_shape || residual_input >= 0)
        return Status::InvalidInput("the own Winograd fuses one Add of a tensor of the output's shape, not " + op.op_type + " of another");
      s.kind = Kind::kAddResidual;
      residual_input = operand_input++;
    } else if (const auto it = kActivations.find(op.op_type); it != kActivations.end()) {
      s.kind = it->second, s.alpha = op.alpha, s.beta = op.beta;  // LeakyRelu's slope, Clip's bounds
    } else {
      return Status::InvalidInput("the own Winograd fuses Relu, LeakyRelu, Clip, Sigmoid, Swish, HardSwish, Tanh, GeluTanh and a residual Add, not " +
                                  op.op_type);
    }
    steps.push_back(s);
  }
  return CatchOneDnnErrors([&]() -> Result<std::unique_ptr<Kernel>> {
    // "auto": as oneDNN's direct convolution of the instance hands over here; "plain": blocked inside.
    const ActivationLayout inside = layout == "auto" ? LayoutOneDnnPicks(p)
                                    : layout == "nhwc" ? LayoutOf(tag::nhwc, p)
                                                       : LayoutOf(LayoutOneDnnPicks(p).t == tag::nChw8c ? tag::nChw8c : tag::nChw16c, p);
    return std::unique_ptr<Kernel>(new OwnWinogradKernel(p, out_shape, m, std::move(steps), residual_input, inside, layout == "plain"));
  });
}

}  // namespace tilebank::engine
