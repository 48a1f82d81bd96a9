// Whether a computed value matches an expected one, as ONNX's backend tests judge it: the same kind
// (a sequence: as many elements, each matching; an optional: both empty, or their values matching);
// the same dtype and shape; integers, bool and strings exactly; floating types within
// |got - want| <= atol + rtol * |want| (NaN matches NaN, equal infinities match; bfloat16 with rtol
// at least one unit in its last place, 2^-7).
#pragma once
#include <string>

#include "engine/core/typed_tensor.h"

namespace tilebank::engine {

struct TensorMatch {
  bool ok = true;
  double max_abs_error = 0, max_rel_error = 0;
  int64_t mismatched = 0, compared = 0;  // elements outside the tolerance, of those compared (0 of 0: kind, dtype or shape differ)
  std::string worst;  // the first mismatch, or the largest error ("element 3: 0.5 vs 0.25"); a dtype or shape difference
};

// ONNX's backend test runner's default tolerances (onnx/backend/test/runner: numpy's
// assert_allclose); a case overrides them only where ONNX's own test declares other ones (the
// data.json of its real-model cases).
inline constexpr double kOnnxRtol = 1e-3, kOnnxAtol = 1e-7;

// rtol and atol as ONNX's backend test runner uses them by default, unless given. `allowance`
// widens the check of a quantized model's output by that much (absolute; for an integer output,
// that many units), for outputs another runtime may round a step apart (engine/runtime/model_session.h,
// OutputQuanta). `run --data` makes two more exceptions, there: bf16 steps, and float32 rounding
// small beside an output's largest value (CompareTypedOutputs).
TensorMatch MatchTensor(const TypedTensor& got, const TypedTensor& want, double rtol = kOnnxRtol, double atol = kOnnxAtol,
                        double allowance = 0);

}  // namespace tilebank::engine
