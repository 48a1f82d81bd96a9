#include "engine/kernels/fused_activation.h"

#include <cmath>

namespace tilebank::engine::kernels {

bool KnownFusedActivation(const std::string& activation) {
  for (const char* known : {"", "Relu", "Sigmoid", "Tanh", "Gelu", "GeluTanh", "Swish"})
    if (activation == known) return true;
  return false;
}

double ApplyFusedActivation(const std::string& activation, double v) {
  if (activation == "Relu") return v > 0 ? v : 0;
  if (activation == "Sigmoid") return 1 / (1 + std::exp(-v));
  if (activation == "Tanh") return std::tanh(v);
  if (activation == "Gelu") return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  if (activation == "GeluTanh") return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  if (activation == "Swish") return v / (1 + std::exp(-v));
  return v;
}

void AppendFusedActivation(const std::string& activation, dnnl::post_ops* ops) {
  const auto eltwise = [&](dnnl::algorithm a, float alpha) { ops->append_eltwise(1.0f, a, alpha, 0.0f); };
  if (activation == "Relu") eltwise(dnnl::algorithm::eltwise_relu, 0.0f);
  else if (activation == "Sigmoid") eltwise(dnnl::algorithm::eltwise_logistic, 0.0f);
  else if (activation == "Tanh") eltwise(dnnl::algorithm::eltwise_tanh, 0.0f);
  else if (activation == "Gelu") eltwise(dnnl::algorithm::eltwise_gelu_erf, 0.0f);
  else if (activation == "GeluTanh") eltwise(dnnl::algorithm::eltwise_gelu_tanh, 0.0f);
  else if (activation == "Swish") eltwise(dnnl::algorithm::eltwise_swish, 1.0f);
}

}  // namespace tilebank::engine::kernels
