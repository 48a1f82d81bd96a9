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
  // A knob left at its unset value alone is no knob: the space is then exactly what it was before
  // the knob existed (the strategies draw per knob, the cost model compares per knob).
  std::erase_if(space.knobs, [](const KnobDomain& k) { return k.name == kPrecisionKnob && k.values.size() == 1 && k.unset && k.values[0] == *k.unset; });
  return space;
}

}  // namespace tilebank::engine
