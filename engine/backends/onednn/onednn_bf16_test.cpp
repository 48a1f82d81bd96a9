// impl.onednn in bf16 (engine/core/precision_mode.h): where oneDNN computes bf16 natively on this
// CPU, a convolution's and a weights product's spaces have `precision` (unset: fp32); the bf16
// kernels match the float32 reference within bf16's tolerance and not within float32's; the
// tuner tries them only when the job's precision mode allows. Elsewhere the knob is absent.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "engine/backends/library_impls.h"
#include "engine/backends/op_template.h"
#include "engine/core/op_spec.h"
#include "engine/core/precision_mode.h"
#include "engine/tuning/runner.h"
#include "engine/tuning/tuner.h"

namespace tilebank::engine {
namespace {

nlohmann::json Desc(const std::vector<int64_t>& shape) { return {{"shape", shape}, {"type", "float32"}}; }

OpSpec Op(const std::string& type, const std::vector<std::vector<int64_t>>& inputs, const std::vector<int64_t>& output) {
  nlohmann::json in = nlohmann::json::array();
  for (const auto& s : inputs) in.push_back(Desc(s));
  auto op = ParseOpSpec(nlohmann::json{{"op", type}, {"input_desc", in}, {"output_desc", {Desc(output)}}}, 0);
  REQUIRE_MESSAGE(op.ok(), op.status().message());
  return *op;
}

bool HasPrecisionKnob(const SearchSpace& space) { return space.IndexOf(kPrecisionKnob) >= 0; }

TEST_CASE("impl.onednn bf16: offered where native, within bf16's tolerance, tried only when the precision mode allows") {
  const OpTemplate& onednn = OneDnnImpl();
  const OpSpec conv = Op("Conv", {{1, 256, 14, 14}, {128, 256, 1, 1}, {128}}, {1, 128, 14, 14});
  const OpSpec gemm = Op("MatMul", {{8, 512}, {512, 256}}, {8, 256});
  const OpSpec batched = Op("MatMul", {{4, 8, 64}, {4, 64, 8}}, {4, 8, 8});
  CHECK_FALSE(HasPrecisionKnob(onednn.Space(batched)));  // bf16 prepacks B: weights only
  if (!HasPrecisionKnob(onednn.Space(gemm))) {
    // No native bf16 here (AVX2, or AVX-512 without it): no knob, and no policy of it is valid.
    CHECK_FALSE(HasPrecisionKnob(onednn.Space(conv)));
    return;
  }
  for (const OpSpec* op : {&conv, &gemm}) {
    CAPTURE(op->op_type);
    const SearchSpace space = onednn.Space(*op);
    REQUIRE(HasPrecisionKnob(space));
    const Policy fp32 = onednn.DefaultPolicy(*op), bf16 = space.With(fp32, kPrecisionKnob, std::string("bf16"));
    CHECK(PolicyText(fp32).find(kPrecisionKnob) == std::string::npos);  // the built-in choice's text is as it was
    CHECK(space.valid(bf16));
    auto runner = Runner::Create(*op);
    REQUIRE(runner.ok());
    auto lowered = onednn.Build(*op, bf16), exact = onednn.Build(*op, fp32);
    REQUIRE_MESSAGE(lowered.ok(), lowered.status().message());
    REQUIRE(exact.ok());
    const RunResult within = runner->Check(**lowered, /*lower_precision=*/true);
    CHECK_MESSAGE(within.ok, within.failure);
    CHECK(within.max_error > 0);
    // bf16's rounding is far beyond float32's tolerance over a sum of 256 or 512 products.
    const RunResult strict = runner->Check(**lowered, false);
    CHECK_FALSE(strict.ok);
    CHECK(runner->Check(**exact, false).ok);
    CHECK((*lowered)->Identity() != (*exact)->Identity());
    // The tuner: no bf16 candidate under force_fp32; the first near policy under allow_fp32_to_bf16.
    for (PrecisionMode mode : {PrecisionMode::kForceFp32, PrecisionMode::kAllowFp32ToBf16}) {
      TuneOptions options;
      options.trials = 8;  // half for the incumbent's space: the built-in choice, then its nearest policies
      options.confirm_top = 1;
      options.precision_mode = mode;
      options.modes = {TuneMode::kImpl};
      bool tried_bf16 = false;
      auto outcome = TuneOp(*op, options, [&](const TrialEvent& e) {
        if (e.template_id == std::string(onednn.id()) && e.policy_text.find("precision=bf16") != std::string::npos) {
          tried_bf16 = true;
          CHECK_MESSAGE(e.result.ok, e.result.failure);
        }
      });
      REQUIRE(outcome.ok());
      CHECK(tried_bf16 == (mode == PrecisionMode::kAllowFp32ToBf16));
    }
  }
}

}  // namespace
}  // namespace tilebank::engine
