// Whether a computed tensor matches an expected one, as ONNX's backend tests judge it: the same
// dtype and shape; integers, bool and strings exactly; floating types within
// |got - want| <= atol + rtol * |want| (NaN matches NaN, equal infinities match; bfloat16 with rtol
// at least one unit in its last place, 2^-7).
#pragma once
#include <string>

#include "engine/ops/typed_tensor.h"

namespace tilebank::engine {

struct TensorMatch {
  bool ok = true;
  double max_abs_error = 0, max_rel_error = 0;
  std::string worst;  // the first mismatch, or the largest error ("element 3: 0.5 vs 0.25"); a dtype or shape difference
};

// rtol and atol as ONNX's backend test runner uses them by default (1e-3, 1e-7), unless given.
TensorMatch MatchTensor(const TypedTensor& got, const TypedTensor& want, double rtol = 1e-3, double atol = 1e-7);

}  // namespace tilebank::engine
