#include "engine/kernels/quantized_op_operands.h"

#include <algorithm>
#include <cmath>

#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/onednn_qlinear_kernels.h"

namespace tilebank::engine::kernels {
namespace {

// Input positions of QLinearConv(x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero[, B]) and
// QLinearMatMul(a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero[, bias]).
enum Operand { kX, kXScale, kXZero, kW, kWScale, kWZero, kYScale, kYZero, kBias };

constexpr float kSteps = 100;  // a random float in [-1, 1] is this many quantization steps

// Products summed per output: C/group * kernel for a convolution, K for a matmul.
int64_t ReductionLength(const OpSpec& op) {
  if (op.inputs.size() <= kW) return 1;
  const auto& w = op.inputs[kW].shape;
  if (op.op_type == "QLinearMatMul") return w.empty() ? 1 : w[0];
  int64_t n = 1;
  for (size_t d = 1; d < w.size(); ++d) n *= w[d];
  return n;
}

int64_t Rounded(float v, int64_t low, int64_t high) { return std::clamp<int64_t>(std::llround(v), low, high); }

}  // namespace

KernelInfo QuantizedKernelInfo(const OpSpec& op, const std::string& implementation) {
  KernelInfo info;
  info.op_type = op.op_type;
  info.node_name = op.name;
  nlohmann::json attrs = op.attrs;
  if (!implementation.empty()) attrs["onednn_impl"] = implementation;
  info.attrs = Attrs(attrs);
  for (const auto& in : op.inputs) info.input_types.push_back(ParseDType(in.dtype).value_or(DType::kUndefined));
  return info;
}

std::vector<TypedTensor> QuantizedOperands(const OpSpec& op, const std::vector<const Tensor*>& floats) {
  const float x_scale = 0.02f, w_scale = 0.01f;
  // The accumulator's spread is about kSteps^2 * sqrt(K) steps of x_scale * w_scale; y's scale puts that at 40 steps.
  const float y_scale = x_scale * w_scale * kSteps * kSteps * std::sqrt(static_cast<float>(ReductionLength(op))) / 40;
  // Where the kernels halve the weights to 7 bits (no VNNI), even weights halve exactly, so that the
  // kernels and the reference compute the same products.
  const bool even_weights = Int8WeightBits() == 7;
  std::vector<TypedTensor> out;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const DType dtype = ParseDType(op.inputs[i].dtype).value_or(DType::kFloat32);
    TypedTensor t(dtype, op.inputs[i].shape);
    const bool unsigned8 = dtype == DType::kUInt8;
    const auto zero_of = [&](const char* flag) -> int64_t { return op.Int(flag, 0) ? (unsigned8 ? 128 : 10) : 0; };
    const bool valued = i != kX && i != kW && i < kBias;  // scales and zero points: set from the description alone
    if (!valued && i >= floats.size()) {
      out.push_back(std::move(t));
      continue;
    }
    for (int64_t k = 0; k < t.size(); ++k) {
      const float v = i < floats.size() && k < static_cast<int64_t>(floats[i]->data.size()) ? floats[i]->data[k] : 0.0f;
      switch (static_cast<Operand>(i)) {
        case kX: t.SetAt(k, static_cast<double>(Rounded(v * kSteps + (unsigned8 ? 128 : 0), unsigned8 ? 0 : -128, unsigned8 ? 255 : 127))); break;
        case kXScale: t.SetAt(k, x_scale); break;
        case kXZero: t.SetAt(k, static_cast<double>(zero_of("x_zero_point_nonzero"))); break;
        case kW: t.SetAt(k, static_cast<double>(even_weights ? 2 * Rounded(v * kSteps / 2, -63, 63) : Rounded(v * kSteps, -127, 127))); break;
        case kWScale: t.SetAt(k, w_scale * (1.0f + 0.5f * v)); break;
        case kWZero: t.SetAt(k, 0); break;
        case kYScale: t.SetAt(k, y_scale); break;
        case kYZero: t.SetAt(k, static_cast<double>(zero_of("y_zero_point_nonzero"))); break;
        default: t.SetAt(k, static_cast<double>(std::llround(v * 1000))); break;  // the int32 bias
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

Result<Tensor> QuantizedReference(const OpSpec& op, const std::vector<const Tensor*>& floats) {
  auto kernel = KernelRegistry::Default().Create(QuantizedKernelInfo(op, "reference"));
  if (!kernel.ok()) return kernel.status();
  const std::vector<TypedTensor> operands = QuantizedOperands(op, floats);
  std::vector<TypedTensor> outputs(1);
  TB_RETURN_IF_ERROR((*kernel)->Compute(PointersTo(operands), &outputs));
  Tensor y(outputs[0].shape);
  for (int64_t i = 0; i < y.size(); ++i) y.data[i] = static_cast<float>(outputs[0].At(i));
  return y;
}

}  // namespace tilebank::engine::kernels
