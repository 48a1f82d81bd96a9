// Linear quantization: QuantizeLinear, DequantizeLinear (per tensor or per axis),
// DynamicQuantizeLinear, MatMulInteger, QLinearMatMul and QLinearConv. Reference kernels: values
// are dequantized to double, computed there and requantized (round half to even, saturated), so
// they are exact for every product an int32 accumulator holds.
#include <cmath>
#include <functional>
#include <optional>

#include "engine/kernels/conv_kernels.h"
#include "engine/core/parallel_for.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/onednn_qlinear_kernels.h"
#include "engine/kernels/quantized_loops_simd.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

// v rounded half to even and saturated to `dtype`'s range.
double Saturate(double v, DType dtype) {
  v = std::nearbyint(v);
  switch (dtype) {
    case DType::kUInt8: return std::clamp(v, 0.0, 255.0);
    case DType::kInt8: return std::clamp(v, -128.0, 127.0);
    case DType::kUInt16: return std::clamp(v, 0.0, 65535.0);
    case DType::kInt16: return std::clamp(v, -32768.0, 32767.0);
    case DType::kInt32: return std::clamp(v, -2147483648.0, 2147483647.0);
    default: return v;
  }
}

// For each element of `x`, the index into a parameter `p` given per slice of `axis_attr` (0 when
// p has one element).
Result<std::vector<int64_t>> ParamIndex(const KernelInfo& info, const TypedTensor& x, const TypedTensor& p, int64_t axis_attr) {
  std::vector<int64_t> index(static_cast<size_t>(x.size()), 0);
  if (p.size() <= 1) return index;
  auto axis = Axis(axis_attr, x.rank());
  if (!axis || x.shape[*axis] != p.size()) return info.Bad("a per-axis scale or zero point must have one element per slice of axis " + std::to_string(axis_attr));
  int64_t inner = 1;
  for (int64_t d = *axis + 1; d < x.rank(); ++d) inner *= x.shape[d];
  for (int64_t i = 0; i < x.size(); ++i) index[i] = i / inner % p.size();
  return index;
}

// The elements of `t` minus its zero point `zero` (absent: 0), per slice of `axis` where `zero` has several.
Result<std::vector<double>> Centred(const KernelInfo& info, const TypedTensor& t, const TypedTensor* zero, int64_t axis) {
  std::vector<double> v = AsDoubles(t);
  if (!zero || !zero->size()) return v;
  auto index = ParamIndex(info, t, *zero, axis);
  if (!index.ok()) return index.status();
  for (int64_t i = 0; i < t.size(); ++i) v[i] -= zero->At((*index)[i]);
  return v;
}

// The common case: float32 x, one float32 scale, an 8-bit zero point (or none), in the SIMD loops
// of quantized_loops_simd.h, which compute what the reference computes, on both threads.
constexpr int64_t kQuantizeGrain = 1 << 14;  // elements a thread takes at least

void QuantizeFloats(const TypedTensor& x, float scale, float zero, TypedTensor* y) {
  ParallelFor(x.size(), kQuantizeGrain, [&](int64_t begin, int64_t end) {
    if (y->dtype == DType::kUInt8) QuantizeToU8(x.data<float>() + begin, end - begin, scale, zero, y->data<uint8_t>() + begin);
    else QuantizeToS8(x.data<float>() + begin, end - begin, scale, zero, y->data<int8_t>() + begin);
  });
}

void DequantizeToFloats(const TypedTensor& x, float scale, float zero, TypedTensor* y) {
  ParallelFor(x.size(), kQuantizeGrain, [&](int64_t begin, int64_t end) {
    if (x.dtype == DType::kUInt8) DequantizeU8(x.data<uint8_t>() + begin, end - begin, scale, zero, y->data<float>() + begin);
    else DequantizeS8(x.data<int8_t>() + begin, end - begin, scale, zero, y->data<float>() + begin);
  });
}

// A per-axis 8-bit case (opset 13's per-channel weights): float32 x, a float32 scale per slice of
// `axis` and an 8-bit zero point per slice (or none), no blocks: x as [outer, slices, inner].
struct PerAxis {
  int64_t outer = 1, slices = 1, inner = 1;
};
std::optional<PerAxis> PerAxis8Bit(const KernelInfo& info, const KernelInputs& in, DType float_side, DType int_side) {
  const TypedTensor* zero = in.size() > 2 ? in[2] : nullptr;
  const TypedTensor &x = *in[0], &scale = *in[1];
  if (float_side != DType::kFloat32 || scale.dtype != DType::kFloat32 || scale.rank() != 1 || info.attrs.Int("block_size", 0) != 0) return std::nullopt;
  if ((int_side != DType::kUInt8 && int_side != DType::kInt8) || (zero && (zero->dtype != int_side || zero->size() != scale.size()))) return std::nullopt;
  auto axis = Axis(info.attrs.Int("axis", 1), x.rank());
  if (!axis || x.shape[*axis] != scale.size()) return std::nullopt;
  PerAxis p;
  p.slices = scale.size();
  for (int64_t d = 0; d < *axis; ++d) p.outer *= x.shape[d];
  for (int64_t d = *axis + 1; d < x.rank(); ++d) p.inner *= x.shape[d];
  return p;
}

// Each run of `inner` elements of slice s: fn(element offset, s), the runs split among the threads.
void ForEachRun(const PerAxis& p, const std::function<void(int64_t offset, int64_t slice)>& fn) {
  ParallelFor(p.outer * p.slices, std::max<int64_t>(1, kQuantizeGrain / std::max<int64_t>(1, p.inner)), [&](int64_t begin, int64_t end) {
    for (int64_t run = begin; run < end; ++run) fn(run * p.inner, run % p.slices);
  });
}

bool PerTensor8Bit(const KernelInputs& in, DType float_side, DType int_side) {
  const TypedTensor* zero = in.size() > 2 ? in[2] : nullptr;
  return in[1]->dtype == DType::kFloat32 && in[1]->size() == 1 && (!zero || (zero->size() == 1 && zero->dtype == int_side)) &&
         (int_side == DType::kUInt8 || int_side == DType::kInt8) && float_side == DType::kFloat32;
}

Result<std::unique_ptr<OpKernel>> MakeQuantize(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 2 || !in[0] || !in[1]) return info.Bad("takes x and y_scale");
    const TypedTensor& x = *in[0];
    const TypedTensor* zero = in.size() > 2 ? in[2] : nullptr;
    const DType dtype = zero ? zero->dtype : DType::kUInt8;
    if (PerTensor8Bit(in, x.dtype, dtype)) {
      TypedTensor& y = (*out)[0];  // last run's memory, when the caller passes it back
      ReshapeForOverwrite(&y, dtype, x.shape);
      const float scale = in[1]->data<float>()[0], zp = zero ? static_cast<float>(zero->At(0)) : 0.0f;
      QuantizeFloats(x, scale, zp, &y);
      return Status::Ok();
    }
    if (auto p = PerAxis8Bit(info, in, x.dtype, dtype)) {
      TypedTensor& y = (*out)[0];
      ReshapeForOverwrite(&y, dtype, x.shape);
      const float* scale = in[1]->data<float>();
      ForEachRun(*p, [&](int64_t offset, int64_t s) {
        const float zp = zero ? static_cast<float>(zero->At(s)) : 0.0f;
        if (dtype == DType::kUInt8) QuantizeToU8(x.data<float>() + offset, p->inner, scale[s], zp, y.data<uint8_t>() + offset);
        else QuantizeToS8(x.data<float>() + offset, p->inner, scale[s], zp, y.data<int8_t>() + offset);
      });
      return Status::Ok();
    }
    const int64_t axis = info.attrs.Int("axis", 1);
    auto scale_index = ParamIndex(info, x, *in[1], axis);
    if (!scale_index.ok()) return scale_index.status();
    std::vector<int64_t> zero_index(static_cast<size_t>(x.size()), 0);
    if (zero) {
      auto z = ParamIndex(info, x, *zero, axis);
      if (!z.ok()) return z.status();
      zero_index = *z;
    }
    TypedTensor y(dtype, x.shape);
    for (int64_t i = 0; i < x.size(); ++i) {
      const double zp = zero && zero->size() ? zero->At(zero_index[i]) : 0.0;
      // The quotient in the scale's precision (float32 in every QDQ model), as ONNX's definition computes it.
      const double scale = in[1]->At((*scale_index)[i]);
      const double q = in[1]->dtype == DType::kFloat64 ? x.At(i) / scale : static_cast<float>(x.At(i)) / static_cast<float>(scale);
      y.SetAt(i, Saturate(std::nearbyint(q) + zp, dtype));
    }
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeDequantize(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 2 || !in[0] || !in[1]) return info.Bad("takes x and x_scale");
    if (PerTensor8Bit(in, in[1]->dtype, in[0]->dtype)) {
      const TypedTensor* zero = in.size() > 2 ? in[2] : nullptr;
      TypedTensor& y = (*out)[0];  // last run's memory, when the caller passes it back
      ReshapeForOverwrite(&y, DType::kFloat32, in[0]->shape);
      const float scale = in[1]->data<float>()[0], zp = zero ? static_cast<float>(zero->At(0)) : 0.0f;
      DequantizeToFloats(*in[0], scale, zp, &y);
      return Status::Ok();
    }
    if (auto p = PerAxis8Bit(info, in, in[1]->dtype, in[0]->dtype)) {
      const TypedTensor &q = *in[0], *zero = in.size() > 2 ? in[2] : nullptr;
      TypedTensor& y = (*out)[0];
      ReshapeForOverwrite(&y, DType::kFloat32, q.shape);
      const float* scale = in[1]->data<float>();
      ForEachRun(*p, [&](int64_t offset, int64_t s) {
        const float zp = zero ? static_cast<float>(zero->At(s)) : 0.0f;
        if (q.dtype == DType::kUInt8) DequantizeU8(q.data<uint8_t>() + offset, p->inner, scale[s], zp, y.data<float>() + offset);
        else DequantizeS8(q.data<int8_t>() + offset, p->inner, scale[s], zp, y.data<float>() + offset);
      });
      return Status::Ok();
    }
    const int64_t axis = info.attrs.Int("axis", 1);
    auto v = Centred(info, *in[0], in.size() > 2 ? in[2] : nullptr, axis);
    if (!v.ok()) return v.status();
    auto scale_index = ParamIndex(info, *in[0], *in[1], axis);
    if (!scale_index.ok()) return scale_index.status();
    for (int64_t i = 0; i < in[0]->size(); ++i) (*v)[i] *= in[1]->At((*scale_index)[i]);
    (*out)[0] = FromDoubles(in[1]->dtype, in[0]->shape, *v);
    return Status::Ok();
  });
}

// DynamicQuantizeLinear: uint8 over [min(0, min x), max(0, max x)].
Result<std::unique_ptr<OpKernel>> MakeDynamicQuantize(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    if (x.dtype == DType::kFloat32) {  // float32 loops, the same arithmetic
      const float* src = x.data<float>();
      float low = 0, high = 0;
      if (x.size() > 0) MinMaxFloats(src, x.size(), &low, &high);
      low = std::min(low, 0.0f), high = std::max(high, 0.0f);
      const float scale = static_cast<float>((static_cast<double>(high) - low) / 255.0);
      const float zero = scale ? static_cast<float>(Saturate(0.0f - low / scale, DType::kUInt8)) : 0.0f;
      TypedTensor& y = (*out)[0];  // last run's memory, when the caller passes it back
      ReshapeForOverwrite(&y, DType::kUInt8, x.shape);
      if (scale) QuantizeFloats(x, scale, zero, &y);
      else std::fill(y.data<uint8_t>(), y.data<uint8_t>() + y.size(), static_cast<uint8_t>(zero));
      if (out->size() > 1) (*out)[1] = TypedTensor::Of<float>({}, {scale});
      if (out->size() > 2) (*out)[2] = TypedTensor::Of<uint8_t>({}, {static_cast<uint8_t>(zero)});
      return Status::Ok();
    }
    double low = 0, high = 0;
    for (int64_t i = 0; i < x.size(); ++i) low = std::min(low, x.At(i)), high = std::max(high, x.At(i));
    const float scale = static_cast<float>((high - low) / 255.0);
    // In float32, as the definition's arithmetic is (a double quotient rounds differently at .5).
    const float zero = scale ? static_cast<float>(Saturate(0.0f - static_cast<float>(low) / scale, DType::kUInt8)) : 0.0f;
    TypedTensor y(DType::kUInt8, x.shape);
    for (int64_t i = 0; i < x.size(); ++i) y.SetAt(i, scale ? Saturate(std::nearbyint(static_cast<float>(x.At(i)) / scale) + zero, DType::kUInt8) : zero);
    (*out)[0] = std::move(y);
    if (out->size() > 1) (*out)[1] = TypedTensor::Of<float>({}, {scale});
    if (out->size() > 2) (*out)[2] = TypedTensor::Of<uint8_t>({}, {static_cast<uint8_t>(zero)});
    return Status::Ok();
  });
}

// A MatMul of two float64 operands through the registry's MatMul kernel.
Result<TypedTensor> MatMulDoubles(const KernelInfo& info, const TypedTensor& a, std::vector<double> av, const TypedTensor& b, std::vector<double> bv) {
  KernelInfo matmul = info;
  matmul.op_type = "MatMul";
  matmul.input_types = {DType::kFloat64, DType::kFloat64};
  auto kernel = KernelRegistry::Default().Create(matmul);
  if (!kernel.ok()) return kernel.status();
  const TypedTensor A = FromDoubles(DType::kFloat64, a.shape, av), B = FromDoubles(DType::kFloat64, b.shape, bv);
  std::vector<TypedTensor> y(1);
  if (Status s = (*kernel)->Compute({&A, &B}, &y); !s.ok()) return s;
  return y[0];
}

// A's zero point per row (its second-last dim) or scalar; B's per column (its last dim) or scalar.
std::vector<double> CentredRows(const TypedTensor& t, const TypedTensor* zero, bool per_column) {
  std::vector<double> v = AsDoubles(t);
  if (!zero || !zero->size()) return v;
  const int64_t cols = t.shape.back(), rows = t.rank() > 1 ? t.shape[t.rank() - 2] : 1;
  for (int64_t i = 0; i < t.size(); ++i) v[i] -= zero->At(zero->size() == 1 ? 0 : per_column ? i % cols : (i / cols) % rows);
  return v;
}

Result<std::unique_ptr<OpKernel>> MakeMatMulIntegerReference(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 2 || !in[0] || !in[1]) return info.Bad("takes A and B");
    auto y = MatMulDoubles(info, *in[0], CentredRows(*in[0], in.size() > 2 ? in[2] : nullptr, false), *in[1], CentredRows(*in[1], in.size() > 3 ? in[3] : nullptr, true));
    if (!y.ok()) return y.status();
    (*out)[0] = y->CastTo(DType::kInt32);
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeMatMulInteger(const KernelInfo& info) {
  auto reference = MakeMatMulIntegerReference(info);
  if (!reference.ok()) return reference.status();
  return WrapOneDnnMatMulInteger(info, std::move(reference.value()));
}

// y = max(y, zero point) when the QDQ fusion folded a Relu into the node (its "relu" attribute);
// y clamped to the quantized clip_low and clip_high when it folded a Clip.
double Rectified(double q, const KernelInfo& info, const TypedTensor& y_scale, const TypedTensor& y_zero) {
  if (info.attrs.Int("relu", 0)) q = std::max(q, y_zero.At(0));
  if (info.attrs.Has("clip_low"))
    q = std::clamp(q, std::nearbyint(info.attrs.Float("clip_low", 0) / y_scale.At(0)) + y_zero.At(0),
                   std::nearbyint(info.attrs.Float("clip_high", 0) / y_scale.At(0)) + y_zero.At(0));
  return q;
}

// QLinearMatMul(a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero), and the QDQ fusion's
// int32 bias (units of a_scale * b_scale, one per column) as a 9th input.
Result<std::unique_ptr<OpKernel>> MakeQLinearMatMulReference(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 8 || !in[0] || !in[1] || !in[3] || !in[4] || !in[6] || !in[7]) return info.Bad("takes a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point");
    auto y = MatMulDoubles(info, *in[0], CentredRows(*in[0], in[2], false), *in[3], CentredRows(*in[3], in[5], true));
    if (!y.ok()) return y.status();
    const int64_t cols = y->shape.back(), rows = y->rank() > 1 ? y->shape[y->rank() - 2] : 1;
    const TypedTensor* bias = in.size() > 8 ? in[8] : nullptr;
    TypedTensor q(in[7]->dtype, y->shape);
    for (int64_t i = 0; i < q.size(); ++i) {
      const double a_scale = in[1]->At(in[1]->size() == 1 ? 0 : (i / cols) % rows), b_scale = in[4]->At(in[4]->size() == 1 ? 0 : i % cols);
      const double acc = y->At(i) + (bias ? bias->At(i % cols) : 0.0);
      q.SetAt(i, Saturate(Rectified(std::nearbyint(acc * a_scale * b_scale / in[6]->At(0)) + in[7]->At(0), info, *in[6], *in[7]), q.dtype));
    }
    (*out)[0] = std::move(q);
    return Status::Ok();
  });
}

// QLinearConv(x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero, B int32).
Result<std::unique_ptr<OpKernel>> MakeQLinearConvReference(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 8 || !in[0] || !in[1] || !in[3] || !in[4] || !in[6] || !in[7]) return info.Bad("takes x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point");
    // x's zero point is one value; w's may be one per output channel (W's axis 0).
    auto x = Centred(info, *in[0], in[2], 0);
    auto w = Centred(info, *in[3], in[5], 0);
    if (!x.ok()) return x.status();
    if (!w.ok()) return w.status();
    ConvOperands operands{in[0], in[3], *x, *w, {}};
    if (in.size() > 8 && in[8]) operands.bias = AsDoubles(*in[8]);
    std::vector<int64_t> shape;
    auto y = Convolve(info, operands, &shape);
    if (!y.ok()) return y.status();
    const int64_t M = shape[1], plane = M ? static_cast<int64_t>(y->size()) / (shape[0] * M) : 0;
    TypedTensor q(in[7]->dtype, shape);
    for (int64_t i = 0; i < q.size(); ++i) {
      const int64_t m = i / plane % M;
      // The bias is in units of x_scale * w_scale, as the accumulator is.
      q.SetAt(i, Saturate(Rectified(std::nearbyint((*y)[i] * in[1]->At(0) * in[4]->At(in[4]->size() == 1 ? 0 : m) / in[6]->At(0)) + in[7]->At(0), info, *in[6], *in[7]),
                          q.dtype));
    }
    (*out)[0] = std::move(q);
    return Status::Ok();
  });
}

// QLinearAdd(a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero) of one shape, with the QDQ
// fusion's "relu": Q(Relu(DQ(a) + DQ(b))) in the float32 steps those nodes take, so the result is
// theirs exactly.
template <bool kRelu, class A, class B, class Y>
void AddQuantizedLoop(const A* __restrict pa, float as, float az, const B* __restrict pb, float bs, float bz, float ys, float yz, float low,
                      float high, Y* __restrict py, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float s = (static_cast<float>(pa[i]) - az) * as + (static_cast<float>(pb[i]) - bz) * bs;
    if (kRelu) s = std::max(s, 0.0f);
    py[i] = static_cast<Y>(Requantized(s / ys, yz, low, high));
  }
}

template <class A, class B, class Y>
void AddQuantized(const TypedTensor& a, float as, float az, const TypedTensor& b, float bs, float bz, float ys, float yz, bool relu, float low,
                  float high, TypedTensor* y) {
  if (relu) AddQuantizedLoop<true>(a.data<A>(), as, az, b.data<B>(), bs, bz, ys, yz, low, high, y->data<Y>(), a.size());
  else AddQuantizedLoop<false>(a.data<A>(), as, az, b.data<B>(), bs, bz, ys, yz, low, high, y->data<Y>(), a.size());
}

Result<std::unique_ptr<OpKernel>> MakeQLinearAdd(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 8 || !in[0] || !in[1] || !in[3] || !in[4] || !in[6] || !in[7]) return info.Bad("takes a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point");
    const TypedTensor &a = *in[0], &b = *in[3];
    if (a.shape != b.shape) return info.Bad("a and b must have one shape");
    auto scalar = [](const TypedTensor* t) { return t ? static_cast<float>(t->At(0)) : 0.0f; };
    const DType y_type = in[7]->dtype;
    TypedTensor& y = (*out)[0];  // last run's memory, when the caller passes it back
    ReshapeForOverwrite(&y, y_type, a.shape);
    const bool relu = info.attrs.Int("relu", 0) != 0;
    const float as = scalar(in[1]), az = scalar(in[2]), bs = scalar(in[4]), bz = scalar(in[5]), ys = scalar(in[6]), yz = scalar(in[7]);
    const bool a8 = a.dtype == DType::kUInt8, b8 = b.dtype == DType::kUInt8, y8 = y_type == DType::kUInt8;
    const float low = y8 ? 0 : -128, high = y8 ? 255 : 127;
    // u8 is the common case everywhere; int8 otherwise.
    if (a8 && b8 && y8) AddQuantizedU8(a.data<uint8_t>(), b.data<uint8_t>(), a.size(), {as, az, bs, bz, ys, yz, relu}, y.data<uint8_t>());
    else if (!a8 && !b8 && !y8) AddQuantized<int8_t, int8_t, int8_t>(a, as, az, b, bs, bz, ys, yz, relu, low, high, &y);
    else if (a8 && b8) AddQuantized<uint8_t, uint8_t, int8_t>(a, as, az, b, bs, bz, ys, yz, relu, low, high, &y);
    else if (a8) AddQuantized<uint8_t, int8_t, uint8_t>(a, as, az, b, bs, bz, ys, yz, relu, low, high, &y);
    else if (b8) AddQuantized<int8_t, uint8_t, uint8_t>(a, as, az, b, bs, bz, ys, yz, relu, low, high, &y);
    else AddQuantized<int8_t, int8_t, uint8_t>(a, as, az, b, bs, bz, ys, yz, relu, low, high, &y);
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeQLinearMatMul(const KernelInfo& info) {
  auto reference = MakeQLinearMatMulReference(info);
  if (!reference.ok()) return reference.status();
  return WrapOneDnnQLinearMatMul(info, std::move(reference.value()));
}

Result<std::unique_ptr<OpKernel>> MakeQLinearConv(const KernelInfo& info) {
  auto reference = MakeQLinearConvReference(info);
  if (!reference.ok()) return reference.status();
  return WrapOneDnnQLinearConv(info, std::move(reference.value()));
}

}  // namespace

void RegisterQuantizeKernels(KernelRegistry* r) {
  r->Add({"QuantizeLinear", 10, INT_MAX, {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kInt32}, 0, MakeQuantize});
  r->Add({"DequantizeLinear", 10, INT_MAX, {DType::kInt8, DType::kUInt8, DType::kInt32}, 0, MakeDequantize});
  r->Add({"DynamicQuantizeLinear", 11, INT_MAX, {DType::kFloat32}, 0, MakeDynamicQuantize});
  r->Add({"MatMulInteger", 10, INT_MAX, {DType::kInt8, DType::kUInt8}, 0, MakeMatMulInteger});
  r->Add({"QLinearMatMul", 10, INT_MAX, {DType::kInt8, DType::kUInt8}, 0, MakeQLinearMatMul});
  r->Add({"QLinearConv", 10, INT_MAX, {DType::kInt8, DType::kUInt8}, 0, MakeQLinearConv});
  r->Add({"QLinearAdd", 1, INT_MAX, {DType::kInt8, DType::kUInt8}, 0, MakeQLinearAdd});  // the QDQ fusion's (ONNX Runtime's contrib op)
  r->Add({"DynamicQuantizedMatMul", 1, INT_MAX, {DType::kInt8, DType::kUInt8}, 0, MakeDynamicQuantizedMatMul});  // the QDQ fusion's
}

}  // namespace tilebank::engine::kernels
