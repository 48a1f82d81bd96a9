// The precision a tuning job may compute in, after ATC/AOE's precision_mode: `force_fp32` (the
// default) keeps every kernel in the model's float32; `allow_fp32_to_bf16` lets the tuner also try
// kernels that read their operands as bfloat16 and accumulate in float32 (oneDNN's bf16 kernels, on
// CPUs with native bf16 dot products). A policy says its precision in the knob `precision`
// ("fp32", "bf16"); a policy without it computes in float32. Such a candidate is checked against the
// float32 result within bf16's tolerance, and kept, as every candidate, only when it is faster.
#pragma once
#include <string>

#include "engine/core/search_space.h"
#include "base/status.h"

namespace tilebank::engine {

enum class PrecisionMode { kForceFp32, kAllowFp32ToBf16 };

inline constexpr const char* kPrecisionKnob = "precision";

// "force_fp32" or "allow_fp32_to_bf16" (also with dashes); anything else is an error naming both.
Result<PrecisionMode> ParsePrecisionMode(const std::string& text);
const char* PrecisionModeName(PrecisionMode mode);

// The policy's `precision` knob, "fp32" when it has none.
std::string PolicyPrecision(const Policy& policy);
// Whether the policy computes in less than float32.
inline bool LowersPrecision(const Policy& policy) { return PolicyPrecision(policy) != "fp32"; }
// Whether `mode` allows the policy's precision.
bool PrecisionAllowed(PrecisionMode mode, const Policy& policy);
// `space` without the precisions `mode` does not allow: under force_fp32 its `precision` knob is
// removed, so that the space is the one it was before the knob existed.
SearchSpace WithinPrecision(SearchSpace space, PrecisionMode mode);

// bfloat16 keeps 8 significant bits: each operand is rounded by up to 2^-9 of itself, so a sum of
// products drifts by about 2^-8 of the result's scale, and a model's output by a few times that
// after a few such layers. Results are compared within this fraction of the largest expected
// value (and of each value).
inline constexpr double kBf16Tolerance = 1.0 / 32;

}  // namespace tilebank::engine
