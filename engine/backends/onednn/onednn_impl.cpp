// impl.onednn: MatMul, BatchMatMul, Gemm (oneDNN matmul) and Conv (oneDNN convolution with the
// layouts it prefers: format_tag::any, source and weights reordered before timing, as a
// deployed oneDNN graph keeps them); vector operators in engine/backends/onednn/onednn_vector_ops.h.
// The cube kernels also run SGAT's fused subgraphs: post-ops (engine/backends/onednn/onednn_post_ops.h).
// Its search space for a cube op is what oneDNN offers for the instance on this host
// (OfferedFor): every implementation its primitive descriptor walks to (impl_info_str, reference
// kernels left out), the convolution algorithm (direct, Winograd where this oneDNN has it, and the
// own Winograd F(2,3), F(4,3), F(6,3) of engine/backends/onednn/winograd_conv_kernel.h, the own
// depthwise convolution of engine/backends/onednn/depthwise_conv_kernel.h) and
// the activations' layout (oneDNN's preferred one, plain NCHW, NHWC, the first two timed at load, or
// "convert": oneDNN's preferred one inside, whatever the neighbours hand over outside, reordered).
#include <dnnl.hpp>

#include <algorithm>
#include <cstring>
#include <cfloat>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>


#include "engine/backends/library_impls.h"
#include "engine/core/run_queue_watch.h"
#include "engine/backends/onednn/call_scratch.h"
#include "engine/backends/onednn/caller_scratchpad.h"
#include "engine/core/chain_step.h"
#include "engine/core/conv_problem.h"
#include "engine/core/gemm_problem.h"
#include "engine/core/sample_stats.h"
#include "engine/backends/measured_choice_cache.h"
#include "engine/backends/onednn/depthwise_conv_kernel.h"
#include "engine/backends/onednn/direct_conv1d_kernel.h"
#include "engine/backends/onednn/gemm_weights_placement.h"
#include "engine/backends/onednn/packed_gemm_conv_kernel.h"
#include "engine/backends/onednn/packed_gemm_kernel.h"
#include "engine/backends/onednn/shared_weights.h"
#include "engine/backends/onednn/onednn_common.h"
#include "engine/backends/onednn/onednn_post_op_chain.h"
#include "engine/backends/onednn/onednn_vector_ops.h"
#include "engine/backends/onednn/vector_product_conv_kernel.h"
#include "engine/backends/onednn/winograd_conv_kernel.h"
#include "engine/backends/simd/activation_pass.h"
#include "engine/core/op_semantics.h"
#include "engine/core/precision_mode.h"
#include "engine/backends/halide/templates.h"

namespace tilebank::engine {

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

// The op types of a fused chain, for OneDnnIdentity.
std::vector<std::string> StepNames(const PostOpChain& post) {
  std::vector<std::string> names;
  for (const ChainStep& op : post.ops()) names.push_back(op.op_type);
  return names;
}

// One inference call: source, weights and destination, plus the bias, post-op operands and the
// primitive's scratchpad (made with UseCallerScratchpad: it may run on another thread than made it).
void Execute(const dnnl::primitive& prim, dnnl::stream& stream, const memory& src, const memory& weights, const memory& dst,
             const memory& bias, const PostOpChain& post, CallerScratchpad& scratchpad) {
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
  if (bias) args[DNNL_ARG_BIAS] = bias;
  post.AddArgs(args);
  scratchpad.AddTo(&args);
  ExecuteAndWait(prim, stream, args);
}

// Whether oneDNN's kernel for an ordinary (ungrouped) convolution works in NHWC on this host
// (brgconv, AVX-512) rather than in a blocked layout (nChw8c on AVX2): probed once, on a 3x3
// convolution of 64 channels at 28x28.
bool UngroupedConvolutionsInNhwc() {
  static const bool nhwc = [] {
    try {
      using tag = dnnl::memory::format_tag;
      const auto f32 = dnnl::memory::data_type::f32;
      const dnnl::memory::desc src({1, 64, 28, 28}, f32, tag::any), wts({64, 64, 3, 3}, f32, tag::any), dst({1, 64, 28, 28}, f32, tag::any);
      const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, wts, dst, {1, 1}, {1, 1},
                                                 {1, 1});
      const dnnl::convolution_forward::primitive_desc pd(desc, OneDnnCpuEngine());
      const dnnl::memory::desc chosen = pd.src_desc();
      return chosen.data.format_desc.blocking.inner_nblks == 0 && chosen == dnnl::memory::desc({1, 64, 28, 28}, f32, tag::nhwc);
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return nhwc;
}

// The knobs of a cube op's policy. "default": oneDNN's first implementation; layout "auto": both
// layouts timed when the kernel is bound, the faster kept; precision "bf16": source and weights in
// bfloat16, the float32 source converted on each run (engine/core/precision_mode.h).
struct CubeChoice {
  std::string impl = "default", algo = "direct", layout = "auto", precision = "fp32";
  bool bf16() const { return precision == "bf16"; }
  static CubeChoice Of(const Policy& policy) {
    return {TextKnob(policy, "impl", "default"), TextKnob(policy, "algo", "direct"), TextKnob(policy, "layout", "auto"), PolicyPrecision(policy)};
  }
};

// Moves `pd` to the implementation named `impl` ("default": stays at oneDNN's first); throws
// dnnl::error when oneDNN offers none of that name for the primitive.
template <typename PrimitiveDesc>
void SelectImplementation(PrimitiveDesc& pd, const std::string& impl) {
  if (impl == "default") return;
  do {
    if (pd.impl_info_str() == impl) return;
  } while (pd.next_impl());
  throw dnnl::error(dnnl_unimplemented, ("oneDNN offers no implementation '" + impl + "' for this primitive here").c_str());
}

// The names of the implementations oneDNN offers for `pd`, in its order, reference kernels left out;
// `pd` ends past its last. The op descriptor `pd` was made from must still be alive.
template <typename PrimitiveDesc>
std::vector<std::string> OfferedImplementations(PrimitiveDesc& pd) {
  std::vector<std::string> names;
  do {
    const std::string name = pd.impl_info_str();
    if (name.rfind("ref", 0) != 0 && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  } while (pd.next_impl());
  return names;
}

class MatMulKernel : public Kernel {
 public:
  MatMulKernel(GemmProblem p, std::vector<int64_t> out_shape, size_t anchor_inputs, std::vector<ChainStep> post_ops = {}, CubeChoice choice = {})
      : p_(p), shape_(std::move(out_shape)), stream_(OneDnnCpuEngine()), post_(std::move(post_ops), anchor_inputs, shape_), choice_(std::move(choice)) {}
  // The implementations oneDNN offers for this product as a model binds it (a B without a batch
  // axis prepacked), in its order; `bias`: the op's bias when it has one (its values do not matter).
  // `first`, when given, receives the one oneDNN picks by default (a reference kernel, maybe).
  std::vector<std::string> Offered(const Tensor* bias, std::string* first = nullptr) {
    prepack_b_ = !p_.b_batched;
    std::vector<std::string> names;
    CreatePrimitive(bias, &names, first);
    return names;
  }
  int InPlaceInput() const override { return post_.sum_input(); }
  // The measured path (tuning): a B without a batch axis is taken for weights, prepacked as a
  // model's constant weights are (Bind), so that a tuning job compares oneDNN as models run it.
  Status Prepare(const std::vector<const Tensor*>& in) override {
    return CatchOneDnnErrors([&] {
      prepack_b_ = !p_.b_batched;
      CreatePrimitive(bias_input() < in.size() ? in[bias_input()] : nullptr);
      a_ = MemoryFromTensor(*in[0], user_a_md_);
      b_ = PlacedWeights(*in[1]);
      c_ = memory(c_md_, OneDnnCpuEngine());
      post_.Bind(in);
      return Status::Ok();
    });
  }
  Status Run() override {
    post_.LoadResidual(c_.get_data_handle(), c_md_.get_size());
    Execute(prim_, stream_, LoweredA(), b_, c_, bias_, post_, scratchpad_);
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
    const Tensor* bias = bias_input() < constants.size() ? constants[bias_input()] : nullptr;
    if (p_.bias != BiasShape::kNone && p_.beta != 0.f && !bias) return false;
    // Constant weights go once into the layout the primitive picks (prepacked): read row-major,
    // oneDNN's brgemm copies B into its blocks on every call (BERT's 768x3072 product: 5.1 ms
    // against 3.0 ms prepacked, side by side on AVX-512).
    prepack_b_ = constants.size() > 1 && constants[1];
    CreatePrimitive(bias);
    post_.Bind(constants);
    a_ = constants[0] ? MemoryFromTensor(*constants[0], user_a_md_) : memory(user_a_md_, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
    b_ = prepack_b_ ? PlacedWeights(*constants[1]) : memory(b_md_, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
    c_ = memory(c_md_, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
    direct_a_ = !constants[0];
    direct_b_ = !(constants.size() > 1 && constants[1]);
    return true;
  }
  std::string Identity() const override {
    if (!prim_) return "";
    const std::string kind = placed_b_.past_alignment() ? "matmul prepacked, B past alignment" : prepack_b_ ? "matmul prepacked" : "matmul";
    return OneDnnIdentity(kind, pd_.impl_info_str(), {a_md_, b_md_, c_md_}, StepNames(post_));
  }
  // Every primitive and reorder it runs takes the calling thread's scratchpad (UseCallerScratchpad).
  bool RunsOnAnyThread() const override { return true; }
  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    if (direct_a_) a_.set_data_handle(const_cast<float*>(in[0]));
    if (direct_b_) b_.set_data_handle(const_cast<float*>(in[1]));
    c_.set_data_handle(out);
    post_.SetRuntime(in);
    post_.LoadResidual(out, c_md_.get_size());
    Execute(prim_, stream_, LoweredA(), b_, c_, bias_, post_, scratchpad_);
    return Status::Ok();
  }

 private:
  // A as the primitive reads it: the caller's, or converted to bfloat16 when the policy computes in it.
  const memory& LoweredA() {
    if (!lowered_a_) return a_;
    a_reorder_.Run(stream_, a_, lowered_a_);
    return lowered_a_;
  }
  size_t bias_input() const { return p_.bias != BiasShape::kNone ? 2 : SIZE_MAX; }
  // B in the primitive's weights layout (prepacked when it differs from the op's).
  // A float32 B the primitive reads row-major (oneDNN's GEMM-based matmul) goes where that product
  // runs faster (engine/backends/onednn/gemm_weights_placement.h).
  memory PlacedWeights(const Tensor& b) {
    memory user_b(user_b_md_, OneDnnCpuEngine(), const_cast<float*>(b.data.data()));  // read in place, not copied
    const dnnl_memory_desc_t& d = b_md_.data;
    const bool row_major = b_md_.data_type() == dt::f32 && d.ndims == 2 && d.format_kind == dnnl_blocked && d.format_desc.blocking.inner_nblks == 0;
    if (!row_major || std::string(pd_.impl_info_str()).rfind("gemm", 0) != 0) {
      // Held once for every product that reads these weights in this layout (a decoder's unrolled
      // steps each projecting onto one vocabulary held 12 copies of it: 120 MB, each run from DRAM).
      placed_b_ = PlacedGemmWeights();
      return PlaceWeights(user_b, b_md_, stream_, &b_holder_);
    }
    const bool trans_b = d.format_desc.blocking.strides[0] == 1 && d.dims[1] > 1;
    auto fill = [&](float* to) {
      memory placed(b_md_, OneDnnCpuEngine(), to);
      dnnl::reorder(user_b, placed).execute(stream_, user_b, placed);
      stream_.wait();
    };
    b_holder_.reset();
    placed_b_ = PlacedGemmWeights::Place(fill, p_.M, p_.K, p_.N, trans_b);
    return memory(b_md_, OneDnnCpuEngine(), placed_b_.data());
  }

  // An operand as oneDNN's (batch, M, N) (engine/core/chain_step.h); a vector output is one row.
  memory::dims OperandDims(const std::vector<int64_t>& operand) const {
    std::vector<int64_t> out = shape_;
    if (out.size() < 2) out.insert(out.begin(), 2 - out.size(), 1);
    const auto dims = OperandMatrixDims(operand, out);
    if (!dims) throw dnnl::error(dnnl_unimplemented, "a post-op operand broadcast over part of the batch");
    // A product whose A alone has a batch runs it as more rows (gemm_problem.h): an operand is one
    // row for all, or every batch's every row one after the other as in memory. A [batch, 1, N]
    // operand was taken for one row and overran its buffer.
    const int64_t out_rows = out[out.size() - 2];
    if (out.size() > 2 && p_.batch == 1 && p_.M != out_rows) {
      if ((*dims)[0] > 1 && (*dims)[1] == out_rows) return Dims(1, p_.M, (*dims)[2]);
      if ((*dims)[0] > 1 || (*dims)[1] > 1)
        throw dnnl::error(dnnl_unimplemented, "a post-op operand broadcast over part of the rows of a product that runs its batch as more rows");
    }
    return Dims((*dims)[0], (*dims)[1], (*dims)[2]);
  }
  // {batch, rows, cols}, or {rows, cols} for a product of batch 1: oneDNN picks blocked
  // (prepacked) weights for 2-D products only.
  memory::dims Dims(memory::dim batch, memory::dim rows, memory::dim cols) const {
    return p_.batch == 1 ? memory::dims{rows, cols} : memory::dims{batch, rows, cols};
  }
  memory::desc Desc(memory::dim batch, memory::dim rows, memory::dim cols, bool transposed, dt type = dt::f32) const {
    const memory::dims strides = transposed ? memory::dims{rows * cols, 1, rows} : memory::dims{rows * cols, cols, 1};
    return memory::desc(Dims(batch, rows, cols), type, p_.batch == 1 ? memory::dims(strides.begin() + 1, strides.end()) : strides);
  }

  // `offered`, when given, receives the implementations oneDNN offers instead (nothing is made), and
  // `first` the default one.
  void CreatePrimitive(const Tensor* bias, std::vector<std::string>* offered = nullptr, std::string* first = nullptr) {
    const memory::dim B = p_.batch, M = p_.M, N = p_.N, K = p_.K;
    // An operand without the batch dimension has batch 1 there: oneDNN broadcasts it. (A batch
    // stride of 0 instead sends oneDNN to its reference kernel, hundreds of times slower.)
    // bf16: A converted on each run (row-major, as the caller's), B prepacked from the constant.
    if (choice_.bf16() && !prepack_b_) throw dnnl::error(dnnl_unimplemented, "a bf16 product needs a constant B (its weights)");
    const dt operands = choice_.bf16() ? dt::bf16 : dt::f32;
    user_a_md_ = Desc(p_.a_batched ? B : 1, M, K, p_.trans_a);
    a_md_ = Desc(p_.a_batched ? B : 1, M, K, false, operands);
    if (!choice_.bf16()) a_md_ = user_a_md_;
    user_b_md_ = Desc(p_.b_batched ? B : 1, K, N, p_.trans_b);
    b_md_ = prepack_b_ ? memory::desc(Dims(p_.b_batched ? B : 1, K, N), operands, tag::any) : user_b_md_;
    c_md_ = Desc(B, M, N, false);
    dnnl::primitive_attr attr;
    if (p_.alpha != 1.f) attr.set_output_scales(0, {p_.alpha});
    post_.Attach(attr, [this](const std::vector<int64_t>& operand) { return OperandDims(operand); });
    memory::desc bias_md;
    if (p_.bias != BiasShape::kNone && p_.beta != 0.f) {
      memory::dims bd = p_.bias == BiasShape::kScalar ? Dims(1, 1, 1) : p_.bias == BiasShape::kRow ? Dims(1, 1, N)
                        : p_.bias == BiasShape::kColumn ? Dims(1, M, 1) : Dims(1, M, N);
      bias_md = RowMajorDesc(std::vector<int64_t>(bd.begin(), bd.end()));
      // The library adds bias after scaling by alpha: fold beta (and undo alpha) into the constant.
      Tensor scaled = *bias;
      for (auto& v : scaled.data) v *= p_.beta / p_.alpha;
      bias_ = MemoryFromTensor(scaled, bias_md);
    }
    dnnl::matmul::desc desc = bias_md ? dnnl::matmul::desc(a_md_, b_md_, bias_md, c_md_) : dnnl::matmul::desc(a_md_, b_md_, c_md_);
    UseCallerScratchpad(&attr);
    pd_ = dnnl::matmul::primitive_desc(desc, attr, OneDnnCpuEngine());
    if (offered) {  // walked while `desc` lives: oneDNN's iterator reads it
      if (first) *first = pd_.impl_info_str();
      *offered = OfferedImplementations(pd_);
      return;
    }
    SelectImplementation(pd_, choice_.impl);
    post_.RefuseReference(pd_.impl_info_str());
    prim_ = dnnl::matmul(pd_);
    scratchpad_.Describe(pd_.scratchpad_desc());
    b_md_ = pd_.weights_desc();
    lowered_a_ = choice_.bf16() ? memory(a_md_, OneDnnCpuEngine()) : memory();
    if (lowered_a_) a_reorder_ = CallerReorder(memory(user_a_md_, OneDnnCpuEngine(), DNNL_MEMORY_NONE), lowered_a_);
  }

  GemmProblem p_;
  std::vector<int64_t> shape_;
  dnnl::stream stream_;
  dnnl::matmul::primitive_desc pd_;
  dnnl::matmul prim_;
  memory::desc a_md_, b_md_, c_md_;
  memory::desc user_a_md_;  // A as the op gives it (a_md_ differs in bf16)
  memory::desc user_b_md_;  // B as the op gives it (b_md_ differs when prepacked)
  memory a_, b_, c_, bias_;
  memory lowered_a_;         // bf16: A converted on each run
  CallerReorder a_reorder_;
  CallerScratchpad scratchpad_;
  bool direct_a_ = false, direct_b_ = false;
  bool prepack_b_ = false;  // B is a constant, in the primitive's own layout
  PlacedGemmWeights placed_b_;  // B read row-major where it sits
  std::shared_ptr<const void> b_holder_;  // keeps b_ when it is shared with other kernels (PlaceWeights)
  PostOpChain post_;
  CubeChoice choice_;
};

// A chain's last step, when it is one oneDNN 2.6 runs slower as a post-op than an own pass over
// the output does, moved to `own`; the rest stays for oneDNN. From 2^12 output values on, below
// which the pass's start on the threads eats the gain (docs/PERFORMANCE.md):
// - Swish: as a post-op it costs 2-4x a large 1x1 convolution's own time, as a pass
//   (engine/backends/simd/activation_pass.h) about a third of that (EfficientNet-B0 3-5% and a
//   YOLO-style detector 2% faster than from 2^18, where Highway's general exp made the pass slower).
//   A convolution computing in bf16 keeps Swish as its post-op: its primitive then writes a bf16
//   output for bf16 readers (a pass would read and write the float32 sums once more),
//   EfficientNet-B0's convolutions with Swish 4.4 -> 3.2 ms in bf16 on a Zen 5.
// - Tanh, where oneDNN runs without AVX-512: its tanh gathers a polynomial's coefficients from a
//   table, ESPCN's 1 -> 64 5x5 convolution at 224x224 10.8 ms with Tanh fused against 2.8 without
//   on a Zen 3 (AVX2).
std::vector<ChainStep> WithoutOwnTail(std::vector<ChainStep> ops, int64_t output_values, bool bf16, ConvEpilogue* own) {
  constexpr int64_t kOwnPassFrom = int64_t{1} << 12;
  if (bf16 || output_values < kOwnPassFrom || ops.empty() || ops.back().has_operand) return ops;
  const unsigned isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa()), avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
  if (ops.back().op_type == "Swish") own->steps.push_back({ConvEpilogueStep::Kind::kSwish, 0.f, 0.f});
  else if (ops.back().op_type == "Tanh" && (isa & avx512) != avx512) own->steps.push_back({ConvEpilogueStep::Kind::kTanh, 0.f, 0.f});
  else return ops;
  ops.pop_back();
  return ops;
}

// What the own pass of WithoutOwnTail runs, for identities and keys ("" when none).
std::string OwnTailName(const ConvEpilogue& own) {
  if (own.steps.empty()) return "";
  return own.steps.back().kind == ConvEpilogueStep::Kind::kTanh ? "own Tanh" : "own Swish";
}

// Whether a convolution implementation of oneDNN starts its accumulators from the destination when
// it has a sum post-op (the direct JIT kernels below AVX-512; its 1x1, depthwise and AVX-512 kernels
// add the destination to finished sums).
bool AccumulatesOnResidual(const std::string& impl) { return impl.rfind("jit:avx2", 0) == 0 || impl.rfind("jit:sse41", 0) == 0; }

class ConvKernel : public Kernel {
 public:
  ConvKernel(ConvProblem p, std::vector<int64_t> out_shape, std::vector<ChainStep> post_ops = {}, CubeChoice choice = {})
      : p_(p), shape_(std::move(out_shape)), stream_(OneDnnCpuEngine()), post_(WithoutOwnTail(std::move(post_ops), Tensor::NumElements(shape_), choice.bf16(), &own_tail_), p_.bias ? 3 : 2, shape_),
        choice_(std::move(choice)) {
    plain_activations_ = choice_.layout == "plain";
  }
  int InPlaceInput() const override { return post_.sum_input(); }
  Status Prepare(const std::vector<const Tensor*>& in) override {
    runtime_weights_ = runtime_bias_ = false;  // the measured path: every input copied in
    constant_src_.clear();
    CreatePrimitive(UserWeights(*in[1]), p_.bias ? in[2] : nullptr);
    post_.Bind(in);
    memory user_src = MemoryFromTensor(*in[0], user_src_md_);
    src_ = memory(pd_.src_desc(), OneDnnCpuEngine());
    if (PadsSource()) {  // zero borders, the source reordered into the rest
      std::memset(src_.get_data_handle(), 0, pd_.src_desc().get_size());
      memory interior(SourceInterior(), OneDnnCpuEngine(), src_.get_data_handle());
      dnnl::reorder(user_src, interior).execute(stream_, user_src, interior);
    } else {
      dnnl::reorder(user_src, src_).execute(stream_, user_src, src_);
    }
    dst_ = memory(pd_.dst_desc(), OneDnnCpuEngine());
    stream_.wait();
    if (post_.sum_input() >= 0) {
      residual_ = memory(user_dst_md_, OneDnnCpuEngine(), const_cast<float*>(post_.sum_source()));
      sum_reorder_ = CallerReorder(residual_, dst_);
    }
    return Status::Ok();
  }
  Status Run() override {
    if (post_.sum_input() >= 0) sum_reorder_.Run(stream_, residual_, dst_);
    EnsurePrimitive();
    Execute(prim_, stream_, src_, wts_, dst_, bias_, post_, scratchpad_);
    RunOwnTail();
    return Status::Ok();
  }
  Status Fetch(Tensor* out) override {
    memory user_dst(user_dst_md_, OneDnnCpuEngine());
    dnnl::reorder(dst_, user_dst).execute(stream_, dst_, user_dst);
    stream_.wait();
    *out = TensorFromMemory(user_dst, shape_);
    return Status::Ok();
  }
  // Constant weights (and bias) go into oneDNN's layout once; weights a model computes (StyleGAN's
  // modulated convolutions) are read where they are when the primitive takes OIHW (NCHW's GEMM
  // kernels), else reordered into its layout on each run, the timing below deciding. Source and
  // destination are the caller's NCHW memory. The primitive either works in the layouts it prefers
  // (blocked), with a reorder on each side, or in NCHW itself; both are timed here, at load, and
  // the faster is kept: which wins depends on the shape (MobileNetV2's 1x1 convolutions lose more
  // to the reorders than the blocked kernel gains, ResNet's 3x3 ones do not). The blocked layouts
  // are the native ones the executor may hand over from and to neighbouring kernels (no reorders).
  Result<bool> BindDirect(const std::vector<std::vector<int64_t>>& shapes, const std::vector<const Tensor*>& constants) override {
    return CatchOneDnnErrors([&] { return Bind(shapes, constants); });
  }
  Result<bool> Bind(const std::vector<std::vector<int64_t>>&, const std::vector<const Tensor*>& constants) {
    if (constants.size() < 2) return false;
    const bool runtime_weights = !constants[1], runtime_bias = p_.bias && (constants.size() < 3 || !constants[2]);
    if ((runtime_weights || runtime_bias) && choice_.bf16()) return false;  // bf16 weights are converted once, at load
    runtime_weights_ = runtime_weights;
    runtime_bias_ = runtime_bias;
    if (constants[0]) constant_src_ = constants[0]->data;  // StyleGAN's learned 4x4 input: read from here on each run
    // Made only where a binding is timed (not when a remembered choice binds): zeros for the
    // source and for the runtime post-op operands, and a destination.
    std::vector<float> src, dst, weights, bias;
    std::vector<std::vector<float>> operands;
    std::vector<const float*> inputs;
    // The bound primitive's fastest of `runs` runs after `warmup`.
    auto time_bound = [&](int runs, int warmup) {
      if (inputs.empty()) {
        src.assign(static_cast<size_t>(p_.N) * p_.C * p_.H * p_.W, 0.f);
        dst.resize(static_cast<size_t>(p_.N) * p_.OC * p_.OH * p_.OW);
        inputs = {constant_src_.empty() ? src.data() : nullptr};
        inputs.resize(post_.first_operand_input(), nullptr);
        if (runtime_weights_) weights.assign(UserWeightsDesc().get_size() / sizeof(float), 0.f), inputs[1] = weights.data();
        if (runtime_bias_) bias.assign(static_cast<size_t>(p_.OC), 0.f), inputs[2] = bias.data();
        operands.reserve(post_.ops().size());
        for (const ChainStep& op : post_.ops())
          if (op.has_operand) {
            operands.emplace_back(Tensor::NumElements(op.operand_shape), 0.f);
            inputs.push_back(operands.back().data());
          }
      }
      return FastestOf(runs, warmup, [&] {
        RunDirect(inputs, dst.data());
        return true;
      });
    };
    bool any = false;
    std::string why;
    const memory user_wts = runtime_weights_ ? memory(UserWeightsDesc(), OneDnnCpuEngine(), DNNL_MEMORY_NONE) : UserWeights(*constants[1]);
    const bool bf16_in_own_layouts = choice_.bf16() && choice_.layout != "plain";
    // The layout's primitive and weights; false (and `why`) where oneDNN has no kernel for it.
    auto bind_layout = [&](bool plain) {
      plain_activations_ = plain;
      try {
        BindLayouts(user_wts, p_.bias && !runtime_bias_ ? constants[2] : nullptr);
        post_.Bind(constants);
      } catch (const dnnl::error& e) {  // a kernel (fused, Winograd) oneDNN has for one layout only
        why = e.what();
        return false;
      }
      if (!plain) {
        native_src_ = PadsSource() ? HandoverLayout{} : HandoverLayoutOf(HandedSrcDesc());  // a padded source is the kernel's own copy
        native_dst_ = HandoverLayoutOf(pd_.dst_desc());
        OfferNarrowLayouts();
      }
      return true;
    };
    // oneDNN has bf16 kernels for its own layouts and NHWC only: nothing to time.
    if (bf16_in_own_layouts) {
      if (!bind_layout(false)) return Status::InvalidInput("oneDNN: " + why);
      return true;
    }
    // A 1-D convolution (H and KH 1) whose default is brgconv: oneDNN's plain JIT kernel is timed
    // against it once per instance and host in its own (blocked) layouts, alternated, and taken for
    // them unless brgconv's gain pays for its code (below); NCHW binds oneDNN's default as before. brgconv makes code for each
    // row width at every load (a WaveNet's dilated convolutions over 8000 samples: 30-75 ms each,
    // Whisper's stem 44 and 29 ms); the plain JIT kernel takes 0.4 ms. Where the plain JIT kernel
    // refuses the padding (more than a few columns: a TCN's or WaveNet's dilated causal padding),
    // it is timed with the padding in its source instead: a buffer whose zero borders stay, the
    // source reordered into the rest on each run (PadsSource).
    const bool one_dimensional = p_.H == 1 && p_.KH == 1;
    if (choice_.impl == "default" && choice_.algo == "direct" && choice_.layout == "auto" && one_dimensional) {
      static constexpr const char* kPlainJit = "jit:avx512_core";
      static constexpr const char* kPlainJitPaddedSource = "jit:avx512_core, padded source";
      const std::string impl_key = "onednn conv 1-D impl v4|" + LayoutChoiceKey();
      auto take = [&](const std::string& choice) {  // the kernel and source a remembered choice names
        blocked_impl_ = choice == "default" ? "" : kPlainJit;
        pads_source_ = choice == kPlainJitPaddedSource;
      };
      std::optional<std::string> known = RecallMeasuredChoice(impl_key);
      if (!known) {
        known = "default";
        const RunQueueWatch watch;
        const auto making = std::chrono::steady_clock::now();
        pads_source_ = false;
        if (bind_layout(false) && std::string(pd_.impl_info_str()).rfind("brgconv", 0) == 0) {
          const double making_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - making).count();
          double fastest[2] = {INFINITY, INFINITY};  // default, plain JIT
          bool padded_source = false;  // the plain JIT kernel takes the padding in its source
          for (int round = 0; round < 2; ++round)
            for (int way = 0; way < 2; ++way) {
              blocked_impl_ = way ? kPlainJit : "";
              pads_source_ = way && padded_source;
              if (!bind_layout(false)) {
                if (!way || padded_source || !p_.Padded()) break;  // oneDNN has no plain JIT kernel for it (a dilation of 256)
                padded_source = pads_source_ = true;
                if (!bind_layout(false)) break;
              }
              fastest[way] = std::min(fastest[way], time_bound(5, 1));
            }
          // brgconv is kept only where what it saves over kRunsPayingForCode runs exceeds what making
          // its code took (at every load): MelGAN's 16 -> 16 channels over 25600 samples run 176 us
          // by brgconv, 224 by the plain JIT kernel, and brgconv makes its code in 46-55 ms. (Over
          // 1000 runs the verdict flipped with the timing's noise, and the load doubled.)
          // A padded source also costs the layout plan its handover of the source (a reorder each
          // run, outside this timing): it must pay over ten times as many runs (a TCN's 64-channel
          // convolutions over 1000 steps lost 0.6 ms a run to it with the same bound, for 19 ms of load).
          constexpr double kRunsPayingForCode = 200, kRunsPayingForPaddedSource = 2000;
          if (fastest[1] <= fastest[0] + making_s / (padded_source ? kRunsPayingForPaddedSource : kRunsPayingForCode))
            known = padded_source ? kPlainJitPaddedSource : kPlainJit;
          // The layouts the plan sees are the chosen kernel's (the timing left the last one tried bound).
          take(*known);
          bind_layout(false);
        }
        RememberMeasuredChoice(impl_key, *known, &watch);
      }
      take(*known);
    }
    // "auto" timed once per instance and host: a later load binds the remembered winner (the
    // blocked primitive first all the same, whose layouts the executor's plan may still hand over).
    const std::string key = choice_.layout == "auto" ? LayoutChoiceKey() : "";
    if (const auto known = key.empty() ? std::nullopt : RecallMeasuredChoice(key)) {
      // A 1-D convolution that runs NCHW is not bound blocked first: brgconv would make its code
      // (tens of ms a load, above) for layouts the plan then seldom hands it. It offers the plan none.
      if (*known == "plain" && one_dimensional && bind_layout(true)) {
        native_src_ = native_dst_ = {};
        return true;
      }
      const bool blocked = bind_layout(false);
      if (*known == "blocked" && blocked) return true;
      // NCHW activations won: bound for them only if the plan hands this convolution none of its
      // own layouts (FinishLayouts), so that one it hands them to is not bound three times.
      if (*known == "plain") {
        if (blocked) {
          plain_later_ = true;
          return true;
        }
        if (bind_layout(true)) return true;
      }
    }
    const RunQueueWatch watch;
    double fastest[2] = {INFINITY, INFINITY};  // blocked, plain
    auto time_layouts = [&] {
      for (bool plain : {false, true}) {
        if ((choice_.layout == "plain" && !plain) || (choice_.layout != "plain" && choice_.layout != "auto" && plain)) continue;  // the policy's layout only
        if (plain && choice_.bf16()) continue;  // oneDNN has bf16 kernels for its own layouts and NHWC only
        if (!bind_layout(plain)) continue;
        fastest[plain] = std::min(fastest[plain], time_bound(7, 2));
        any = true;
      }
    };
    time_layouts();
    // NCHW winning is the exception (the blocked kernel lost more to its reorders than it gained), and
    // a disturbed first timing would keep it for good: it must win a second, alternated round too,
    // which decides. (A first-layer convolution of 3 channels once kept oneDNN's NCHW GEMM at 3.7 ms
    // where its blocked kernel runs 0.3 ms.)
    if (any && fastest[1] < fastest[0] && fastest[0] < INFINITY) {
      fastest[0] = fastest[1] = INFINITY;
      time_layouts();
    }
    if (!any) return Status::InvalidInput("oneDNN: " + why);
    const bool best_plain = fastest[1] < fastest[0];
    if (!key.empty()) RememberMeasuredChoice(key, best_plain ? "plain" : "blocked", &watch);
    if (best_plain != plain_activations_) {
      plain_activations_ = best_plain;
      BindLayouts(user_wts, p_.bias && !runtime_bias_ ? constants[2] : nullptr);
      post_.Bind(constants);
    }
    return true;
  }
  // What the layout timing depends on: the convolution, its epilogue and the primitive's knobs.
  std::string LayoutChoiceKey() const {
    std::ostringstream k;
    k << "onednn conv layout v1|" << p_.N << "," << p_.C << "," << p_.H << "," << p_.W << "->" << p_.OC << "," << p_.OH << "," << p_.OW << "|k" << p_.KH << "x"
      << p_.KW << ",g" << p_.G << ",s" << p_.sh << "x" << p_.sw << ",d" << p_.dh << "x" << p_.dw << ",p" << p_.ph << "x" << p_.pw << "+" << p_.ph_end << "x" << p_.pw_end << ",b" << p_.bias << "|"
      << choice_.impl << "," << choice_.algo << "," << choice_.precision;
    for (const ChainStep& op : post_.ops()) {
      k << "|" << op.op_type;
      if (op.has_operand) k << "[" << op.operand_shape.size() << "]";
    }
    if (!own_tail_.steps.empty()) k << "|" << OwnTailName(own_tail_);
    if (runtime_weights_) k << "|weights per run";
    return k.str();
  }
  HandoverLayout NativeLayout(int input) const override {
    if (ConvertsLayouts()) return {};  // it takes whatever its neighbours hand over
    if (input == -1 || (input >= 0 && input == post_.sum_input())) return native_dst_;
    return input == 0 && constant_src_.empty() ? native_src_ : HandoverLayout{};
  }
  HandoverLayout NarrowLayout(int input) const override {
    if (ConvertsLayouts()) return {};
    return input == 0 ? narrow_src_layout_ : input == -1 ? narrow_dst_layout_ : HandoverLayout{};
  }
  Status UseNarrowLayouts(const std::vector<bool>& inputs, bool output) override {
    for (size_t k = 1; k < inputs.size(); ++k)
      if (inputs[k]) return Status::InvalidInput("this convolution reads only its source in bfloat16");
    narrow_src_ = !inputs.empty() && inputs[0];
    narrow_dst_ = output;
    if ((narrow_src_ && narrow_src_layout_.row_major()) || (narrow_dst_ && narrow_dst_layout_.row_major()))
      return Status::InvalidInput("this convolution computes in float32, or writes its output so");
    return Status::Ok();
  }
  bool ConvertsLayouts() const override { return choice_.layout == "convert"; }
  Status UseGivenLayouts(const std::vector<HandoverLayout>& inputs, const HandoverLayout& output) override {
    if (!ConvertsLayouts()) return Kernel::UseGivenLayouts(inputs, output);
    for (size_t k = 1; k < std::min<size_t>(inputs.size(), 3); ++k)  // weights and bias given per run are read as ONNX lays them out
      if (!inputs[k].row_major()) return Status::InvalidInput("this convolution reads its weights and bias row-major");
    return CatchOneDnnErrors([&] {
      const std::vector<int64_t> src{p_.N, p_.C, p_.H, p_.W}, dst{p_.N, p_.OC, p_.OH, p_.OW};
      given_src_md_ = DescOfHandover(inputs.empty() ? HandoverLayout{} : inputs[0], src);
      given_dst_md_ = DescOfHandover(output, dst);
      const int sum = post_.sum_input();
      given_residual_md_ = sum >= 0 ? DescOfHandover(static_cast<size_t>(sum) < inputs.size() ? inputs[sum] : HandoverLayout{}, dst) : std::nullopt;
      if (!given_src_md_ || !given_dst_md_ || (sum >= 0 && !given_residual_md_)) return Status::InvalidInput("a layout oneDNN did not describe");
      BindCallerMemories();  // the primitive and its weights stay as they are
      return Status::Ok();
    });
  }
  Status FinishLayouts() override {
    if (!plain_later_) return CatchOneDnnErrors([&] {
      EnsurePrimitive();
      return Status::Ok();
    });
    plain_later_ = false;
    return CatchOneDnnErrors([&] {
      plain_activations_ = true;
      const memory current_wts = wts_;
      BindLayouts(current_wts, nullptr);  // the weights move from the blocked primitive's layout
      return Status::Ok();
    });
  }
  Status UseNativeLayouts(const std::vector<bool>& inputs, bool output) override {
    plain_later_ = false;  // handed its own layouts: the blocked primitive bound for them stays
    return CatchOneDnnErrors([&] {
      handed_src_ = !inputs.empty() && inputs[0];
      handed_dst_ = output;
      if (handed_src_ && pads_source_) return Status::InvalidInput("this convolution reads its source into a padded copy of its own");
      handed_residual_ = post_.sum_input() >= 0 && static_cast<size_t>(post_.sum_input()) < inputs.size() && inputs[post_.sum_input()];
      if ((handed_src_ || handed_dst_ || handed_residual_) && choice_.layout == "plain")
        return Status::InvalidInput("this convolution's policy keeps its activations in NCHW");
      // The primitive bound for its own layouts stays (its descriptor and weights made again would
      // be the same); one bound for NCHW activations is made again for them, the weights moving
      // from its layout.
      // A bf16 destination is another primitive.
      if (plain_activations_ || !pd_ || narrow_dst_) {
        plain_activations_ = false;
        const memory current_wts = wts_;
        BindLayouts(current_wts, nullptr);
      } else {
        BindCallerMemories();
      }
      if ((handed_src_ && HandoverLayoutOf(HandedSrcDesc()).key != (narrow_src_ ? narrow_src_layout_ : native_src_).key) ||
          ((handed_dst_ || handed_residual_) && HandoverLayoutOf(pd_.dst_desc()).key != (narrow_dst_ ? narrow_dst_layout_ : native_dst_).key))
        return Status::InvalidInput("oneDNN chose other layouts for this convolution than at load");
      return Status::Ok();
    });
  }
  std::string Identity() const override {
    if (!pd_) return "";
    std::vector<std::string> steps = StepNames(post_);
    if (!own_tail_.steps.empty()) steps.push_back(OwnTailName(own_tail_));
    // The caller's memories exist on the direct path (the measured one reorders outside the run).
    const memory::desc caller_src = caller_src_ ? caller_src_.get_desc() : user_src_md_, caller_dst = caller_dst_ ? caller_dst_.get_desc() : user_dst_md_;
    std::vector<memory::desc> mds = {caller_src, pd_.src_desc(), pd_.weights_desc(), pd_.dst_desc(), caller_dst};
    if (post_.sum_input() >= 0 && residual_) mds.push_back(residual_.get_desc());  // the residual as the caller gives it
    return OneDnnIdentity("conv", pd_.impl_info_str(), mds, steps);
  }
  // Every primitive and reorder it runs takes the calling thread's scratchpad (UseCallerScratchpad).
  bool RunsOnAnyThread() const override { return true; }
  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    if (plain_later_) TB_RETURN_IF_ERROR(FinishLayouts());  // run before the layout plan (timed alone at load)
    EnsurePrimitive();
    caller_src_.set_data_handle(const_cast<float*>(constant_src_.empty() ? in[0] : constant_src_.data()));
    caller_dst_.set_data_handle(out);
    PlaceInCallScratch(reorder_src_ && !PadsSource() ? &src_ : nullptr, reorder_dst_ ? &dst_ : nullptr);  // the primitive's own layouts, for this run
    if (reorder_src_) src_reorder_.Run(stream_, caller_src_, PadsSource() ? src_interior_ : src_);
    if (runtime_weights_) {
      caller_wts_.set_data_handle(const_cast<float*>(in[1]));
      if (reorder_wts_) wts_reorder_.Run(stream_, caller_wts_, wts_);
    }
    if (runtime_bias_) bias_.set_data_handle(const_cast<float*>(in[2]));
    post_.SetRuntime(in);
    if (copy_residual_) {
      post_.LoadResidual(dst_.get_data_handle(), pd_.dst_desc().get_size());
    } else if (const float* residual = post_.sum_source()) {  // reordered into dst_'s layout
      residual_.set_data_handle(const_cast<float*>(residual));
      sum_reorder_.Run(stream_, residual_, dst_);
    }
    Execute(prim_, stream_, src_, wts_, dst_, bias_, post_, scratchpad_);
    RunOwnTail();
    if (reorder_dst_) {
      dst_reorder_.Run(stream_, dst_, caller_dst_);
      stream_.wait();
    }
    return Status::Ok();
  }

 private:
  // The chain's own last step (WithoutOwnTail) over the primitive's destination, padding included
  // (Swish keeps a padded zero zero).
  void RunOwnTail() {
    ApplyActivationsInPlace(own_tail_, static_cast<float*>(dst_.get_data_handle()), static_cast<int64_t>(pd_.dst_desc().get_size() / sizeof(float)));
  }
  // The primitive for pd_, where CreatePrimitive left it to be made on first need.
  void EnsurePrimitive() {
    if (!prim_) prim_ = dnnl::convolution_forward(pd_);
  }
  // Whether the bound primitive takes its padding in its source (pads_source_, for its own layouts).
  bool PadsSource() const { return pads_source_ && !plain_activations_; }
  // The problem the primitive is made for: the row padded in the source, no padding, where it pads its source.
  ConvProblem BoundProblem() const {
    ConvProblem p = p_;
    if (PadsSource()) p.W += p.pw + p.pw_end, p.H += p.ph + p.ph_end, p.pw = p.pw_end = p.ph = p.ph_end = 0;
    return p;
  }
  // The caller's source inside the padded one.
  memory::desc SourceInterior() const {
    return pd_.src_desc().submemory_desc({p_.N, p_.C, p_.H, p_.W}, {0, 0, p_.ph, p_.pw});
  }
  // The source as neighbours hand it over in the primitive's layout: float32 (a bf16 primitive's
  // source is its own copy, converted on each run) unless handed over narrow.
  memory::desc HandedSrcDesc() const { return choice_.bf16() && !narrow_src_ ? WithF32(pd_.src_desc()) : pd_.src_desc(); }
  // A bf16 primitive in its own layouts reads its source in bf16 as it is; it writes its
  // destination in bf16 too, in the same layout, where oneDNN has a native kernel for that and no
  // residual Add reads the float32 sums (a bf16 primitive has no own Swish pass: WithoutOwnTail).
  void OfferNarrowLayouts() {
    narrow_src_layout_ = narrow_dst_layout_ = {};
    if (!choice_.bf16() || ConvertsLayouts()) return;
    narrow_src_layout_ = HandoverLayoutOf(pd_.src_desc());
    if (post_.sum_input() >= 0) return;
    const memory::desc narrow_dst = WithBf16(pd_.dst_desc());
    try {
      dnnl::primitive_attr attr;
      post_.Attach(attr, PostOpDims());
      UseCallerScratchpad(&attr);
      const auto desc = ConvDesc(p_, choice_.algo, choice_.layout, true, &narrow_dst);
      dnnl::convolution_forward::primitive_desc pd(desc, attr, OneDnnCpuEngine());
      SelectImplementation(pd, choice_.impl);
      // The same source and weights layouts, or the plan's narrow value would be another tensor.
      if (NativeBf16Implementation(pd.impl_info_str()) && pd.src_desc() == pd_.src_desc() && pd.weights_desc() == pd_.weights_desc())
        narrow_dst_layout_ = HandoverLayoutOf(narrow_dst);
    } catch (const dnnl::error&) {  // no such kernel here: the destination stays float32
    }
  }
  // The rank-4 dims oneDNN takes a binary post-op's operand in.
  static std::function<memory::dims(const std::vector<int64_t>&)> PostOpDims() {
    return [](const std::vector<int64_t>& operand) {
      memory::dims d(4 - std::min<size_t>(4, operand.size()), 1);
      d.insert(d.end(), operand.begin(), operand.end());
      return d;
    };
  }
  // The ONNX weights (OIHW, or GOIHW when grouped) as oneDNN describes them, and as its memory.
  memory::desc UserWeightsDesc() const { return memory::desc(ConvWeightDims(p_), dt::f32, p_.G == 1 ? tag::oihw : tag::goihw); }
  // A view of `weights`, read only by the reorders that place them (no copy: a load's peak held the
  // largest layer's weights a third time).
  memory UserWeights(const Tensor& weights) const {
    return memory(UserWeightsDesc(), OneDnnCpuEngine(), const_cast<float*>(weights.data.data()));
  }

  // The direct path's primitive, memories and reorder primitives for the current layout choice: the
  // caller's source and destination are NCHW unless handed over in the primitive's own layouts.
  void BindLayouts(const memory& weights_from, const Tensor* bias) {
    CreatePrimitive(weights_from, bias);
    BindCallerMemories();
  }
  // The caller's source, destination and residual memories for the current primitive, and the
  // reorders between them and the primitive's own layouts.
  void BindCallerMemories() {
    const memory::desc caller_src_md = given_src_md_ ? *given_src_md_ : handed_src_ ? HandedSrcDesc() : user_src_md_;
    const memory::desc caller_dst_md = given_dst_md_ ? *given_dst_md_ : handed_dst_ ? pd_.dst_desc() : user_dst_md_;
    caller_src_ = memory(caller_src_md, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
    caller_dst_ = memory(caller_dst_md, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
    reorder_src_ = pd_.src_desc() != caller_src_md || PadsSource();
    reorder_dst_ = pd_.dst_desc() != caller_dst_md;
    if (PadsSource()) {  // its own: the zero borders stay from run to run
      src_ = memory(pd_.src_desc(), OneDnnCpuEngine());
      std::memset(src_.get_data_handle(), 0, pd_.src_desc().get_size());
      src_interior_ = memory(SourceInterior(), OneDnnCpuEngine(), src_.get_data_handle());
      src_reorder_ = CallerReorder(caller_src_, src_interior_);
    } else {
      src_ = reorder_src_ ? memory(pd_.src_desc(), OneDnnCpuEngine(), DNNL_MEMORY_NONE) : caller_src_;  // in CallScratch, placed per run
    }
    dst_ = reorder_dst_ ? memory(pd_.dst_desc(), OneDnnCpuEngine(), DNNL_MEMORY_NONE) : caller_dst_;
    if (reorder_src_ && !PadsSource()) src_reorder_ = CallerReorder(caller_src_, src_);
    if (reorder_dst_) dst_reorder_ = CallerReorder(dst_, caller_dst_);
    if (post_.sum_input() >= 0) {
      const memory::desc residual_md = given_residual_md_ ? *given_residual_md_ : handed_residual_ ? pd_.dst_desc() : user_dst_md_;
      copy_residual_ = residual_md == pd_.dst_desc();
      residual_ = memory(residual_md, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
      if (!copy_residual_) sum_reorder_ = CallerReorder(residual_, dst_);
    }
  }

  // oneDNN 2.6's JIT convolutions without AVX-512 take no binary post-op over a whole tensor: such a
  // chain goes to its im2col-and-GEMM convolution. RAFT-small's ConvGRU convolution with Sigmoid and
  // a Mul by the hidden state: 3.4 ms that way on a Zen 3, against 1.3 ms by the JIT kernel with the
  // Sigmoid alone and a Mul step after it. So a chain with an operand (other than a residual sum)
  // that moves oneDNN's default from a JIT kernel to GEMM is refused: the model runs a shorter chain.
  void RefuseGemmForOperands() const {
    const std::string impl = pd_.impl_info_str();
    if (choice_.impl != "default" || impl.find("gemm") == std::string::npos) return;
    // A residual Add of the output's shape is oneDNN's sum post-op, which every kernel takes.
    const std::vector<int64_t> output = {p_.N, p_.OC, p_.OH, p_.OW};
    const bool operand = std::any_of(post_.ops().begin(), post_.ops().end(),
                                     [&](const ChainStep& op) { return op.has_operand && !IsSumCandidate(op, output); });
    if (!operand) return;
    const dnnl::convolution_forward::primitive_desc bare(ConvDesc(p_, choice_.algo, "auto", false), OneDnnCpuEngine());  // its own layouts, no chain
    const std::string bare_impl = bare.impl_info_str();
    if (bare_impl.find("gemm") == std::string::npos && bare_impl.rfind("ref", 0) != 0)
      throw dnnl::error(dnnl_unimplemented, ("a binary step fused here takes oneDNN's convolution off its JIT kernel, to " + impl).c_str());
  }

  // A residual the primitive would start its accumulators from (OneDnnConvAddsResidualOnce) is refused.
  void RefuseResidualAccumulation() const {
    const std::string impl = pd_.impl_info_str();
    if (post_.sum_input() >= 0 && AccumulatesOnResidual(impl))
      throw dnnl::error(dnnl_unimplemented, ("a residual Add fused here would round every product at the residual's magnitude: " + impl).c_str());
  }

  // The primitive for layouts of its choosing (or NCHW activations), with the weights (and bias,
  // when given; else the bound one stays) in them.
  void CreatePrimitive(const memory& weights_from, const Tensor* bias) {
    const ConvProblem p = BoundProblem();
    const memory::dims src{p_.N, p_.C, p_.H, p_.W}, dst{p.N, p.OC, p.OH, p.OW};
    const memory::desc bias_md({p.OC}, dt::f32, tag::a);
    const memory::desc narrow_dst = narrow_dst_ ? WithBf16(pd_.dst_desc()) : memory::desc();  // the float32 primitive's layout
    const auto desc = ConvDesc(p, choice_.algo, plain_activations_ ? "plain" : choice_.layout, choice_.bf16(), narrow_dst_ ? &narrow_dst : nullptr);
    dnnl::primitive_attr attr;
    post_.Attach(attr, PostOpDims());
    UseCallerScratchpad(&attr);
    pd_ = dnnl::convolution_forward::primitive_desc(desc, attr, OneDnnCpuEngine());
    SelectImplementation(pd_, plain_activations_ || blocked_impl_.empty() ? choice_.impl : blocked_impl_);
    // A grouped convolution (not depthwise) whose kernel prefers a blocked layout, on a host where
    // ordinary convolutions work in NHWC (brgconv): the same kernel in NHWC, when oneDNN has it, so
    // that the layout plan hands NHWC through ResNeXt/RegNet blocks instead of reordering to NCHW
    // on both sides of each (regnet_x_400mf: 6.8 -> 4.8 ms; the kernel alone 20.1 us blocked, 21.4 NHWC).
    if (!plain_activations_ && choice_.layout == "auto" && !choice_.bf16() && !narrow_dst_ && choice_.impl == "default" && p.G > 1 && p.Cg > 1 &&
        pd_.src_desc().data.format_desc.blocking.inner_nblks > 0 && UngroupedConvolutionsInNhwc()) {
      try {
        dnnl::convolution_forward::primitive_desc nhwc(ConvDesc(p, choice_.algo, "nhwc", false), attr, OneDnnCpuEngine());
        if (nhwc.impl_info_str() == pd_.impl_info_str()) pd_ = nhwc;
      } catch (const dnnl::error&) {  // none in NHWC: the blocked one stays
      }
    }
    scratchpad_.Describe(pd_.scratchpad_desc());
    post_.RefuseReference(pd_.impl_info_str());
    RefuseGemmForOperands();
    RefuseResidualAccumulation();
    // A bf16 primitive waits until the plan says what type its destination is (UseNarrowLayouts):
    // made twice, the first would stay in oneDNN's primitive cache, its code resident.
    prim_ = {};
    if (!choice_.bf16()) prim_ = dnnl::convolution_forward(pd_);
    // Weights into the primitive's layout (not timed; in a model, once at load).
    user_src_md_ = memory::desc(src, dt::f32, tag::nchw);
    user_dst_md_ = memory::desc(dst, dt::f32, tag::nchw);
    if (runtime_weights_) {  // the caller's on each run: read where they are, or reordered into wts_
      caller_wts_ = memory(UserWeightsDesc(), OneDnnCpuEngine(), DNNL_MEMORY_NONE);
      reorder_wts_ = pd_.weights_desc() != UserWeightsDesc();
      wts_ = reorder_wts_ ? memory(pd_.weights_desc(), OneDnnCpuEngine()) : caller_wts_;
      if (reorder_wts_) wts_reorder_ = CallerReorder(caller_wts_, wts_);
    } else {
      wts_ = PlaceWeights(weights_from, pd_.weights_desc(), stream_, &wts_holder_);
    }
    if (bias) bias_ = MemoryFromTensor(*bias, bias_md);
    else if (runtime_bias_) bias_ = memory(bias_md, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
    stream_.wait();
  }

  ConvProblem p_;
  std::vector<int64_t> shape_;
  dnnl::stream stream_;
  dnnl::convolution_forward::primitive_desc pd_;
  dnnl::convolution_forward prim_;
  memory::desc user_src_md_, user_dst_md_;
  memory src_, wts_, dst_, bias_, caller_src_, caller_dst_;
  std::shared_ptr<const void> wts_holder_;  // keeps wts_ when it is shared with other kernels (PlaceWeights)
  bool reorder_src_ = false, reorder_dst_ = false;
  // Direct path: weights (bias) the model computes, given on each run; the caller's weights memory
  // and, where the primitive's layout is not OIHW, their reorder into wts_.
  bool runtime_weights_ = false, runtime_bias_ = false, reorder_wts_ = false;
  memory caller_wts_;
  CallerReorder wts_reorder_;
  std::vector<float> constant_src_;  // a constant source (its weights computed), NCHW; empty otherwise
  bool plain_activations_ = false;  // direct path: NCHW source and destination
  std::string blocked_impl_;        // where set, the implementation bound for oneDNN's own layouts (a 1-D convolution's plain JIT kernel)
  bool pads_source_ = false;        // in its own layouts the primitive reads a padded copy of the source (PadsSource)
  memory src_interior_;             // where it does: the caller's source's place in src_
  bool plain_later_ = false;        // bound blocked for the layout plan; NCHW once it hands none over (FinishLayouts)
  CallerReorder src_reorder_, dst_reorder_;
  CallerScratchpad scratchpad_;
  ConvEpilogue own_tail_;  // before post_, which is made from what WithoutOwnTail leaves
  PostOpChain post_;
  // Layout handover (NativeLayout): the blocked primitive's source and destination layouts, and
  // which of source, destination and residual the caller gives in them.
  HandoverLayout native_src_, native_dst_;
  bool handed_src_ = false, handed_dst_ = false, handed_residual_ = false;
  // The same layouts in bf16 (NarrowLayout), and whether the source and destination are handed so.
  HandoverLayout narrow_src_layout_, narrow_dst_layout_;
  bool narrow_src_ = false, narrow_dst_ = false;
  memory residual_;             // the sum post-op's residual, in the caller's layout
  bool copy_residual_ = false;  // the residual is in dst_'s layout: copied, not reordered
  CallerReorder sum_reorder_;   // residual -> dst_ otherwise
  CubeChoice choice_;
  // Layout "convert" (UseGivenLayouts): the layouts the neighbours hand source, destination and
  // residual over in; the primitive keeps its own, reordering on each side.
  std::optional<memory::desc> given_src_md_, given_dst_md_, given_residual_md_;
};

// Whether a convolution policy's algorithm is one of tilebank's own kernels, not oneDNN's.
bool OwnConvAlgorithm(const std::string& algo) {
  return OwnWinogradTile(algo) || algo == kOwnDepthwiseAlgo || algo == kOwnVectorProductAlgo || algo == kOwnPackedGemmAlgo || algo == kOwnDirect1dAlgo;
}

// The convolution kernel of `op` with `post_ops` fused, for the policy's choice: the own Winograd,
// the own depthwise convolution, the own vector product, the own packed GEMM, the own 1-D
// convolution, oneDNN's, or ("auto") the faster of oneDNN's and the own 1-D convolution (a Conv1d
// it runs) or the own packed GEMM.
Result<std::unique_ptr<Kernel>> ConvKernelOf(const OpSpec& op, const std::vector<ChainStep>& post_ops, const CubeChoice& choice) {
  const ConvProblem p = AnalyzeConv(op).value();
  if (OwnWinogradTile(choice.algo)) return OwnWinogradConvKernel(p, op.outputs[0].shape, OwnWinogradTile(choice.algo), post_ops, choice.layout);
  if (choice.algo == kOwnDepthwiseAlgo) return OwnDepthwiseConvKernel(p, op.outputs[0].shape, post_ops, choice.layout, choice.impl);
  if (choice.algo == kOwnVectorProductAlgo) return OwnVectorProductConvKernel(p, op.outputs[0].shape, post_ops, choice.layout);
  if (choice.algo == kOwnPackedGemmAlgo) return OwnPackedGemmConvKernel(p, op.outputs[0].shape, post_ops, choice.layout);
  if (choice.algo == kOwnDirect1dAlgo) return OwnDirectConv1dKernel(p, op.outputs[0].shape, post_ops, choice.layout);
  if (choice.algo == "auto") {  // oneDNN's direct convolution, or an own kernel where it ran faster here
    CubeChoice direct = choice;
    direct.algo = "direct";
    auto onednn = [&] { return std::unique_ptr<Kernel>(new ConvKernel(p, op.outputs[0].shape, post_ops, direct)); };
    if (!choice.bf16() && choice.impl == "default" && OwnDirectConv1dRefuses(p).empty()) {
      if (OwnDirectConv1dRunsFaster(op, post_ops, onednn)) return OwnDirectConv1dKernel(p, op.outputs[0].shape, post_ops, choice.layout);
      // A dilated one oneDNN may run by im2col and GEMM (without AVX-512): the own packed GEMM, where faster.
      if ((p.dh > 1 || p.dw > 1) && OwnPackedGemmConvRefuses(p).empty() && OwnPackedGemmConvRunsFaster(op, post_ops, onednn))
        return OwnPackedGemmConvKernel(p, op.outputs[0].shape, post_ops, choice.layout);
      return onednn();
    }
    if (!choice.bf16() && choice.impl == "default" && OwnPackedGemmConvChunksFilters(p) &&
        OwnPackedGemmConvRunsFaster(op, post_ops, onednn))
      return OwnPackedGemmConvKernel(p, op.outputs[0].shape, post_ops, choice.layout);
    return onednn();
  }
  return std::unique_ptr<Kernel>(new ConvKernel(p, op.outputs[0].shape, post_ops, choice));
}

// The product kernel of `op` with `post_ops` fused, for the policy's choice: the own packed GEMM
// (algo "packed_gemm"; "auto": where it ran the instance faster than oneDNN's matmul on this host,
// remembered per instance and host), or oneDNN's matmul.
Result<std::unique_ptr<Kernel>> MatMulKernelOf(const OpSpec& op, const std::vector<ChainStep>& post_ops, const CubeChoice& choice) {
  const GemmProblem p = AnalyzeGemm(op).value();
  if (choice.algo == kOwnPackedGemmAlgo) return OwnPackedGemmKernel(p, op.outputs[0].shape, op.inputs.size(), post_ops);
  // By value: the own kernel keeps it to make oneDNN's where B turns out to be computed by the model.
  auto onednn = [p, shape = op.outputs[0].shape, inputs = op.inputs.size(), post_ops, choice] {
    return std::unique_ptr<Kernel>(new MatMulKernel(p, shape, inputs, post_ops, choice));
  };
  if (choice.algo == "auto" && !choice.bf16() && choice.impl == "default" && OwnPackedGemmRefuses(p, post_ops, op.outputs[0].shape).empty()) {
    if (OwnPackedGemmRunsFaster(op, post_ops, onednn)) return OwnPackedGemmKernel(p, op.outputs[0].shape, op.inputs.size(), post_ops, onednn);
  }
  return onednn();
}

class OneDnnLibraryTemplate : public OpTemplate {
 public:
  const char* id() const override { return "impl.onednn"; }
  std::vector<std::string> OpTypes() const override {
    std::vector<std::string> types = OpTypesOf(OpRole::kCube), vector = OneDnnVectorOps();
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
  // The vector ops have one policy; a cube op's knobs are what oneDNN offers for it here.
  SearchSpace Space(const OpSpec& op) const override {
    if (OneDnnImplementsVectorOp(op.op_type)) return {};
    return CubeSpace(OfferedFor(op), op.op_type == "Conv");
  }
  Policy DefaultPolicy(const OpSpec& op) const override {
    if (OneDnnImplementsVectorOp(op.op_type)) return MakePolicy({{"library", std::string("onednn")}});
    const CubeChoice d;
    if (op.op_type != "Conv") return MakePolicy({{"algo", std::string("auto")}, {"impl", d.impl}});
    // One output pixel: a run of oneDNN's primitive costs more than the own product computes
    // (EfficientNet-B0's squeeze-excitations: docs/PERFORMANCE.md).
    if (auto p = AnalyzeConv(op); p.ok() && OwnVectorProductRefuses(*p).empty())
      return MakePolicy({{"algo", std::string(kOwnVectorProductAlgo)}, {"impl", d.impl}, {"layout", std::string("plain")}});
    // A Conv1d: oneDNN's or the own 1-D convolution (no code made at load), timed at bind.
    if (auto p = AnalyzeConv(op); p.ok() && OwnDirectConv1dRefuses(*p).empty())
      return MakePolicy({{"algo", std::string("auto")}, {"impl", d.impl}, {"layout", d.layout}});
    // A dilated convolution oneDNN runs by im2col and GEMM (no JIT kernel for it without AVX-512):
    // the own packed GEMM reads each window in place (docs/PERFORMANCE.md).
    if (auto p = AnalyzeConv(op); p.ok() && (p->dh > 1 || p->dw > 1) && OwnPackedGemmConvRefuses(*p).empty() && OneDnnPicksGemm(op))
      return MakePolicy({{"algo", std::string(kOwnPackedGemmAlgo)}, {"impl", d.impl}, {"layout", d.layout}});
    // A filter depth K too large for one of the own packed GEMM's panels to stay in a core's cache:
    // oneDNN's or the own packed GEMM, timed at bind.
    if (auto p = AnalyzeConv(op); p.ok() && OwnPackedGemmConvChunksFilters(*p))
      return MakePolicy({{"algo", std::string("auto")}, {"impl", d.impl}, {"layout", d.layout}});
    return MakePolicy({{"algo", d.algo}, {"impl", d.impl}, {"layout", d.layout}});
  }
  Result<std::unique_ptr<Kernel>> Build(const OpSpec& op, const Policy& policy) const override {
    return CatchOneDnnErrors([&]() -> Result<std::unique_ptr<Kernel>> {
      if (OneDnnImplementsVectorOp(op.op_type)) return OneDnnVectorKernel(op);
      const CubeChoice choice = CubeChoice::Of(policy);
      if (op.op_type == "Conv") return ConvKernelOf(op, {}, choice);
      return MatMulKernelOf(op, {}, choice);
    });
  }

 private:
  // Whether oneDNN runs the convolution's direct algorithm by im2col and GEMM only, in every layout.
  // Remembered per instance, host and oneDNN release (measured_choice_cache.h): the walk of what
  // oneDNN offers makes a primitive descriptor per layout and algorithm, 2-3 ms each for a dilated
  // Conv1d on AVX-512, where a TCN's load is 0.1-0.2 s.
  static bool OneDnnPicksGemm(const OpSpec& op) {
    const std::string key = "onednn conv picks gemm v1|" + OneDnnVersionText() + "|" + op.canonical.text;
    if (const auto known = RecallMeasuredChoice(key)) return *known == "gemm";
    bool offered = false, jit = false;
    for (const Offered& o : OfferedFor(op)) {
      if (o.algo != "direct" || o.precision != "fp32") continue;
      if (o.impl.find("gemm") == std::string::npos) jit = true;
      offered = true;
    }
    const bool gemm = offered && !jit;
    RememberMeasuredChoice(key, gemm ? "gemm" : "other");
    return gemm;
  }
  // One implementation oneDNN offers for a cube op: its name, and for a convolution the algorithm
  // and activations' layout ("blocked": oneDNN's choice, "plain", "nhwc") it was offered with; and
  // the precision it computes in ("bf16": only oneDNN's first implementation, where it is native).
  struct Offered {
    std::string algo, layout, impl, precision = "fp32";
  };
  // What oneDNN offers for the op on this host, asked once per description (the space, the policy
  // check and the default all ask, for every node a model binds).
  static std::vector<Offered> OfferedFor(const OpSpec& op) {
    static std::mutex mutex;
    static std::map<std::string, std::vector<Offered>> known;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (auto it = known.find(op.canonical.text); it != known.end()) return it->second;
    }
    std::vector<Offered> found;
    try {
      if (op.op_type == "Conv") {
        const ConvProblem p = AnalyzeConv(op).value();
        for (const char* algo : {"direct", "winograd"})
          for (const char* layout : {"blocked", "plain", "nhwc"}) {
            try {
              const auto desc = ConvDesc(p, algo, layout);  // alive while the walk reads it
              dnnl::convolution_forward::primitive_desc pd(desc, OneDnnCpuEngine());
              for (auto& name : OfferedImplementations(pd)) found.push_back({algo, layout, std::move(name)});
            } catch (const dnnl::error&) {  // this oneDNN has no such convolution here (Winograd on AVX2, say)
            }
          }
        for (const char* layout : {"blocked", "nhwc"}) {
          try {
            const auto desc = ConvDesc(p, "direct", layout, true);
            const dnnl::convolution_forward::primitive_desc pd(desc, OneDnnCpuEngine());
            if (NativeBf16Implementation(pd.impl_info_str())) found.push_back({"direct", layout, "default", "bf16"});
          } catch (const dnnl::error&) {
          }
        }
        for (auto& [algo, layout] : OwnWinogradOffers(p)) found.push_back({std::move(algo), std::move(layout), "default"});
        for (OwnDepthwiseOffer& o : OwnDepthwiseOffers(p)) found.push_back({std::move(o.algo), std::move(o.layout), std::move(o.impl)});
        if (OwnVectorProductRefuses(p).empty()) found.push_back({kOwnVectorProductAlgo, "plain", "default"});
        if (OwnPackedGemmConvRefuses(p).empty())
          for (const char* layout : {"nhwc", "plain"}) found.push_back({kOwnPackedGemmAlgo, layout, "default"});
        if (OwnDirectConv1dRefuses(p).empty()) found.push_back({kOwnDirect1dAlgo, "plain", "default"});
        if (OwnPackedGemmConvChunksFilters(p) || OwnDirectConv1dRefuses(p).empty()) {  // the built-in choice there, and its bf16 twin (oneDNN's)
          const bool bf16 = std::any_of(found.begin(), found.end(), [](const Offered& o) { return o.precision == "bf16"; });
          found.push_back({"auto", "auto", "default"});
          if (bf16) found.push_back({"auto", "auto", "default", "bf16"});
        }
      } else {
        std::optional<Tensor> bias;
        if (op.inputs.size() > 2) bias.emplace(op.inputs[2].shape);
        const GemmProblem p = AnalyzeGemm(op).value();
        MatMulKernel kernel(p, op.outputs[0].shape, op.inputs.size());
        for (auto& name : kernel.Offered(bias ? &*bias : nullptr)) found.push_back({"direct", "", std::move(name)});
        if (OwnPackedGemmRefuses(p, {}, op.outputs[0].shape).empty()) found.push_back({kOwnPackedGemmAlgo, "", "default"});
        if (!p.b_batched) {  // bf16 prepacks B: weights only
          CubeChoice bf16;
          bf16.precision = "bf16";
          MatMulKernel lowered(p, op.outputs[0].shape, op.inputs.size(), {}, bf16);
          try {
            std::string first;  // the one a bf16 policy builds
            lowered.Offered(bias ? &*bias : nullptr, &first);
            if (NativeBf16Implementation(first)) found.push_back({"direct", "", "default", "bf16"});
          } catch (const dnnl::error&) {
          }
        }
      }
    } catch (const dnnl::error&) {
    }
    std::lock_guard<std::mutex> lock(mutex);
    return known.emplace(op.canonical.text, std::move(found)).first->second;
  }

  // impl: "default" and every name offered; a convolution also picks its algorithm and layout,
  // and a policy is valid when oneDNN offers that combination ("auto" times both layouts at load
  // with oneDNN's first implementation of each). The knob `precision` (unset: fp32) is there where
  // oneDNN computes the op in bf16 natively; the job's precision mode decides whether it is tried.
  static SearchSpace CubeSpace(const std::vector<Offered>& offered, bool conv) {
    SearchSpace space;
    KnobDomain impl{"impl", {std::string("default")}, TuneMode::kSchedule};
    KnobDomain algo{"algo", {}, TuneMode::kSchedule};
    KnobDomain precision{kPrecisionKnob, {std::string("fp32")}, TuneMode::kSchedule, std::string("fp32")};
    auto has = [](const KnobDomain& d, const std::string& v) { return std::find(d.values.begin(), d.values.end(), KnobValue(v)) != d.values.end(); };
    for (const Offered& o : offered) {
      if (!has(impl, o.impl)) impl.values.emplace_back(o.impl);
      if (!has(algo, o.algo)) algo.values.emplace_back(o.algo);
      if (!has(precision, o.precision)) precision.values.emplace_back(o.precision);
    }
    const bool lowered = precision.values.size() > 1;
    if (!conv) {  // a product: oneDNN's implementations ("direct", the unset value of policies from before the knob), the own packed GEMM, or the faster of the two ("auto")
      algo.unset = std::string("direct");
      for (const char* always : {"direct", "auto"})
        if (!has(algo, always)) algo.values.insert(algo.values.begin(), std::string(always));
      space.knobs = {algo, impl};
      if (lowered) space.knobs.insert(space.knobs.begin(), precision);
      space.valid = [](const Policy& policy) {
        const CubeChoice c = CubeChoice::Of(policy);
        // The own kernel: float32 only. "auto": oneDNN's first implementation, timed against the
        // own kernel in float32; in bf16 it is oneDNN's, as "direct" (no own bf16 kernel to time).
        if (c.algo != "direct" && c.impl != "default") return false;
        if (c.algo == kOwnPackedGemmAlgo && c.bf16()) return false;
        return !LowersPrecision(policy) || c.impl == "default";
      };
      return space;
    }
    if (algo.values.empty()) algo.values.emplace_back(std::string("direct"));
    space.knobs = {algo, impl, KnobDomain{"layout", {std::string("auto"), std::string("blocked"), std::string("plain"), std::string("nhwc"), std::string("convert")}, TuneMode::kFormat}};
    // First: where a job allows it, bf16 is the likeliest gain (half the work per product), so the
    // near policies the search starts with try it before the other knobs.
    if (lowered) space.knobs.insert(space.knobs.begin(), precision);
    space.valid = [offered](const Policy& policy) {
      const CubeChoice c = CubeChoice::Of(policy);
      if (c.layout == "auto" && c.impl != "default") return false;
      if (OwnConvAlgorithm(c.algo) && c.layout == "convert") return false;  // its own layouts or NCHW
      if (offered.empty()) return c.impl == "default" && !c.bf16();  // oneDNN offered nothing: the kernel's build says why
      return std::any_of(offered.begin(), offered.end(), [&](const Offered& o) {
        const std::string layout = c.layout == "convert" ? "blocked" : c.layout;  // its own layout, the neighbours' converted
        return o.precision == c.precision && o.algo == c.algo && (layout == "auto" || o.layout == layout) && (c.impl == "default" || o.impl == c.impl);
      });
    };
    return space;
  }
};

}  // namespace

Result<std::unique_ptr<Kernel>> OneDnnFusedKernel(const OpSpec& anchor, const std::vector<ChainStep>& post_ops, const Policy& anchor_policy) {
  for (const ChainStep& op : post_ops)
    if (!IsOneDnnPostOp(op.op_type)) return Status::InvalidInput("oneDNN has no post-op for " + op.op_type);
  if (Status s = tilebank::engine::OneDnnImpl().Supports(anchor); !s.ok()) return s;
  return CatchOneDnnErrors([&]() -> Result<std::unique_ptr<Kernel>> {
    const CubeChoice choice = CubeChoice::Of(anchor_policy.empty() ? OneDnnImpl().DefaultPolicy(anchor) : anchor_policy);
    if (anchor.op_type == "Conv") {
      auto kernel = ConvKernelOf(anchor, post_ops, choice);
      // The built-in choice of an own kernel gives way to oneDNN's where the chain is not one it fuses.
      if (!kernel.ok() && anchor_policy.empty() && OwnConvAlgorithm(choice.algo)) return ConvKernelOf(anchor, post_ops, CubeChoice{});
      return kernel;
    }
    if (anchor.op_type == "MatMul" || anchor.op_type == "Gemm" || anchor.op_type == "BatchMatMul") return MatMulKernelOf(anchor, post_ops, choice);
    return Status::InvalidInput("oneDNN fuses post-ops into Conv, MatMul and Gemm, not " + anchor.op_type);
  });
}

const OpTemplate& OneDnnImpl() {
  static const OneDnnLibraryTemplate t;
  return t;
}

bool OneDnnConvAddsResidualOnce(const OpSpec& conv) {
  const auto p = AnalyzeConv(conv);
  if (!p.ok()) return true;
  try {
    dnnl::post_ops sum;
    sum.append_sum(1.f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(sum);
    const auto desc = ConvDesc(p.value(), "direct", "auto");  // alive while the descriptor reads it
    const dnnl::convolution_forward::primitive_desc pd(desc, attr, OneDnnCpuEngine());
    return !AccumulatesOnResidual(pd.impl_info_str());
  } catch (const dnnl::error&) {  // no such convolution: nothing to fuse the sum into either
    return true;
  }
}

}  // namespace tilebank::engine
