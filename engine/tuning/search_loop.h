// The loop every search runs: ask the strategy for a batch, measure each config, tell it the cost.
// OPAT's tuner (engine/tuning/tuner.h) and SGAT's (engine/tuning/subgraph_tuner.h) both drive their
// strategies through it.
#pragma once
#include <functional>

#include "engine/tuning/search_strategy.h"

namespace tilebank::engine {

// Proposes and observes until `budget` configs were observed, the strategy has nothing left to
// propose, or `stop()` (when given) says so before a config. `cost` measures one config (+infinity
// when it failed). Returns how many configs were observed.
int RunSearch(SearchStrategy& strategy, int budget, const std::function<double(const Config&)>& cost,
              const std::function<bool()>& stop = nullptr);

}  // namespace tilebank::engine
