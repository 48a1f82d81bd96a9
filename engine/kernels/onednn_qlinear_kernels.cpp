// The fast paths of the registry's QLinearConv and QLinearMatMul: oneDNN's int8 convolution and
// matmul (u8 or s8 activations, s8 weights, s32 accumulation), the scales x_scale * w_scale /
// y_scale per output channel as output scales, the zero points of x and y as oneDNN's, the int32
// bias added to the accumulator, and the Relu or Clip the QDQ fusion (engine/passes/qdq_fusion.h)
// folds in as a post-op (it clamps y at its zero point, or to the clip's quantized bounds). The weights are reordered into oneDNN's layout
// once per input shape. What oneDNN cannot take (u8 or zero-pointed weights, other ranks, a oneDNN
// error) runs the reference kernel (quantize_kernels.cpp), which computes the same.
//
// Without VNNI (AVX2, AVX-512 before Cascade Lake) oneDNN multiplies u8 x s8 with vpmaddubsw, which
// adds pairs of products into int16 and saturates: 255 * 127 * 2 overflows it, and a pair of large
// weights of one sign then loses the difference (an MLP's outputs came out 17 steps off). There the
// weights are made 7-bit: halved (rounded half to even, within [-64, 64], so a pair sums to at most
// 255 * 64 * 2 < 32767) with their scales doubled and the bias halved in float32. That costs one bit
// of the weights' precision, as oneDNN's own scale adjustment for such hosts does; hosts with VNNI
// (vpdpbusd sums in int32) keep every bit.
#include <mutex>

#include "engine/backends/onednn/onednn_common.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/onednn_qlinear_kernels.h"
#include "engine/kernels/spatial_window.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

using dnnl::memory;

memory::data_type OneDnnType(DType t) {
  switch (t) {
    case DType::kUInt8: return memory::data_type::u8;
    case DType::kInt8: return memory::data_type::s8;
    case DType::kInt32: return memory::data_type::s32;
    default: return memory::data_type::f32;
  }
}

memory::desc Plain(const std::vector<int64_t>& shape, DType t) {
  const std::vector<int64_t> strides = Strides(shape);
  return memory::desc(memory::dims(shape.begin(), shape.end()), OneDnnType(t), memory::dims(strides.begin(), strides.end()));
}

memory::desc Any(const std::vector<int64_t>& shape, DType t) { return memory::desc(memory::dims(shape.begin(), shape.end()), OneDnnType(t), memory::format_tag::any); }

bool IsInt8(const TypedTensor* t) { return t && (t->dtype == DType::kUInt8 || t->dtype == DType::kInt8); }

// The weights' zero points are all 0 (oneDNN's weights carry none).
bool ZeroWeightZeroPoint(const TypedTensor* wzp) {
  if (!wzp) return true;
  for (int64_t i = 0; i < wzp->size(); ++i)
    if (wzp->At(i) != 0) return false;
  return true;
}

// x_scale * w_scale[m] / y_scale for each of `M` output channels (times 2 for halved weights).
std::vector<float> OutputScales(const TypedTensor& xs, const TypedTensor& ws, const TypedTensor& ys, int64_t M, bool halved) {
  std::vector<float> scales(static_cast<size_t>(M));
  for (int64_t m = 0; m < M; ++m) scales[m] = static_cast<float>(xs.At(0) * ws.At(ws.size() == 1 ? 0 : m) / ys.At(0) * (halved ? 2 : 1));
  return scales;
}

// Whether oneDNN's int8 products sum in int32 here (VNNI), as ONEDNN_MAX_CPU_ISA limits it.
bool HostHasVnni() {
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx512_core_vnni || isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx ||
         isa == dnnl::cpu_isa::avx2_vnni;
}

// The int8 weights oneDNN is given: as they are, or halved to 7 bits (see the file's comment).
std::vector<int8_t> KernelWeights(const TypedTensor& w, bool halve) {
  const auto* src = reinterpret_cast<const int8_t*>(w.bytes.data());
  std::vector<int8_t> out(src, src + w.size());
  if (halve)
    for (auto& v : out) v = static_cast<int8_t>(std::nearbyint(v / 2.0));
  return out;
}

// int8 weights, row-major in `dims`, reordered once into the layout the primitive chose (`layout`).
memory PackedWeights(const int8_t* data, const std::vector<int64_t>& dims, const memory::desc& layout, dnnl::stream& stream) {
  dnnl::engine& engine = OneDnnCpuEngine();
  memory user(Plain(dims, DType::kInt8), engine, const_cast<int8_t*>(data));
  memory packed(layout, engine);
  dnnl::reorder(user, packed).execute(stream, user, packed);
  stream.wait();
  return packed;
}

// The bias memory: int32 as given, or (halved weights) float32 halves, in the accumulator's units.
dnnl::memory BiasMemory(const TypedTensor& b, int64_t n, bool halve, const dnnl::memory::desc& md, const dnnl::engine& engine) {
  dnnl::memory m(md, engine);
  const auto* src = reinterpret_cast<const int32_t*>(b.bytes.data());
  if (!halve) {
    std::memcpy(m.get_data_handle(), src, static_cast<size_t>(n) * sizeof(int32_t));
  } else {
    auto* dst = static_cast<float*>(m.get_data_handle());
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]) / 2.0f;
  }
  return m;
}

// Output scales, zero points and the folded activation (post-ops act on y / y_scale, before y's zero
// point is added).
dnnl::primitive_attr QuantAttr(const KernelInfo& info, const std::vector<float>& scales, int32_t x_zero, const TypedTensor& y_scale,
                               int32_t y_zero, int channel_mask) {
  dnnl::primitive_attr attr;
  attr.set_output_scales(scales.size() == 1 ? 0 : channel_mask, scales);
  if (x_zero) attr.set_zero_points(DNNL_ARG_SRC, 0, {x_zero});
  if (y_zero) attr.set_zero_points(DNNL_ARG_DST, 0, {y_zero});
  dnnl::post_ops ops;
  if (info.attrs.Int("relu", 0)) ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  if (info.attrs.Has("clip_low")) {
    // The reference clamps to the bounds' rounded quantized values; so does this.
    const float ys = static_cast<float>(y_scale.At(0));
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, std::nearbyint(info.attrs.Float("clip_low", 0) / ys),
                       std::nearbyint(info.attrs.Float("clip_high", 0) / ys));
  }
  if (ops.len() > 0) attr.set_post_ops(ops);
  return attr;
}

// A 4-D tensor of 1-byte elements, logically [N, C, H, W], between channels-first and channels-last order.
TypedTensor Transposed4D(const TypedTensor& t, bool to_channels_last) {
  TypedTensor r(t.dtype, t.shape);
  const int64_t N = t.shape[0], C = t.shape[1], HW = t.shape[2] * t.shape[3];
  const auto* src = reinterpret_cast<const uint8_t*>(t.bytes.data());
  auto* dst = reinterpret_cast<uint8_t*>(r.bytes.data());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < HW; ++i) {
        const int64_t first = (n * C + c) * HW + i, last = (n * HW + i) * C + c;
        if (to_channels_last) dst[last] = src[first];
        else dst[first] = src[last];
      }
  return r;
}

// The implementation a policy names (the "onednn_impl" attribute: oneDNN's impl_info_str, the
// int8.onednn template's knob), or oneDNN's first choice but its reference when none is named.
// With `listing`, the names of every implementation but the reference ones go there instead.
template <class PrimitiveDesc>
Status ChooseImplementation(PrimitiveDesc& pd, const std::string& wanted, std::vector<std::string>* listing) {
  if (listing) {
    do {
      if (RefuseReference(pd).ok()) listing->push_back(pd.impl_info_str());
    } while (pd.next_impl());
    return Status::Ok();
  }
  if (wanted.empty()) return RefuseReference(pd);
  do {
    if (wanted == pd.impl_info_str()) return Status::Ok();
  } while (pd.next_impl());
  return Status::Refused("oneDNN has no implementation " + wanted + " for this op here");
}

// A kernel's policy: the implementation named, "reference" for the registry's reference kernel.
std::string WantedImplementation(const KernelInfo& info) { return info.attrs.String("onednn_impl", ""); }

class OneDnnQLinearConv : public OpKernel {
 public:
  OneDnnQLinearConv(KernelInfo info, std::unique_ptr<OpKernel> reference)
      : info_(std::move(info)), reference_(std::move(reference)), x_nhwc_(info_.attrs.Int("x_nhwc", 0) != 0), y_nhwc_(info_.attrs.Int("y_nhwc", 0) != 0),
        wanted_(WantedImplementation(info_)) {}

  // The oneDNN implementations that take these operands (an error where oneDNN takes none).
  Result<std::vector<std::string>> Implementations(const KernelInputs& in) const {
    if (!Takes(in)) return Status::Refused("not for oneDNN");
    std::vector<std::string> names;
    TB_RETURN_IF_ERROR(CatchOneDnnErrors([&]() -> Status { return Prepare(in, &names); }));
    return names;
  }

  Status Compute(const KernelInputs& in, std::vector<TypedTensor>* out) const override {
    Status s = Status::Refused("not for oneDNN");
    if (Takes(in) && wanted_ != "reference") {
      std::lock_guard<std::mutex> lock(mutex_);
      s = CatchOneDnnErrors([&]() -> Status { return Convolve(in, out); });
    }
    if (s.ok()) return s;
    if (!x_nhwc_ && !y_nhwc_) return reference_->Compute(in, out);
    // x or y handed over channels-last (engine/passes/qdq_fusion.h): the reference reads and writes
    // them channels-first, so they are transposed around it.
    KernelInputs args = in;
    TypedTensor x_first;
    if (x_nhwc_) {
      x_first = Transposed4D(*in[0], /*to_channels_last=*/false);
      args[0] = &x_first;
    }
    TB_RETURN_IF_ERROR(reference_->Compute(args, out));
    if (y_nhwc_) (*out)[0] = Transposed4D((*out)[0], /*to_channels_last=*/true);
    return Status::Ok();
  }

 private:
  // x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
  static bool Takes(const KernelInputs& in) {
    return in.size() >= 8 && IsInt8(in[0]) && in[3] && in[3]->dtype == DType::kInt8 && in[0]->rank() >= 3 && in[0]->rank() <= 5 &&
                       in[3]->rank() == in[0]->rank() && in[1] && in[4] && in[6] && in[7] && IsInt8(in[7]) && ZeroWeightZeroPoint(in[5]) &&
                       (in.size() < 9 || !in[8] || in[8]->dtype == DType::kInt32);
  }

  struct Plan {
    std::vector<int64_t> x_shape, w_shape, y_shape;
    const void* w_data = nullptr;
    DType x_type, y_type;
    dnnl::primitive conv;
    memory weights, bias, src, dst;
    bool src_plain = true, dst_plain = true;
  };

  // The plan for these operands; with `listing`, only the names of the implementations that take them.
  Status Prepare(const KernelInputs& in, std::vector<std::string>* listing = nullptr) const {
    const TypedTensor &x = *in[0], &w = *in[3];
    auto window = SpatialWindow::Resolve(info_, {x.shape.begin() + 2, x.shape.end()}, {w.shape.begin() + 2, w.shape.end()});
    if (!window.ok()) return window.status();
    const int64_t N = x.shape[0], C = x.shape[1], M = w.shape[0], group = info_.attrs.Int("group", 1);
    if (group < 1 || C % group || M % group || w.shape[1] != C / group) return info_.Bad("X, W and group do not agree");
    Plan p;
    p.x_shape = x.shape, p.w_shape = w.shape, p.w_data = w.bytes.data(), p.x_type = x.dtype, p.y_type = in[7]->dtype;
    p.y_shape = {N, M};
    p.y_shape.insert(p.y_shape.end(), window->out.begin(), window->out.end());
    std::vector<int64_t> w_dims = w.shape;
    if (group > 1) {
      w_dims[0] = M / group;
      w_dims.insert(w_dims.begin(), group);
    }
    memory::dims strides(window->strides.begin(), window->strides.end()), dilates, pad_l(window->pad_begin.begin(), window->pad_begin.end()),
        pad_r(window->pad_end.begin(), window->pad_end.end());
    for (int64_t d : window->dilations) dilates.push_back(d - 1);
    const bool has_bias = in.size() > 8 && in[8];
    const bool halve = !HostHasVnni();
    const memory::desc bias_md = has_bias ? Plain({M}, halve ? DType::kFloat32 : DType::kInt32) : memory::desc();
    const auto scales = OutputScales(*in[1], *in[4], *in[6], M, halve);
    const auto attr = QuantAttr(info_, scales, in[2] ? static_cast<int32_t>(in[2]->At(0)) : 0, *in[6], static_cast<int32_t>(in[7]->At(0)), 1 << 1);
    dnnl::engine& engine = OneDnnCpuEngine();
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, Any(x.shape, x.dtype),
                                         Any(w_dims, DType::kInt8), bias_md, Any(p.y_shape, p.y_type), strides, dilates, pad_l, pad_r);
    dnnl::convolution_forward::primitive_desc pd(desc, attr, engine);
    TB_RETURN_IF_ERROR(ChooseImplementation(pd, wanted_, listing));
    if (listing) return Status::Ok();
    p.conv = dnnl::convolution_forward(pd);
    dnnl::stream stream(engine);
    p.weights = PackedWeights(KernelWeights(w, halve).data(), w_dims, pd.weights_desc(), stream);
    if (has_bias) p.bias = BiasMemory(*in[8], M, halve, bias_md, engine);
    stream.wait();
    p.src_plain = pd.src_desc() == UserDesc(x.shape, x.dtype, x_nhwc_);
    p.dst_plain = pd.dst_desc() == UserDesc(p.y_shape, p.y_type, y_nhwc_);
    if (!p.src_plain) p.src = memory(pd.src_desc(), engine);
    if (!p.dst_plain) p.dst = memory(pd.dst_desc(), engine);
    plan_ = std::move(p);
    return Status::Ok();
  }

  Status Convolve(const KernelInputs& in, std::vector<TypedTensor>* out) const {
    if (!plan_ || plan_->x_shape != in[0]->shape || plan_->w_shape != in[3]->shape || plan_->w_data != in[3]->bytes.data() ||
        plan_->x_type != in[0]->dtype) {
      plan_.reset();
      TB_RETURN_IF_ERROR(Prepare(in));
    }
    Plan& p = *plan_;
    dnnl::engine& engine = OneDnnCpuEngine();
    dnnl::stream stream(engine);
    TypedTensor& y = (*out)[0];  // last run's memory, when the caller passes it back
    ReshapeForOverwrite(&y, p.y_type, p.y_shape);
    memory user_x(UserDesc(p.x_shape, p.x_type, x_nhwc_), engine, const_cast<std::byte*>(in[0]->bytes.data()));
    memory user_y(UserDesc(p.y_shape, p.y_type, y_nhwc_), engine, y.bytes.data());
    if (!p.src_plain) dnnl::reorder(user_x, p.src).execute(stream, user_x, p.src);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, p.src_plain ? user_x : p.src}, {DNNL_ARG_WEIGHTS, p.weights}, {DNNL_ARG_DST, p.dst_plain ? user_y : p.dst}};
    if (p.bias) args[DNNL_ARG_BIAS] = p.bias;
    p.conv.execute(stream, args);
    if (!p.dst_plain) dnnl::reorder(p.dst, user_y).execute(stream, p.dst, user_y);
    stream.wait();
    return Status::Ok();
  }

  // Row-major, or channels-last for a 4-D tensor handed over so.
  static memory::desc UserDesc(const std::vector<int64_t>& shape, DType t, bool nhwc) {
    if (!nhwc || shape.size() != 4) return Plain(shape, t);
    return memory::desc(memory::dims(shape.begin(), shape.end()), OneDnnType(t), memory::format_tag::nhwc);
  }

  KernelInfo info_;
  std::unique_ptr<OpKernel> reference_;
  bool x_nhwc_, y_nhwc_;
  std::string wanted_;
  mutable std::mutex mutex_;
  mutable std::optional<Plan> plan_;
};

// QLinearMatMul(a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero[, bias int32]) with a's rows
// flattened into one 2-D product and b a [K, N] s8 matrix (the weights of a Linear layer).
class OneDnnQLinearMatMul : public OpKernel {
 public:
  OneDnnQLinearMatMul(KernelInfo info, std::unique_ptr<OpKernel> reference)
      : info_(std::move(info)), reference_(std::move(reference)), wanted_(WantedImplementation(info_)) {}

  // The oneDNN implementations that take these operands (an error where oneDNN takes none).
  Result<std::vector<std::string>> Implementations(const KernelInputs& in) const {
    if (!Takes(in)) return Status::Refused("not for oneDNN");
    std::vector<std::string> names;
    TB_RETURN_IF_ERROR(CatchOneDnnErrors([&]() -> Status { return Prepare(in, &names); }));
    return names;
  }

  Status Compute(const KernelInputs& in, std::vector<TypedTensor>* out) const override {
    if (!Takes(in) || wanted_ == "reference") return reference_->Compute(in, out);
    std::lock_guard<std::mutex> lock(mutex_);
    Status s = CatchOneDnnErrors([&]() -> Status { return Multiply(in, out); });
    if (!s.ok()) return reference_->Compute(in, out);
    return s;
  }

 private:
  static bool Takes(const KernelInputs& in) {
    return in.size() >= 8 && IsInt8(in[0]) && in[0]->rank() >= 2 && in[3] && in[3]->dtype == DType::kInt8 && in[3]->rank() == 2 &&
                       in[0]->shape.back() == in[3]->shape[0] && in[1] && in[1]->size() == 1 && in[4] && in[6] && in[7] && IsInt8(in[7]) &&
                       (!in[2] || in[2]->size() == 1) && ZeroWeightZeroPoint(in[5]) && (in.size() < 9 || !in[8] || in[8]->dtype == DType::kInt32);
  }

  struct Plan {
    std::vector<int64_t> a_shape;
    const void* b_data = nullptr;
    DType a_type, y_type;
    int64_t M = 0, K = 0, N = 0;
    dnnl::primitive matmul;
    memory weights, bias;
  };

  // The plan for these operands; with `listing`, only the names of the implementations that take them.
  Status Prepare(const KernelInputs& in, std::vector<std::string>* listing = nullptr) const {
    const TypedTensor &a = *in[0], &b = *in[3];
    Plan p;
    p.a_shape = a.shape, p.b_data = b.bytes.data(), p.a_type = a.dtype, p.y_type = in[7]->dtype;
    p.K = b.shape[0], p.N = b.shape[1], p.M = a.size() / p.K;
    const bool has_bias = in.size() > 8 && in[8];
    const bool halve = !HostHasVnni();
    const auto scales = OutputScales(*in[1], *in[4], *in[6], p.N, halve);
    const auto attr = QuantAttr(info_, scales, in[2] ? static_cast<int32_t>(in[2]->At(0)) : 0, *in[6], static_cast<int32_t>(in[7]->At(0)), 1 << 1);
    dnnl::engine& engine = OneDnnCpuEngine();
    const memory::desc bias_md = has_bias ? Plain({1, p.N}, halve ? DType::kFloat32 : DType::kInt32) : memory::desc();
    dnnl::matmul::desc desc(Plain({p.M, p.K}, a.dtype), Any({p.K, p.N}, DType::kInt8), bias_md, Plain({p.M, p.N}, p.y_type));
    dnnl::matmul::primitive_desc pd(desc, attr, engine);
    TB_RETURN_IF_ERROR(ChooseImplementation(pd, wanted_, listing));
    if (listing) return Status::Ok();
    p.matmul = dnnl::matmul(pd);
    dnnl::stream stream(engine);
    p.weights = PackedWeights(KernelWeights(b, halve).data(), {p.K, p.N}, pd.weights_desc(), stream);
    if (has_bias) p.bias = BiasMemory(*in[8], p.N, halve, bias_md, engine);
    stream.wait();
    plan_ = std::move(p);
    return Status::Ok();
  }

  Status Multiply(const KernelInputs& in, std::vector<TypedTensor>* out) const {
    if (!plan_ || plan_->a_shape != in[0]->shape || plan_->b_data != in[3]->bytes.data() || plan_->a_type != in[0]->dtype) {
      plan_.reset();
      TB_RETURN_IF_ERROR(Prepare(in));
    }
    Plan& p = *plan_;
    std::vector<int64_t> y_shape = p.a_shape;
    y_shape.back() = p.N;
    TypedTensor& y = (*out)[0];  // last run's memory, when the caller passes it back
    ReshapeForOverwrite(&y, p.y_type, y_shape);
    dnnl::engine& engine = OneDnnCpuEngine();
    dnnl::stream stream(engine);
    memory user_a(Plain({p.M, p.K}, p.a_type), engine, const_cast<std::byte*>(in[0]->bytes.data()));
    memory user_y(Plain({p.M, p.N}, p.y_type), engine, y.bytes.data());
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, user_a}, {DNNL_ARG_WEIGHTS, p.weights}, {DNNL_ARG_DST, user_y}};
    if (p.bias) args[DNNL_ARG_BIAS] = p.bias;
    p.matmul.execute(stream, args);
    stream.wait();
    return Status::Ok();
  }

  KernelInfo info_;
  std::unique_ptr<OpKernel> reference_;
  std::string wanted_;
  mutable std::mutex mutex_;
  mutable std::optional<Plan> plan_;
};

// A's rows (u8 or s8, flattened to [M, K]) times int8 weights B [K, N], summed into int32 on
// oneDNN's matmul with no run-time attributes: given a run-time zero point (or run-time scales),
// oneDNN 2.6 leaves its brgemm kernels (AMX, VNNI) for its generic gemm, several times slower. A's
// zero point is applied after: sum_k (a - z) b = sum_k a b - z * column_sums[n]. Made once per
// shape and weights; the weights are halved to 7 bits where `halve` (see the file's comment).
struct Int8MatMulPlan {
  std::vector<int64_t> a_shape;
  const void* b_data = nullptr;
  DType a_type = DType::kUInt8;
  int64_t M = 0, K = 0, N = 0;
  bool halve = false;
  dnnl::primitive matmul;
  memory weights;
  std::vector<int32_t> column_sums;  // of the weights oneDNN multiplies

  bool Fits(const TypedTensor& a, const TypedTensor& b) const { return a_shape == a.shape && b_data == b.bytes.data() && a_type == a.dtype; }

  static Result<Int8MatMulPlan> Make(const TypedTensor& a, const TypedTensor& b, bool halve) {
    Int8MatMulPlan p;
    p.a_shape = a.shape, p.b_data = b.bytes.data(), p.a_type = a.dtype, p.halve = halve;
    p.K = b.shape[0], p.N = b.shape[1], p.M = a.size() / p.K;
    dnnl::engine& engine = OneDnnCpuEngine();
    dnnl::matmul::desc desc(Plain({p.M, p.K}, a.dtype), Any({p.K, p.N}, DType::kInt8), memory::desc(), Plain({p.M, p.N}, DType::kInt32));
    dnnl::matmul::primitive_desc pd(desc, engine);
    TB_RETURN_IF_ERROR(RefuseReference(pd));
    p.matmul = dnnl::matmul(pd);
    const std::vector<int8_t> kernel_b = KernelWeights(b, halve);
    p.column_sums.assign(static_cast<size_t>(p.N), 0);
    for (int64_t k = 0; k < p.K; ++k)
      for (int64_t n = 0; n < p.N; ++n) p.column_sums[n] += kernel_b[k * p.N + n];
    dnnl::stream stream(engine);
    p.weights = PackedWeights(kernel_b.data(), {p.K, p.N}, pd.weights_desc(), stream);
    return p;
  }

  // acc (M x N) = A . B, A's zero point not subtracted.
  void Multiply(const TypedTensor& a, int32_t* acc) const {
    dnnl::engine& engine = OneDnnCpuEngine();
    dnnl::stream stream(engine);
    memory user_a(Plain({M, K}, a.dtype), engine, const_cast<std::byte*>(a.bytes.data()));
    memory user_acc(Plain({M, N}, DType::kInt32), engine, acc);
    ExecuteAndWait(matmul, stream, {{DNNL_ARG_SRC, user_a}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, user_acc}});
  }
};

// The plan for a and b in `plan`, made again when they changed.
Status EnsurePlan(std::optional<Int8MatMulPlan>* plan, const TypedTensor& a, const TypedTensor& b, bool halve) {
  if (*plan && (*plan)->Fits(a, b)) return Status::Ok();
  plan->reset();
  auto made = Int8MatMulPlan::Make(a, b, halve);
  if (!made.ok()) return made.status();
  *plan = std::move(made.value());
  return Status::Ok();
}

// MatMulInteger: A's rows flattened into one product with B [K, N] (int8, zero point 0), int32 out,
// A's zero point (DynamicQuantizeLinear picks it per run) subtracted after. Only where products
// sum in int32 (VNNI): MatMulInteger's result is exact by definition.
class OneDnnMatMulInteger : public OpKernel {
 public:
  OneDnnMatMulInteger(KernelInfo info, std::unique_ptr<OpKernel> reference) : info_(std::move(info)), reference_(std::move(reference)) {}

  Status Compute(const KernelInputs& in, std::vector<TypedTensor>* out) const override {
    const bool takes = HostHasVnni() && in.size() >= 2 && IsInt8(in[0]) && in[0]->rank() >= 2 && in[1] && in[1]->dtype == DType::kInt8 &&
                       in[1]->rank() == 2 && in[0]->shape.back() == in[1]->shape[0] && (in.size() < 3 || !in[2] || in[2]->size() == 1) &&
                       ZeroWeightZeroPoint(in.size() > 3 ? in[3] : nullptr);
    if (!takes) return reference_->Compute(in, out);
    std::lock_guard<std::mutex> lock(mutex_);
    Status s = CatchOneDnnErrors([&]() -> Status { return Multiply(in, out); });
    if (!s.ok()) return reference_->Compute(in, out);
    return s;
  }

 private:
  Status Multiply(const KernelInputs& in, std::vector<TypedTensor>* out) const {
    const TypedTensor& a = *in[0];
    TB_RETURN_IF_ERROR(EnsurePlan(&plan_, a, *in[1], /*halve=*/false));
    const Int8MatMulPlan& p = *plan_;
    std::vector<int64_t> y_shape = a.shape;
    y_shape.back() = p.N;
    TypedTensor& y = (*out)[0];  // last run's memory, when the caller passes it back
    ReshapeForOverwrite(&y, DType::kInt32, y_shape);
    int32_t* acc = y.data<int32_t>();
    p.Multiply(a, acc);
    const int32_t zero = in.size() > 2 && in[2] ? static_cast<int32_t>(in[2]->At(0)) : 0;
    if (zero)
      for (int64_t m = 0; m < p.M; ++m)
        for (int64_t n = 0; n < p.N; ++n) acc[m * p.N + n] -= zero * p.column_sums[n];
    return Status::Ok();
  }

  KernelInfo info_;
  std::unique_ptr<OpKernel> reference_;
  mutable std::mutex mutex_;
  mutable std::optional<Int8MatMulPlan> plan_;
};

class DynamicQuantizedMatMul : public OpKernel {
 public:
  explicit DynamicQuantizedMatMul(KernelInfo info) : info_(std::move(info)) {}

  Status Compute(const KernelInputs& in, std::vector<TypedTensor>* out) const override {
    if (in.size() < 5 || !IsInt8(in[0]) || in[0]->rank() < 1 || !in[1] || in[1]->dtype != DType::kInt8 || in[1]->rank() != 2 ||
        in[0]->shape.back() != in[1]->shape[0] || !in[3] || !in[4])
      return info_.Bad("takes x_q, W_q [K, N] int8, x_zero_point, x_scale, w_scale[, bias]");
    std::lock_guard<std::mutex> lock(mutex_);
    Status s = CatchOneDnnErrors([&]() -> Status { return Multiply(in, out); });
    if (s.ok()) return s;
    return Reference(in, out);
  }

 private:
  float WeightScale(const TypedTensor& ws, int64_t n) const { return static_cast<float>(ws.At(ws.size() == 1 ? 0 : n)); }

  Status Multiply(const KernelInputs& in, std::vector<TypedTensor>* out) const {
    const TypedTensor& a = *in[0];
    TB_RETURN_IF_ERROR(EnsurePlan(&plan_, a, *in[1], !HostHasVnni()));
    const Int8MatMulPlan& p = *plan_;
    accumulators_.resize(static_cast<size_t>(p.M * p.N));
    p.Multiply(a, accumulators_.data());
    // y = (acc - x_zero * column_sum) * x_scale * w_scale (doubled for halved weights) + bias.
    const float xs = static_cast<float>(in[3]->At(0));
    const int32_t zero = in[2] ? static_cast<int32_t>(in[2]->At(0)) : 0;
    std::vector<float> scales(static_cast<size_t>(p.N)), bias(static_cast<size_t>(p.N), 0.0f);
    std::vector<int32_t> offsets(static_cast<size_t>(p.N));
    for (int64_t n = 0; n < p.N; ++n) {
      scales[n] = xs * WeightScale(*in[4], n) * (p.halve ? 2 : 1);
      offsets[n] = zero * p.column_sums[n];
      if (in.size() > 5 && in[5]) bias[n] = static_cast<float>(in[5]->At(n));
    }
    std::vector<int64_t> y_shape = a.shape;
    y_shape.back() = p.N;
    TypedTensor& y = (*out)[0];  // last run's memory, when the caller passes it back
    ReshapeForOverwrite(&y, DType::kFloat32, y_shape);
    float* __restrict dst = y.data<float>();
    const int32_t* __restrict acc = accumulators_.data();
    for (int64_t m = 0; m < p.M; ++m)
      for (int64_t n = 0; n < p.N; ++n) dst[m * p.N + n] = static_cast<float>(acc[m * p.N + n] - offsets[n]) * scales[n] + bias[n];
    return Status::Ok();
  }

  // The definition in doubles, for what oneDNN cannot run.
  Status Reference(const KernelInputs& in, std::vector<TypedTensor>* out) const {
    const TypedTensor &a = *in[0], &b = *in[1];
    const int64_t K = b.shape[0], N = b.shape[1], M = a.size() / K;
    const double zero = in[2] ? in[2]->At(0) : 0, xs = in[3]->At(0);
    std::vector<int64_t> y_shape = a.shape;
    y_shape.back() = N;
    TypedTensor& y = (*out)[0];  // last run's memory, when the caller passes it back
    ReshapeForOverwrite(&y, DType::kFloat32, y_shape);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += (a.At(m * K + k) - zero) * b.At(k * N + n);
        y.data<float>()[m * N + n] = static_cast<float>(acc * xs * WeightScale(*in[4], n) + (in.size() > 5 && in[5] ? in[5]->At(n) : 0.0));
      }
    return Status::Ok();
  }

  KernelInfo info_;
  mutable std::mutex mutex_;
  mutable std::optional<Int8MatMulPlan> plan_;
  mutable std::vector<int32_t> accumulators_;  // M x N, kept from run to run
};

}  // namespace

Result<std::unique_ptr<OpKernel>> MakeDynamicQuantizedMatMul(const KernelInfo& info) {
  return std::unique_ptr<OpKernel>(new DynamicQuantizedMatMul(info));
}

std::unique_ptr<OpKernel> WrapOneDnnMatMulInteger(const KernelInfo& info, std::unique_ptr<OpKernel> reference) {
  return std::unique_ptr<OpKernel>(new OneDnnMatMulInteger(info, std::move(reference)));
}

int Int8WeightBits() { return HostHasVnni() ? 8 : 7; }

std::unique_ptr<OpKernel> WrapOneDnnQLinearConv(const KernelInfo& info, std::unique_ptr<OpKernel> reference) {
  return std::unique_ptr<OpKernel>(new OneDnnQLinearConv(info, std::move(reference)));
}

std::unique_ptr<OpKernel> WrapOneDnnQLinearMatMul(const KernelInfo& info, std::unique_ptr<OpKernel> reference) {
  return std::unique_ptr<OpKernel>(new OneDnnQLinearMatMul(info, std::move(reference)));
}

Result<std::vector<std::string>> OneDnnInt8Implementations(const KernelInfo& info, const KernelInputs& in) {
  if (info.op_type == "QLinearConv") return OneDnnQLinearConv(info, nullptr).Implementations(in);
  if (info.op_type == "QLinearMatMul") return OneDnnQLinearMatMul(info, nullptr).Implementations(in);
  return Status::InvalidInput(info.op_type + " has no oneDNN int8 implementations");
}

}  // namespace tilebank::engine::kernels
