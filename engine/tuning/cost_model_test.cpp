#include "engine/tuning/cost_model.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

namespace tilebank::engine {
namespace {

// Three knobs of five values whose effects multiply (so they add in log cost).
SearchSpace ThreeKnobs() {
  SearchSpace s;
  for (const char* name : {"a", "b", "c"}) {
    KnobDomain k{name, {}, TuneMode::kSchedule};
    for (int64_t v = 0; v < 5; ++v) k.values.push_back(v);
    s.knobs.push_back(k);
  }
  return s;
}

double AdditiveCost(const Config& c) { return 100.0 * std::pow(1.5, std::abs(c[0] - 3)) * std::pow(1.2, c[1]) * std::pow(2.0, std::abs(c[2] - 1)); }

TEST_CASE("cost model: ranks the best config of an additive space first after a few random measurements") {
  SearchSpace space = ThreeKnobs();
  CostModel model(space);
  std::mt19937 rng(7);
  std::vector<std::pair<Config, double>> seen;
  auto random_config = [&] { return Config{int(rng() % 5), int(rng() % 5), int(rng() % 5)}; };
  for (int i = 0; i < 7; ++i) seen.push_back({random_config(), 0}), seen.back().second = AdditiveCost(seen.back().first);
  model.Fit(seen);
  CHECK_FALSE(model.Ready());  // too few to rank anything
  for (int i = 0; i < 13; ++i) seen.push_back({random_config(), 0}), seen.back().second = AdditiveCost(seen.back().first);
  model.Fit(seen);
  REQUIRE(model.Ready());
  Config best{0, 0, 0};
  for (int a = 0; a < 5; ++a)
    for (int b = 0; b < 5; ++b)
      for (int c = 0; c < 5; ++c)
        if (model.Predict({a, b, c}) < model.Predict(best)) best = {a, b, c};
  CHECK(best == Config{3, 0, 1});
}

TEST_CASE("cost model: learns an interaction no single knob explains") {
  // A register tile of (a+1) x (b+1): the bigger the faster until it no longer fits in 6
  // registers, then it spills and is slow. Each knob alone says "bigger is better" on most
  // configs; only the pair tells where the tile stops fitting.
  SearchSpace space = ThreeKnobs();
  CostModel model(space);
  auto cost = [](const Config& c) { int tile = (c[0] + 1) * (c[1] + 1); return tile <= 6 ? 1200.0 / tile : 1000.0; };
  std::mt19937 rng(11);
  std::vector<std::pair<Config, double>> seen;
  for (int i = 0; i < 40; ++i) {
    Config c{int(rng() % 5), int(rng() % 5), int(rng() % 5)};
    seen.push_back({c, cost(c)});
  }
  model.Fit(seen);
  REQUIRE(model.Ready());
  Config best{0, 0, 0};
  for (int a = 0; a < 5; ++a)
    for (int b = 0; b < 5; ++b)
      if (model.Predict({a, b, 2}) < model.Predict(best)) best = {a, b, 2};
  CHECK(cost(best) <= 240.0);  // the largest tiles that fit: 2x3, 3x2, 1x5, 5x1
}

TEST_CASE("cost model: a failed measurement makes its values look slow") {
  SearchSpace space = ThreeKnobs();
  CostModel model(space);
  std::vector<std::pair<Config, double>> seen;
  for (int v = 0; v < 5; ++v) seen.push_back({{v, v, 0}, 100.0}), seen.push_back({{v, (v + 1) % 5, 2}, 100.0});
  seen.push_back({{0, 0, 4}, std::numeric_limits<double>::infinity()});
  model.Fit(seen);
  REQUIRE(model.Ready());
  CHECK(model.Predict({1, 1, 4}) > model.Predict({1, 1, 0}));
}

}  // namespace
}  // namespace tilebank::engine
