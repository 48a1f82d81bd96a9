// The tuner's early stop: with `patience`, a search of one template's space ends after that many
// trials in a row that did not make the op faster, so a task where nothing moves hands its time on;
// and its final rounds, which measure the built-in choice beside the finalists.
#include "engine/tuning/tuner.h"

#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "engine/backends/op_template.h"
#include "engine/core/op_spec.h"

namespace tilebank::engine {
namespace {

// Every candidate takes the same time: nothing ever improves on the first one.
TuneOutcome TuneFlat(int trials, int patience, std::map<std::string, int>* per_template) {
  auto op = ParseOpSpec(nlohmann::json::parse(R"({"op":"MatMul","input_desc":[{"shape":[64,96],"type":"float32"},
      {"shape":[96,128],"type":"float32"}],"output_desc":[{"shape":[64,128],"type":"float32"}]})"), 0);
  REQUIRE(op.ok());
  TuneOptions options;
  options.trials = trials;
  options.patience = patience;
  options.confirm_top = 1;
  options.measure_in_context = [](const OpTemplate&, const Policy&) {
    RunResult r;
    r.ok = true;
    r.time.median_us = 100;
    return r;
  };
  auto outcome = TuneOp(*op, options, [&](const TrialEvent& e) { (*per_template)[e.template_id]++; });
  REQUIRE_MESSAGE(outcome.ok(), outcome.status().message());
  return *outcome;
}

TEST_CASE("tuner: patience ends a search where nothing moves, and every template still gets its turn") {
  std::map<std::string, int> all, patient;
  const TuneOutcome without = TuneFlat(40, 0, &all);
  const TuneOutcome with = TuneFlat(40, 3, &patient);
  CHECK(with.found);
  CHECK(with.trials < without.trials);
  CHECK(patient.size() == all.size());  // the same templates were tried
  for (const auto& entry : patient) {
    INFO(entry.first);
    CHECK(entry.second <= 1 + 3 + 3);  // a baseline or seed, then at most `patience` stale trials per search of it
  }
}

TEST_CASE("tuner: the final rounds measure the built-in choice beside the finalists, not against its first measurement") {
  auto op = ParseOpSpec(nlohmann::json::parse(R"({"op":"MatMul","input_desc":[{"shape":[64,96],"type":"float32"},
      {"shape":[96,128],"type":"float32"}],"output_desc":[{"shape":[64,128],"type":"float32"}]})"), 0);
  REQUIRE(op.ok());
  // Every kernel runs in 100 us, but the very first measurement (the built-in choice's, taken
  // first) is slow, as a cold first run in a model is: each candidate then looks 30% faster.
  for (size_t top : {size_t{1}, size_t{3}}) {
    CAPTURE(top);
    int calls = 0;
    TuneOptions options;
    options.trials = 12;
    options.confirm_top = top;
    options.confirm_rounds = 3;
    options.measure_in_context = [&calls](const OpTemplate&, const Policy&) {
      RunResult r;
      r.ok = true;
      r.time.median_us = calls++ == 0 ? 130 : 100;
      return r;
    };
    auto outcome = TuneOp(*op, options, [](const TrialEvent&) {});
    REQUIRE(outcome.ok());
    REQUIRE(outcome->default_ok);
    if (top == 1) {
      CHECK(outcome->default_time.median_us == 130);  // no final rounds: the gain is the first measurement's
    } else {
      CHECK(outcome->default_time.median_us == 100);  // measured again beside the finalists: no gain
      CHECK(outcome->best_time.median_us >= outcome->default_time.median_us);
    }
  }
}

}  // namespace
}  // namespace tilebank::engine
