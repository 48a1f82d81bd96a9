// Search strategies: propose the next policies to measure from the results so far.
//   GA          genetic algorithm (cube ops): population, tournament selection, uniform crossover,
//               mutation, elitism; invalid children are repaired; nothing is proposed twice.
//   RL          Monte Carlo tree search with UCT over the knob decisions (vector ops): the tree and
//               a per-knob value model learn from measured rewards and steer later proposals.
//   random      uniform over valid, not yet proposed configs (the baseline).
//   exhaustive  every valid config in order.
// Costs are microseconds; a failed candidate is observed as +infinity.
#pragma once
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/core/search_space.h"
#include "base/status.h"

namespace tilebank::engine {

enum class StrategyKind { kGenetic, kMcts, kRandom, kExhaustive };
Result<StrategyKind> ParseStrategyKind(const std::string& name);  // GA, RL, random, exhaustive
const char* StrategyName(StrategyKind kind);                      // "GA", "RL", "random", "exhaustive"

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  // Up to `count` valid configs never proposed before; fewer or none when the space runs out.
  virtual std::vector<Config> Propose(size_t count) = 0;
  // The cost of a config this strategy proposed (or a seed it was given).
  virtual void Observe(const Config& config, double cost_us) = 0;
  // How many configs to measure before the next Observe makes a difference (a GA generation).
  virtual size_t PreferredBatch() const { return 1; }
};

// `seeds` (e.g. the default policy) are proposed first. Same seed, same proposals for the same costs.
std::unique_ptr<SearchStrategy> MakeStrategy(StrategyKind kind, const SearchSpace& space, uint64_t seed,
                                             std::vector<Config> seeds = {});

// Shared by the strategies: the configs proposed so far and a source of random valid ones.
class ProposalLedger {
 public:
  ProposalLedger(const SearchSpace& space, uint64_t seed) : space_(space), rng_(seed) {}
  bool Seen(const Config& c) const { return seen_.count(c) != 0; }
  void Mark(const Config& c) { seen_.insert(c); }
  // A uniformly random valid config not yet proposed, after up to `tries` draws; empty if none found.
  Config RandomFresh(int tries = 2000);
  // Whether every valid config has been proposed (known only for spaces small enough to enumerate).
  bool Exhausted();
  std::mt19937_64& rng() { return rng_; }
  const SearchSpace& space() const { return space_; }

 private:
  const SearchSpace& space_;
  std::mt19937_64 rng_;
  std::set<Config> seen_;
  std::vector<Config> unseen_valid_;  // filled once random draws start failing
  bool enumerated_ = false;
};

}  // namespace tilebank::engine
