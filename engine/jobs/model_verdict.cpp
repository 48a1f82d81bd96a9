#include "engine/jobs/model_verdict.h"

#include <algorithm>
#include <cstdio>

#include "repo/improvement.h"

namespace tilebank::engine {
namespace {

std::string Thousandths(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", x);
  return text;
}

std::string Millis(double ms) { return Thousandths(ms) + " ms"; }

}  // namespace

ModelVerdict ModelVerdict::Of(const model::InterleavedTiming& timing) {
  ModelVerdict v;
  v.without_ms = timing.a.median_ms;
  v.with_ms = timing.b.median_ms;
  v.spread_ms = std::max(timing.a.spread_ms, timing.b.spread_ms);
  v.gain = PairedDifferenceOf(timing.a.run_ms, timing.b.run_ms);
  v.runs = timing.b.runs;
  return v;
}

double ModelVerdict::ReportedPercent(bool taken_back) const {
  return ImprovementPercent(without_ms, ReportedResultMs(taken_back));
}

double ModelVerdict::ReportedResultMs(bool taken_back) const {
  if (taken_back || WithinSpread()) return without_ms;
  return without_ms - gain.median;
}

std::string ModelVerdict::ReportedText(bool taken_back) const {
  return ImprovementText(without_ms, ReportedResultMs(taken_back));
}

std::string ModelVerdict::Measured(size_t entries) const {
  return Millis(without_ms) + " without this run's " + std::to_string(entries) + " entries, " + Millis(with_ms) +
         " with them (interleaved whole-model runs, median of " + std::to_string(runs) + " each, spread " + Millis(spread_ms) + "; gain " +
         Millis(gain.median) + " a round, 95% interval " + Thousandths(gain.low) + " to " + Millis(gain.high) + ")";
}

}  // namespace tilebank::engine
