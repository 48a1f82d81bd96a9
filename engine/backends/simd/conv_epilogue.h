// What the own convolutions (engine/backends/simd/winograd_transforms.h,
// engine/backends/simd/depthwise_conv_nhwc.h) do to each output value after the bias, in their
// own output loop: the chains SGAT fuses into a convolution (a residual Add, activations).
#pragma once
#include <cstdint>
#include <vector>

namespace tilebank::engine {

struct ConvEpilogueStep {
  enum class Kind { kAddResidual, kRelu, kLeakyRelu, kClip, kSigmoid, kSwish, kHardSwish, kTanh, kGeluTanh, kGeluErf } kind = Kind::kRelu;
  float alpha = 0, beta = 0;  // LeakyRelu's slope; Clip's bounds
};

// Bias, then the steps in order.
struct ConvEpilogue {
  const float* bias = nullptr;      // a value per output channel (zero past the channels where padded), or null
  const float* residual = nullptr;  // for kAddResidual: the output's layout and shape
  std::vector<ConvEpilogueStep> steps;
  int64_t channels = 0;             // the output's channels: padded lanes past them are written 0
};

}  // namespace tilebank::engine
