// Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (with its log_prob output), over
// input [N, C, d1...] and integer targets [N, d1...], optional class weights, ignore_index, and
// reduction none, sum or mean (weighted: the weights' sum divides).
#include <cmath>
#include <optional>

#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

// The loss of log-probabilities `log_prob` ([N, C, D] flattened) against `target`.
Status NegativeLogLikelihood(const KernelInfo& info, const std::vector<double>& log_prob, const std::vector<int64_t>& input_shape, const TypedTensor& target,
                             const TypedTensor* weight, DType dtype, TypedTensor* loss) {
  if (input_shape.size() < 2) return info.Bad("takes input [N, C, ...]");
  const int64_t N = input_shape[0], C = input_shape[1], D = N * C ? Tensor::NumElements(input_shape) / (N * C) : 0;
  std::vector<int64_t> target_shape = input_shape;
  target_shape.erase(target_shape.begin() + 1);
  if (target.shape != target_shape) return info.Bad("target must be " + ShapeText(target_shape) + ", not " + ShapeText(target.shape));
  if (weight && weight->size() != C) return info.Bad("weight must have " + std::to_string(C) + " elements");
  const std::string reduction = info.attrs.String("reduction", "mean");
  const std::optional<int64_t> ignore = info.attrs.Has("ignore_index") ? std::optional<int64_t>(info.attrs.Int("ignore_index", 0)) : std::nullopt;
  std::vector<double> losses(static_cast<size_t>(N * D)), weights(losses.size(), 1.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t d = 0; d < D; ++d) {
      const int64_t i = n * D + d, t = target.IntAt(i);
      if (ignore && t == *ignore) {
        losses[i] = weights[i] = 0.0;
        continue;
      }
      if (t < 0 || t >= C) return info.Bad("target " + std::to_string(t) + " is outside 0.." + std::to_string(C - 1));
      if (weight) weights[i] = weight->At(t);
      losses[i] = -log_prob[(n * C + t) * D + d] * weights[i];
    }
  if (reduction == "none") {
    *loss = FromDoubles(dtype, target_shape, losses);
    return Status::Ok();
  }
  double sum = 0, weight_sum = 0;
  for (size_t i = 0; i < losses.size(); ++i) sum += losses[i], weight_sum += weights[i];
  if (reduction == "sum") *loss = FromDoubles(dtype, {}, {sum});
  else if (reduction == "mean") *loss = FromDoubles(dtype, {}, {weight_sum ? sum / weight_sum : NAN});
  else return info.Bad("reduction '" + reduction + "' is not none, sum or mean");
  return Status::Ok();
}

Result<std::unique_ptr<OpKernel>> MakeNll(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 2 || !in[0] || !in[1]) return info.Bad("takes input and target");
    return NegativeLogLikelihood(info, AsDoubles(*in[0]), in[0]->shape, *in[1], in.size() > 2 ? in[2] : nullptr, in[0]->dtype, &(*out)[0]);
  });
}

Result<std::unique_ptr<OpKernel>> MakeSoftmaxCrossEntropy(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 2 || !in[0] || !in[1]) return info.Bad("takes scores and labels");
    const TypedTensor& x = *in[0];
    if (x.rank() < 2) return info.Bad("takes scores [N, C, ...]");
    const int64_t N = x.shape[0], C = x.shape[1], D = N * C ? x.size() / (N * C) : 0;
    std::vector<double> log_prob = AsDoubles(x);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t d = 0; d < D; ++d) {
        double top = -INFINITY, sum = 0;
        for (int64_t c = 0; c < C; ++c) top = std::max(top, log_prob[(n * C + c) * D + d]);
        for (int64_t c = 0; c < C; ++c) sum += std::exp(log_prob[(n * C + c) * D + d] - top);
        for (int64_t c = 0; c < C; ++c) log_prob[(n * C + c) * D + d] -= top + std::log(sum);
      }
    if (Status s = NegativeLogLikelihood(info, log_prob, x.shape, *in[1], in.size() > 2 ? in[2] : nullptr, x.dtype, &(*out)[0]); !s.ok()) return s;
    if (out->size() > 1) (*out)[1] = FromDoubles(x.dtype, x.shape, log_prob);
    return Status::Ok();
  });
}

}  // namespace

void RegisterLossKernels(KernelRegistry* r) {
  r->Add({"NegativeLogLikelihoodLoss", 12, INT_MAX, FloatTypes(), 0, MakeNll});
  r->Add({"SoftmaxCrossEntropyLoss", 12, INT_MAX, FloatTypes(), 0, MakeSoftmaxCrossEntropy});
}

}  // namespace tilebank::engine::kernels
