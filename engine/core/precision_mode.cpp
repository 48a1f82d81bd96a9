#include "engine/core/precision_mode.h"

#include <algorithm>

namespace tilebank::engine {

Result<PrecisionMode> ParsePrecisionMode(const std::string& text) {
  std::string t = text;
  std::replace(t.begin(), t.end(), '-', '_');
  if (t == "force_fp32") return PrecisionMode::kForceFp32;
  if (t == "allow_fp32_to_bf16") return PrecisionMode::kAllowFp32ToBf16;
  return Status::InvalidInput("--precision-mode " + text + ": expected force_fp32 (float32 only, the default) or allow_fp32_to_bf16");
}

const char* PrecisionModeName(PrecisionMode mode) { return mode == PrecisionMode::kForceFp32 ? "force_fp32" : "allow_fp32_to_bf16"; }

std::string PolicyPrecision(const Policy& policy) { return TextKnob(policy, kPrecisionKnob, "fp32"); }

bool PrecisionAllowed(PrecisionMode mode, const Policy& policy) {
  const std::string p = PolicyPrecision(policy);
  return p == "fp32" || (p == "bf16" && mode == PrecisionMode::kAllowFp32ToBf16);
}

SearchSpace WithinPrecision(SearchSpace space, PrecisionMode mode) {
  for (KnobDomain& k : space.knobs)
    if (k.name == kPrecisionKnob)
      k.values.erase(std::remove_if(k.values.begin(), k.values.end(),
                                    [&](const KnobValue& v) { return !PrecisionAllowed(mode, {Knob{kPrecisionKnob, v}}); }),
                     k.values.end());
  return space;
}

}  // namespace tilebank::engine
