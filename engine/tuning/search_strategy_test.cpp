#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "engine/tuning/search_strategy.h"

namespace tilebank::engine {
namespace {

// Four knobs of eight values; cost is smooth with one optimum at (5, 2, 6, 1) and a constraint
// (knob 0 + knob 1 <= 10) cutting off a corner.
SearchSpace Synthetic() {
  SearchSpace s;
  for (const char* name : {"a", "b", "c", "d"}) {
    KnobDomain k{name, {}, TuneMode::kSchedule};
    for (int64_t v = 0; v < 8; ++v) k.values.push_back(v);
    s.knobs.push_back(k);
  }
  s.valid = [](const Policy& p) { return IntKnob(p, "a", 0) + IntKnob(p, "b", 0) <= 10; };
  return s;
}

double BowlCost(const Config& c) {
  const int opt[] = {5, 2, 6, 1};
  double cost = 10;
  for (int i = 0; i < 4; ++i) cost += 3.0 * (c[i] - opt[i]) * (c[i] - opt[i]);
  return cost;
}

double BestAfter(StrategyKind kind, uint64_t seed, int budget) {
  SearchSpace space = Synthetic();
  auto strategy = MakeStrategy(kind, space, seed);
  double best = INFINITY;
  for (int spent = 0; spent < budget;) {
    auto batch = strategy->Propose(std::min<size_t>(strategy->PreferredBatch(), budget - spent));
    if (batch.empty()) break;
    for (const auto& c : batch) {
      double cost = BowlCost(c);
      strategy->Observe(c, cost);
      best = std::min(best, cost);
      ++spent;
    }
  }
  return best;
}

TEST_CASE("a seed that is not a point of the space is dropped, the valid seed comes first") {
  // The tuner once seeded a restricted space (one value left for a knob) with a config of the full
  // space: index 1 of a one-value knob read past the end and crashed the clang build.
  SearchSpace space = Synthetic();
  space.knobs[3].values = {int64_t{0}};
  for (auto kind : {StrategyKind::kGenetic, StrategyKind::kMcts, StrategyKind::kRandom, StrategyKind::kExhaustive}) {
    CAPTURE(StrategyName(kind));
    auto strategy = MakeStrategy(kind, space, 3, {Config{1, 1, 1, 1}, Config{1, 2, 3}, Config{2, 2, 2, 0}});
    auto batch = strategy->Propose(1);
    REQUIRE(batch.size() == 1);
    CHECK(batch[0] == Config{2, 2, 2, 0});
  }
}

TEST_CASE("strategies propose only valid configs, never the same one twice") {
  SearchSpace space = Synthetic();
  for (auto kind : {StrategyKind::kGenetic, StrategyKind::kMcts, StrategyKind::kRandom, StrategyKind::kExhaustive}) {
    CAPTURE(StrategyName(kind));
    auto strategy = MakeStrategy(kind, space, 7);
    std::set<Config> seen;
    for (int i = 0; i < 300; ++i) {
      auto batch = strategy->Propose(strategy->PreferredBatch());
      REQUIRE(!batch.empty());
      for (const auto& c : batch) {
        CHECK(space.IsValid(c));
        CHECK(seen.insert(c).second);
        strategy->Observe(c, i % 17 == 0 ? INFINITY : BowlCost(c));  // some failures on the way
      }
      if (seen.size() >= 300) break;
    }
  }
}

TEST_CASE("exhaustive search visits every valid config exactly once") {
  SearchSpace space = Synthetic();
  auto strategy = MakeStrategy(StrategyKind::kExhaustive, space, 1);
  size_t valid = 0;
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b) valid += a + b <= 10 ? 64 : 0;
  std::set<Config> seen;
  for (auto batch = strategy->Propose(64); !batch.empty(); batch = strategy->Propose(64))
    for (const auto& c : batch) CHECK(seen.insert(c).second);
  CHECK(seen.size() == valid);
}

TEST_CASE("GA and RL learn from measurements: better than random search at the same budget") {
  double ga = 0, rl = 0, random = 0;
  const int runs = 30, budget = 40;
  for (uint64_t seed = 1; seed <= runs; ++seed) {
    ga += BestAfter(StrategyKind::kGenetic, seed, budget);
    rl += BestAfter(StrategyKind::kMcts, seed, budget);
    random += BestAfter(StrategyKind::kRandom, seed, budget);
  }
  CAPTURE(ga / runs);
  CAPTURE(rl / runs);
  CAPTURE(random / runs);
  CHECK(ga < random);
  CHECK(rl < random);
}

TEST_CASE("seeds are proposed first") {
  SearchSpace space = Synthetic();
  Config seed = {1, 1, 1, 1};
  for (auto kind : {StrategyKind::kGenetic, StrategyKind::kMcts, StrategyKind::kRandom, StrategyKind::kExhaustive}) {
    auto strategy = MakeStrategy(kind, space, 3, {seed});
    auto first = strategy->Propose(1);
    REQUIRE(first.size() == 1);
    CHECK(first[0] == seed);
  }
}

}  // namespace
}  // namespace tilebank::engine
