#include "engine/jobs/model_verdict.h"

#include <cmath>
#include <cstdio>

#include "repo/improvement.h"

namespace tilebank::engine {
namespace {

std::string Millis(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", ms);
  return text;
}

}  // namespace

ModelVerdict ModelVerdict::Of(const model::InterleavedTiming& timing) {
  ModelVerdict v;
  v.without_ms = timing.a.median_ms;
  v.with_ms = timing.b.median_ms;
  v.spread_ms = std::max(timing.a.spread_ms, timing.b.spread_ms);
  v.runs = timing.b.runs;
  return v;
}

bool ModelVerdict::WithinSpread() const { return std::abs(with_ms - without_ms) <= spread_ms; }

double ModelVerdict::ReportedPercent(bool taken_back) const {
  if (taken_back || WithinSpread()) return 0;
  return ImprovementPercent(without_ms, with_ms);
}

std::string ModelVerdict::ReportedText(bool taken_back) const {
  if (taken_back || WithinSpread()) return ImprovementText(1, 1);
  return ImprovementText(without_ms, with_ms);
}

std::string ModelVerdict::Measured(size_t entries) const {
  return Millis(without_ms) + " without this run's " + std::to_string(entries) + " entries, " + Millis(with_ms) +
         " with them (interleaved whole-model runs, median of " + std::to_string(runs) + " each, spread " + Millis(spread_ms) + ")";
}

}  // namespace tilebank::engine
