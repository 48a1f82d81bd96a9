#include "engine/tuning/search_loop.h"

#include <algorithm>

namespace tilebank::engine {

int RunSearch(SearchStrategy& strategy, int budget, const std::function<double(const Config&)>& cost, const std::function<bool()>& stop) {
  int spent = 0;
  while (spent < budget && !(stop && stop())) {
    const auto batch = strategy.Propose(std::min<size_t>(strategy.PreferredBatch(), static_cast<size_t>(budget - spent)));
    if (batch.empty()) break;
    for (const Config& c : batch) {
      if (spent > 0 && stop && stop()) return spent;  // the rest of the batch is never measured
      strategy.Observe(c, cost(c));
      ++spent;
    }
  }
  return spent;
}

}  // namespace tilebank::engine
