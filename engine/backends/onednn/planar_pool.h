// MaxPool and AveragePool over row-major [N, C, D, H, W] tensors (channels first, 1-D to 3-D) on
// an own loop: each output line folds its window's input lines, then runs along W in whole vectors
// (engine/backends/simd/window_pool.h), the lines split between the threads; windows of stride 1
// whose output has the input's size pool whole planes at once (SamePlane), planes on the threads. Where oneDNN 2.6 has
// no JIT kernel for such a tensor (AVX2), it runs a scalar one: 0.6 ms for CRNN's 2x1 window over
// [1,256,8,32], that ONNX Runtime pools in 24 us.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/backends/onednn/own_pool_window.h"

namespace tilebank::engine {

class PlanarPool {
 public:
  // `planes`: N * C, the lines of each along D and H as `window` says.
  PlanarPool(OwnPoolWindow window, int64_t planes);
  // out (row-major, the pool's output shape) = the pool of in (row-major, its input shape).
  void Run(const float* in, float* out) const;

 private:
  void RunLines(const float* in, float* out) const;
  void RunSamePlanes(const float* in, float* out) const;

  OwnPoolWindow window_;
  int64_t planes_;
  bool same_planes_ = false;        // TakesSamePlane: [D, H, W] planes of D == 1 pooled whole
  std::vector<float> reciprocal_;   // an AveragePool's per-position 1 / divisor over one H x W plane
};

}  // namespace tilebank::engine
