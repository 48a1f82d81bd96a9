// Deterministic float32 inputs for the registry kernels' tests: sin(0.37 i + seed) / 2 at flat
// index i, so that neighbouring values differ and every seed gives another tensor.
#pragma once
#include <cmath>
#include <vector>

#include "engine/core/typed_tensor.h"

namespace tilebank::engine::kernels {

inline TypedTensor SineValues(std::vector<int64_t> shape, int seed) {
  TypedTensor t(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>(std::sin(0.37 * i + seed) * 0.5);
  return t;
}

}  // namespace tilebank::engine::kernels
