// impl.onednn: MatMul, BatchMatMul, Gemm (oneDNN matmul) and Conv (oneDNN convolution with the
// layouts it prefers: format_tag::any, source and weights reordered before timing, as a
// deployed oneDNN graph keeps them); vector operators in engine/templates/onednn_vector_ops.h.
#include <dnnl.hpp>

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
    const memory::dim B = p_.batch, M = p_.M, N = p_.N, K = p_.K;
    // An operand without the batch dimension has batch 1 there: oneDNN broadcasts it. (A batch
    // stride of 0 instead sends oneDNN to its reference kernel, hundreds of times slower.)
    memory::desc a_md({p_.a_batched ? B : 1, M, K}, dt::f32, p_.trans_a ? memory::dims{M * K, 1, M} : memory::dims{M * K, K, 1});
    memory::desc b_md({p_.b_batched ? B : 1, K, N}, dt::f32, p_.trans_b ? memory::dims{K * N, 1, K} : memory::dims{K * N, N, 1});
    memory::desc c_md({B, M, N}, dt::f32, tag::abc);
    dnnl::primitive_attr attr;
    if (p_.alpha != 1.f) attr.set_output_scales(0, {p_.alpha});
    memory::desc bias_md;
    if (p_.bias != BiasShape::kNone && p_.beta != 0.f) {
      memory::dims bd = p_.bias == BiasShape::kScalar ? memory::dims{1, 1, 1} : p_.bias == BiasShape::kRow ? memory::dims{1, 1, N}
                        : p_.bias == BiasShape::kColumn ? memory::dims{1, M, 1} : memory::dims{1, M, N};
      bias_md = memory::desc(bd, dt::f32, tag::abc);
      // The library adds bias after scaling by alpha: fold beta (and undo alpha) into the constant.
      Tensor scaled = *in[2];
      for (auto& v : scaled.data) v *= p_.beta / p_.alpha;
      bias_ = MemoryFromTensor(scaled, bias_md);
    }
    dnnl::matmul::desc desc = bias_md ? dnnl::matmul::desc(a_md, b_md, bias_md, c_md) : dnnl::matmul::desc(a_md, b_md, c_md);
    prim_ = dnnl::matmul(dnnl::matmul::primitive_desc(desc, attr, OneDnnCpuEngine()));
    a_ = MemoryFromTensor(*in[0], a_md);
    b_ = MemoryFromTensor(*in[1], b_md);
    c_ = memory(c_md, OneDnnCpuEngine());
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

 private:
  GemmProblem p_;
  std::vector<int64_t> shape_;
  dnnl::stream stream_;
  dnnl::matmul prim_;
  memory a_, b_, c_, bias_;
};

class ConvKernel : public Kernel {
 public:
  ConvKernel(ConvProblem p, std::vector<int64_t> out_shape) : p_(p), shape_(std::move(out_shape)), stream_(OneDnnCpuEngine()) {}
  Status Prepare(const std::vector<const Tensor*>& in) override {
    const auto& p = p_;
    memory::dims src{p.N, p.C, p.H, p.W}, dst{p.N, p.OC, p.OH, p.OW};
    memory::dims wts = p.G == 1 ? memory::dims{p.OC, p.Cg, p.KH, p.KW} : memory::dims{p.G, p.OCg, p.Cg, p.KH, p.KW};
    memory::desc src_any(src, dt::f32, tag::any), wts_any(wts, dt::f32, tag::any), dst_any(dst, dt::f32, tag::any);
    memory::desc bias_md({p.OC}, dt::f32, tag::a);
    auto desc = p.bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_any, wts_any,
                                                         bias_md, dst_any, {p.sh, p.sw}, {p.dh - 1, p.dw - 1}, {p.ph, p.pw}, {p.ph, p.pw})
                       : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_any, wts_any,
                                                         dst_any, {p.sh, p.sw}, {p.dh - 1, p.dw - 1}, {p.ph, p.pw}, {p.ph, p.pw});
    pd_ = dnnl::convolution_forward::primitive_desc(desc, OneDnnCpuEngine());
    prim_ = dnnl::convolution_forward(pd_);
    // Source and weights into the primitive's layouts (not timed).
    memory user_src = MemoryFromTensor(*in[0], memory::desc(src, dt::f32, tag::nchw));
    memory user_wts = MemoryFromTensor(*in[1], memory::desc(wts, dt::f32, p.G == 1 ? tag::oihw : tag::goihw));
    src_ = memory(pd_.src_desc(), OneDnnCpuEngine());
    wts_ = memory(pd_.weights_desc(), OneDnnCpuEngine());
    dnnl::reorder(user_src, src_).execute(stream_, user_src, src_);
    dnnl::reorder(user_wts, wts_).execute(stream_, user_wts, wts_);
    if (p.bias) bias_ = MemoryFromTensor(*in[2], bias_md);
    dst_ = memory(pd_.dst_desc(), OneDnnCpuEngine());
    stream_.wait();
    return Status::Ok();
  }
  Status Run() override {
    Execute(prim_, stream_, src_, wts_, dst_, bias_);
    return Status::Ok();
  }
  Status Fetch(Tensor* out) override {
    memory user_dst(memory::desc({p_.N, p_.OC, p_.OH, p_.OW}, dt::f32, tag::nchw), OneDnnCpuEngine());
    dnnl::reorder(dst_, user_dst).execute(stream_, dst_, user_dst);
    stream_.wait();
    *out = TensorFromMemory(user_dst, shape_);
    return Status::Ok();
  }

 private:
  ConvProblem p_;
  std::vector<int64_t> shape_;
  dnnl::stream stream_;
  dnnl::convolution_forward::primitive_desc pd_;
  dnnl::convolution_forward prim_;
  memory src_, wts_, dst_, bias_;
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
    try {
      if (OneDnnImplementsVectorOp(op.op_type)) return OneDnnVectorKernel(op);
      if (op.op_type == "Conv") return std::unique_ptr<Kernel>(new ConvKernel(AnalyzeConv(op).value(), op.outputs[0].shape));
      return std::unique_ptr<Kernel>(new MatMulKernel(AnalyzeGemm(op).value(), op.outputs[0].shape));
    } catch (const dnnl::error& e) {
      return Status::InvalidInput(std::string("oneDNN: ") + e.what());
    }
  }
};

}  // namespace

const OpTemplate& OneDnnImpl() {
  static const class OneDnnImpl t;
  return t;
}

}  // namespace tilebank::engine
