// Tunes one operator instance: the closed loop of DESIGN.md (search space -> strategy ->
// builder -> runner) over the requested modes. The baseline is the op class's built-in choice
// (engine/catalog/builtin_choice.h: what runs when the bank holds nothing), measured first. Schedule searches the primary template's loop
// knobs with its layout knobs at their defaults; Format searches layouts and loops together,
// seeded with the Schedule winner; Impl measures the alternatives (other templates, oneDNN,
// OpenBLAS), searching the Halide ones briefly. The fastest few are then measured again side by
// side and the winner of all modes is reported with the mode that found it. Failed candidates
// are recorded and never win.
#pragma once
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/op_spec.h"
#include "engine/core/precision_mode.h"
#include "engine/tuning/runner.h"
#include "engine/core/search_space.h"
#include "engine/tuning/search_strategy.h"

namespace tilebank::engine {

class OpTemplate;

struct TuneOptions {
  std::string tune_mode = "GA,RL";  // GA | RL | GA,RL (per op class) | random | exhaustive
  std::vector<TuneMode> modes = {TuneMode::kSchedule, TuneMode::kFormat, TuneMode::kImpl};
  int trials = 48;                  // candidates measured per operator, all modes together
  // Early stop: a search of one template's space ends after this many trials in a row that did not
  // make the op's best faster by 1% (0: never). Libraries with one policy still get their trial.
  int patience = 0;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  uint64_t seed = 1;
  // The precisions candidates may compute in (engine/core/precision_mode.h): spaces keep only
  // those, and a starting point in another is skipped.
  PrecisionMode precision_mode = PrecisionMode::kForceFp32;
  RunOptions run;
  // At the end, the `confirm_top` fastest candidates are measured again `confirm_rounds` times,
  // round robin, and the winner is the one with the best round (1 turns confirmation off).
  size_t confirm_top = 4;
  int confirm_rounds = 3;
  // Known good choices measured right after the baseline and seeding their template's search: the
  // bank's entry of the nearest shape, say. One whose template cannot run this op, or whose policy
  // does not fit this op's space, is skipped.
  struct StartingPoint {
    std::string template_id;
    Policy policy;
  };
  std::vector<StartingPoint> starting_points;
  // Set: every candidate is measured where a model runs the operator (its steps swapped in place,
  // engine/jobs/in_context_measure.h) instead of alone on the runner's operands.
  std::function<RunResult(const OpTemplate& t, const Policy& policy)> measure_in_context;
};

struct TrialEvent {
  int trial = 0, budget = 0;
  TuneMode mode = TuneMode::kSchedule;
  std::string template_id, policy_text;
  RunResult result;
  double best_us = 0, default_us = 0;
};

struct TuneOutcome {
  bool default_ok = false;
  std::string default_failure;
  Measurement default_time;        // the baseline: the built-in choice
  std::string baseline_template_id;  // the built-in choice itself
  uint32_t baseline_template_version = 0;
  TuneMode baseline_mode = TuneMode::kSchedule;
  Policy baseline_policy;
  bool found = false;              // some candidate ran correctly
  std::string template_id;
  uint32_t template_version = 0;
  TuneMode mode = TuneMode::kSchedule;  // the mode whose search found the winner
  Policy policy;
  Measurement best_time;
  std::string strategy;
  int trials = 0, failures = 0;
  std::vector<std::string> failure_samples;  // the first few failure messages
};

// Strategy for an op under a --tune-mode value (GA,RL picks GA for cube ops, RL for the rest).
Result<StrategyKind> StrategyFor(const OpSpec& op, const std::string& tune_mode);

// `runner`, when given, is a Runner made for `op` (saves recomputing the reference).
Result<TuneOutcome> TuneOp(const OpSpec& op, const TuneOptions& options,
                           const std::function<void(const TrialEvent&)>& on_trial = nullptr, const Runner* runner = nullptr);

}  // namespace tilebank::engine
