// impl.onednn: MatMul, BatchMatMul, Gemm (oneDNN matmul) and Conv (oneDNN convolution with the
// layouts it prefers: format_tag::any, source and weights reordered before timing, as a
// deployed oneDNN graph keeps them); vector operators in engine/templates/onednn_vector_ops.h.
#include <dnnl.hpp>

#include <algorithm>
#include <chrono>

#include "engine/ops/conv_problem.h"
#include "engine/ops/gemm_problem.h"
#include "engine/templates/onednn_common.h"
#include "engine/templates/onednn_vector_ops.h"
#include "engine/templates/templates.h"

namespace tilebank::engine {

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

// One inference call: source, weights and destination, plus the bias when there is one.
void Execute(const dnnl::primitive& prim, dnnl::stream& stream, const memory& src, const memory& weights, const memory& dst,
             const memory& bias) {
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
  if (bias) args[DNNL_ARG_BIAS] = bias;
  ExecuteAndWait(prim, stream, args);
}

class MatMulKernel : public Kernel {
 public:
  MatMulKernel(GemmProblem p, std::vector<int64_t> out_shape) : p_(p), shape_(std::move(out_shape)), stream_(OneDnnCpuEngine()) {}
  Status Prepare(const std::vector<const Tensor*>& in) override {
    CreatePrimitive(in.size() > 2 ? in[2] : nullptr);
    a_ = MemoryFromTensor(*in[0], a_md_);
    b_ = MemoryFromTensor(*in[1], b_md_);
    c_ = memory(c_md_, OneDnnCpuEngine());
    return Status::Ok();
  }
  Status Run() override {
    Execute(prim_, stream_, a_, b_, c_, bias_);
    return Status::Ok();
  }
  Status Fetch(Tensor* out) override {
    *out = TensorFromMemory(c_, shape_);
    return Status::Ok();
  }
  // A bias that is not constant (a Gemm's C computed by the model) takes the copying path.
  Result<bool> BindDirect(const std::vector<std::vector<int64_t>>& shapes, const std::vector<const Tensor*>& constants) override {
    return CatchOneDnnErrors([&] { return Bind(shapes, constants); });
  }
  Result<bool> Bind(const std::vector<std::vector<int64_t>>&, const std::vector<const Tensor*>& constants) {
    const Tensor* bias = constants.size() > 2 ? constants[2] : nullptr;
    if (p_.bias != BiasShape::kNone && p_.beta != 0.f && !bias) return false;
    CreatePrimitive(bias);
    a_ = constants[0] ? MemoryFromTensor(*constants[0], a_md_) : memory(a_md_, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
    b_ = constants.size() > 1 && constants[1] ? MemoryFromTensor(*constants[1], b_md_) : memory(b_md_, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
    c_ = memory(c_md_, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
    direct_a_ = !constants[0];
    direct_b_ = !(constants.size() > 1 && constants[1]);
    return true;
  }
  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    if (direct_a_) a_.set_data_handle(const_cast<float*>(in[0]));
    if (direct_b_) b_.set_data_handle(const_cast<float*>(in[1]));
    c_.set_data_handle(out);
    Execute(prim_, stream_, a_, b_, c_, bias_);
    return Status::Ok();
  }

 private:
  void CreatePrimitive(const Tensor* bias) {
    const memory::dim B = p_.batch, M = p_.M, N = p_.N, K = p_.K;
    // An operand without the batch dimension has batch 1 there: oneDNN broadcasts it. (A batch
    // stride of 0 instead sends oneDNN to its reference kernel, hundreds of times slower.)
    a_md_ = memory::desc({p_.a_batched ? B : 1, M, K}, dt::f32, p_.trans_a ? memory::dims{M * K, 1, M} : memory::dims{M * K, K, 1});
    b_md_ = memory::desc({p_.b_batched ? B : 1, K, N}, dt::f32, p_.trans_b ? memory::dims{K * N, 1, K} : memory::dims{K * N, N, 1});
    c_md_ = memory::desc({B, M, N}, dt::f32, tag::abc);
    dnnl::primitive_attr attr;
    if (p_.alpha != 1.f) attr.set_output_scales(0, {p_.alpha});
    memory::desc bias_md;
    if (p_.bias != BiasShape::kNone && p_.beta != 0.f) {
      memory::dims bd = p_.bias == BiasShape::kScalar ? memory::dims{1, 1, 1} : p_.bias == BiasShape::kRow ? memory::dims{1, 1, N}
                        : p_.bias == BiasShape::kColumn ? memory::dims{1, M, 1} : memory::dims{1, M, N};
      bias_md = memory::desc(bd, dt::f32, tag::abc);
      // The library adds bias after scaling by alpha: fold beta (and undo alpha) into the constant.
      Tensor scaled = *bias;
      for (auto& v : scaled.data) v *= p_.beta / p_.alpha;
      bias_ = MemoryFromTensor(scaled, bias_md);
    }
    dnnl::matmul::desc desc = bias_md ? dnnl::matmul::desc(a_md_, b_md_, bias_md, c_md_) : dnnl::matmul::desc(a_md_, b_md_, c_md_);
    prim_ = dnnl::matmul(dnnl::matmul::primitive_desc(desc, attr, OneDnnCpuEngine()));
  }

  GemmProblem p_;
  std::vector<int64_t> shape_;
  dnnl::stream stream_;
  dnnl::matmul prim_;
  memory::desc a_md_, b_md_, c_md_;
  memory a_, b_, c_, bias_;
  bool direct_a_ = false, direct_b_ = false;
};

class ConvKernel : public Kernel {
 public:
  ConvKernel(ConvProblem p, std::vector<int64_t> out_shape) : p_(p), shape_(std::move(out_shape)), stream_(OneDnnCpuEngine()) {}
  Status Prepare(const std::vector<const Tensor*>& in) override {
    CreatePrimitive(*in[1], in.size() > 2 ? in[2] : nullptr);
    memory user_src = MemoryFromTensor(*in[0], user_src_md_);
    src_ = memory(pd_.src_desc(), OneDnnCpuEngine());
    dnnl::reorder(user_src, src_).execute(stream_, user_src, src_);
    dst_ = memory(pd_.dst_desc(), OneDnnCpuEngine());
    stream_.wait();
    return Status::Ok();
  }
  Status Run() override {
    Execute(prim_, stream_, src_, wts_, dst_, bias_);
    return Status::Ok();
  }
  Status Fetch(Tensor* out) override {
    memory user_dst(user_dst_md_, OneDnnCpuEngine());
    dnnl::reorder(dst_, user_dst).execute(stream_, dst_, user_dst);
    stream_.wait();
    *out = TensorFromMemory(user_dst, shape_);
    return Status::Ok();
  }
  // Weights (and bias) must be constants: they go into oneDNN's layout once. Source and
  // destination are the caller's NCHW memory. The primitive either works in the layouts it prefers
  // (blocked), with a reorder on each side, or in NCHW itself; both are timed here, at load, and
  // the faster is kept: which wins depends on the shape (MobileNetV2's 1x1 convolutions lose more
  // to the reorders than the blocked kernel gains, ResNet's 3x3 ones do not).
  Result<bool> BindDirect(const std::vector<std::vector<int64_t>>& shapes, const std::vector<const Tensor*>& constants) override {
    return CatchOneDnnErrors([&] { return Bind(shapes, constants); });
  }
  Result<bool> Bind(const std::vector<std::vector<int64_t>>&, const std::vector<const Tensor*>& constants) {
    if (constants.size() < 2 || !constants[1] || (p_.bias && (constants.size() < 3 || !constants[2]))) return false;
    std::vector<float> src(static_cast<size_t>(p_.N) * p_.C * p_.H * p_.W, 0.f), dst(static_cast<size_t>(p_.N) * p_.OC * p_.OH * p_.OW);
    double best = 0;
    bool best_plain = false;
    for (bool plain : {false, true}) {
      plain_activations_ = plain;
      BindLayouts(*constants[1], p_.bias ? constants[2] : nullptr);
      double fastest = 1e30;
      for (int i = 0; i < 4; ++i) {
        const auto start = std::chrono::steady_clock::now();
        RunDirect({src.data()}, dst.data());
        if (i > 0) fastest = std::min(fastest, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
      if (!plain || fastest < best) {
        best = fastest;
        best_plain = plain;
      }
    }
    if (!best_plain) {
      plain_activations_ = false;
      BindLayouts(*constants[1], p_.bias ? constants[2] : nullptr);
    }
    return true;
  }
  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    user_src_.set_data_handle(const_cast<float*>(in[0]));
    user_dst_.set_data_handle(out);
    if (reorder_src_) src_reorder_.execute(stream_, {{DNNL_ARG_FROM, user_src_}, {DNNL_ARG_TO, src_}});
    Execute(prim_, stream_, src_, wts_, dst_, bias_);
    if (reorder_dst_) {
      dst_reorder_.execute(stream_, {{DNNL_ARG_FROM, dst_}, {DNNL_ARG_TO, user_dst_}});
      stream_.wait();
    }
    return Status::Ok();
  }

 private:
  // The direct path's primitive, memories and reorder primitives for the current layout choice.
  void BindLayouts(const Tensor& weights, const Tensor* bias) {
    CreatePrimitive(weights, bias);
    user_src_ = memory(user_src_md_, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
    user_dst_ = memory(user_dst_md_, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
    reorder_src_ = pd_.src_desc() != user_src_md_;
    reorder_dst_ = pd_.dst_desc() != user_dst_md_;
    src_ = reorder_src_ ? memory(pd_.src_desc(), OneDnnCpuEngine()) : user_src_;
    dst_ = reorder_dst_ ? memory(pd_.dst_desc(), OneDnnCpuEngine()) : user_dst_;
    if (reorder_src_) src_reorder_ = dnnl::reorder(user_src_, src_);
    if (reorder_dst_) dst_reorder_ = dnnl::reorder(dst_, user_dst_);
  }

  // The primitive for layouts of its choosing (or NCHW activations), with the weights (and bias) in them.
  void CreatePrimitive(const Tensor& weights, const Tensor* bias) {
    const auto& p = p_;
    memory::dims src{p.N, p.C, p.H, p.W}, dst{p.N, p.OC, p.OH, p.OW};
    memory::dims wts = p.G == 1 ? memory::dims{p.OC, p.Cg, p.KH, p.KW} : memory::dims{p.G, p.OCg, p.Cg, p.KH, p.KW};
    const tag activations = plain_activations_ ? tag::nchw : tag::any;
    memory::desc src_any(src, dt::f32, activations), wts_any(wts, dt::f32, tag::any), dst_any(dst, dt::f32, activations);
    memory::desc bias_md({p.OC}, dt::f32, tag::a);
    auto desc = p.bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_any, wts_any,
                                                         bias_md, dst_any, {p.sh, p.sw}, {p.dh - 1, p.dw - 1}, {p.ph, p.pw}, {p.ph, p.pw})
                       : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_any, wts_any,
                                                         dst_any, {p.sh, p.sw}, {p.dh - 1, p.dw - 1}, {p.ph, p.pw}, {p.ph, p.pw});
    pd_ = dnnl::convolution_forward::primitive_desc(desc, OneDnnCpuEngine());
    prim_ = dnnl::convolution_forward(pd_);
    // Weights into the primitive's layout (not timed; in a model, once at load).
    user_src_md_ = memory::desc(src, dt::f32, tag::nchw);
    user_dst_md_ = memory::desc(dst, dt::f32, tag::nchw);
    memory user_wts = MemoryFromTensor(weights, memory::desc(wts, dt::f32, p.G == 1 ? tag::oihw : tag::goihw));
    wts_ = memory(pd_.weights_desc(), OneDnnCpuEngine());
    dnnl::reorder(user_wts, wts_).execute(stream_, user_wts, wts_);
    if (bias) bias_ = MemoryFromTensor(*bias, bias_md);
    stream_.wait();
  }

  ConvProblem p_;
  std::vector<int64_t> shape_;
  dnnl::stream stream_;
  dnnl::convolution_forward::primitive_desc pd_;
  dnnl::convolution_forward prim_;
  memory::desc user_src_md_, user_dst_md_;
  memory src_, wts_, dst_, bias_, user_src_, user_dst_;
  bool reorder_src_ = false, reorder_dst_ = false;
  bool plain_activations_ = false;  // direct path: NCHW source and destination
  dnnl::reorder src_reorder_, dst_reorder_;
};

class OneDnnImpl : public OpTemplate {
 public:
  const char* id() const override { return "impl.onednn"; }
  std::vector<std::string> OpTypes() const override {
    std::vector<std::string> types = CubeOps(), vector = OneDnnVectorOps();
    types.insert(types.end(), vector.begin(), vector.end());
    return types;
  }
  Status SupportsInstance(const OpSpec& op) const override {
    if (OneDnnImplementsVectorOp(op.op_type)) return OneDnnSupportsVectorOp(op);
    if (op.op_type == "Conv") {
      auto p = AnalyzeConv(op);
      return p.ok() ? Status::Ok() : p.status();
    }
    auto p = AnalyzeGemm(op);
    if (!p.ok()) return p.status();
    if (p->alpha == 0.f) return Status::InvalidInput(std::string(id()) + ": alpha 0 is not supported");
    return Status::Ok();
  }
  SearchSpace Space(const OpSpec&) const override { return {}; }
  Policy DefaultPolicy(const OpSpec&) const override { return MakePolicy({{"library", std::string("onednn")}}); }
  Result<std::unique_ptr<Kernel>> Build(const OpSpec& op, const Policy&) const override {
    return CatchOneDnnErrors([&]() -> Result<std::unique_ptr<Kernel>> {
      if (OneDnnImplementsVectorOp(op.op_type)) return OneDnnVectorKernel(op);
      if (op.op_type == "Conv") return std::unique_ptr<Kernel>(new ConvKernel(AnalyzeConv(op).value(), op.outputs[0].shape));
      return std::unique_ptr<Kernel>(new MatMulKernel(AnalyzeGemm(op).value(), op.outputs[0].shape));
    });
  }
};

}  // namespace

const OpTemplate& OneDnnImpl() {
  static const class OneDnnImpl t;
  return t;
}

}  // namespace tilebank::engine
