// The per-element loops of per-tensor linear quantization, in SIMD for the running CPU's best
// instruction set (Highway, chosen at run time): QuantizeLinear, DequantizeLinear and the QDQ
// fusion's QLinearAdd on 8-bit data. Each computes what the float32 steps of its ONNX nodes
// compute, element for element: x / scale rounded half to even, (q - zero) * scale, and the sum of
// two dequantized tensors requantized. The file is compiled without contracting a * b + c, so the
// results are the scalar loops' bit for bit.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tilebank::engine::kernels {

// y = saturate(round_half_even(x / scale) + zero) into [low, high] (0..255 for u8, -128..127 for s8).
void QuantizeToU8(const float* x, int64_t n, float scale, float zero, uint8_t* y);
void QuantizeToS8(const float* x, int64_t n, float scale, float zero, int8_t* y);
// y = (q - zero) * scale.
void DequantizeU8(const uint8_t* q, int64_t n, float scale, float zero, float* y);
void DequantizeS8(const int8_t* q, int64_t n, float scale, float zero, float* y);

// The scalar form: round_half_even(v) + zero saturated to [low, high], v clamped near the range
// first (so the rounding of v is exact).
inline int32_t Requantized(float v, float zero, float low, float high) {
  v = std::min(std::max(v, low - zero - 1), high - zero + 1);
  return static_cast<int32_t>(std::min(std::max(std::nearbyint(v) + zero, low), high));
}

// The least and greatest of x[0..n) (n > 0), for DynamicQuantizeLinear's range.
void MinMaxFloats(const float* x, int64_t n, float* low, float* high);

struct AddQuantization {
  float a_scale, a_zero, b_scale, b_zero, y_scale, y_zero;
  bool relu = false;  // max(sum, 0) before requantizing
};
// DQ(a) + DQ(b) (then max(., 0) with relu) for one element, as the float32 steps compute it.
inline float AddDequantized(uint8_t a, uint8_t b, const AddQuantization& q) {
  const float s = (static_cast<float>(a) - q.a_zero) * q.a_scale + (static_cast<float>(b) - q.b_zero) * q.b_scale;
  return q.relu ? std::max(s, 0.0f) : s;
}

// y = Q(DQ(a) + DQ(b)) over u8 operands and a u8 result.
void AddQuantizedU8(const uint8_t* a, const uint8_t* b, int64_t n, const AddQuantization& q, uint8_t* y);

}  // namespace tilebank::engine::kernels
