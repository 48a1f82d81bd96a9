// The precision mode (engine/core/precision_mode.h) and the unset knob value it relies on
// (engine/core/search_space.h): a policy at float32 does not spell the knob, so the policies stored
// before it existed keep their text and stay points of the space.
#include <doctest/doctest.h>

#include "engine/core/precision_mode.h"

namespace tilebank::engine {
namespace {

SearchSpace SpaceWithPrecision() {
  SearchSpace space;
  space.knobs = {KnobDomain{kPrecisionKnob, {std::string("fp32"), std::string("bf16")}, TuneMode::kSchedule, std::string("fp32")},
                 KnobDomain{"impl", {std::string("default"), std::string("other")}, TuneMode::kSchedule}};
  return space;
}

TEST_CASE("precision mode: parsed by its AOE-style names, anything else refused naming both") {
  CHECK(ParsePrecisionMode("force_fp32").value() == PrecisionMode::kForceFp32);
  CHECK(ParsePrecisionMode("allow-fp32-to-bf16").value() == PrecisionMode::kAllowFp32ToBf16);
  const auto bad = ParsePrecisionMode("fp16");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("force_fp32") != std::string::npos);
  CHECK(bad.status().message().find("allow_fp32_to_bf16") != std::string::npos);
  CHECK(std::string(PrecisionModeName(PrecisionMode::kAllowFp32ToBf16)) == "allow_fp32_to_bf16");
}

TEST_CASE("precision knob: unset means fp32, policies leave it out, and the mode filters the space") {
  const SearchSpace space = SpaceWithPrecision();
  const Policy plain = MakePolicy({{"impl", std::string("default")}});
  // A policy without the knob is the config at fp32; PolicyOf gives it back without the knob.
  Config c;
  REQUIRE(space.ConfigOf(plain, &c));
  CHECK(c == Config{0, 0});
  CHECK(space.PolicyOf(c) == plain);
  CHECK(PolicyText(space.PolicyOf({1, 1})) == "impl=other,precision=bf16");
  const Policy lowered = space.With(plain, kPrecisionKnob, std::string("bf16"));
  CHECK(PolicyText(lowered) == "impl=default,precision=bf16");
  CHECK(LowersPrecision(lowered));
  CHECK_FALSE(LowersPrecision(plain));
  CHECK(space.With(lowered, kPrecisionKnob, std::string("fp32")) == plain);
  // Schedule searches pinned to a base without the knob stay at fp32.
  const SearchSpace pinned = space.PinnedExcept(TuneMode::kFormat, plain);
  CHECK(pinned.knobs[0].values == std::vector<KnobValue>{std::string("fp32")});
  // force_fp32 removes the knob (fp32 only); allow_fp32_to_bf16 keeps both values.
  const SearchSpace exact = WithinPrecision(space, PrecisionMode::kForceFp32);
  CHECK(exact.size() == 1);
  CHECK(exact.IndexOf(kPrecisionKnob) < 0);
  CHECK(WithinPrecision(space, PrecisionMode::kAllowFp32ToBf16).knobs[0].values.size() == 2);
  CHECK_FALSE(PrecisionAllowed(PrecisionMode::kForceFp32, lowered));
  CHECK(PrecisionAllowed(PrecisionMode::kAllowFp32ToBf16, lowered));
  CHECK(PrecisionAllowed(PrecisionMode::kForceFp32, plain));
}

}  // namespace
}  // namespace tilebank::engine
