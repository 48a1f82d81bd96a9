#include "engine/tuning/search_strategy.h"

#include <algorithm>

namespace tilebank::engine {

std::unique_ptr<SearchStrategy> MakeGeneticSearch(const SearchSpace& space, uint64_t seed, std::vector<Config> seeds);
std::unique_ptr<SearchStrategy> MakeMctsSearch(const SearchSpace& space, uint64_t seed, std::vector<Config> seeds);
std::unique_ptr<SearchStrategy> MakeRandomSearch(const SearchSpace& space, uint64_t seed, std::vector<Config> seeds);
std::unique_ptr<SearchStrategy> MakeExhaustiveSearch(const SearchSpace& space, uint64_t seed, std::vector<Config> seeds);

Result<StrategyKind> ParseStrategyKind(const std::string& name) {
  if (name == "GA") return StrategyKind::kGenetic;
  if (name == "RL") return StrategyKind::kMcts;
  if (name == "random") return StrategyKind::kRandom;
  if (name == "exhaustive") return StrategyKind::kExhaustive;
  return Status::InvalidInput("unknown strategy '" + name + "' (GA, RL, random or exhaustive)");
}

const char* StrategyName(StrategyKind kind) {
  switch (kind) {
    case StrategyKind::kGenetic: return "GA";
    case StrategyKind::kMcts: return "RL";
    case StrategyKind::kRandom: return "random";
    case StrategyKind::kExhaustive: return "exhaustive";
  }
  return "?";
}

namespace {
bool IsPointOf(const SearchSpace& space, const Config& c) {
  if (c.size() != space.size()) return false;
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i] < 0 || c[i] >= static_cast<int>(space.knobs[i].values.size())) return false;
  return true;
}
}  // namespace

std::unique_ptr<SearchStrategy> MakeStrategy(StrategyKind kind, const SearchSpace& space, uint64_t seed,
                                             std::vector<Config> seeds) {
  // A seed from another space would index past a knob's values: drop it rather than read out of bounds.
  std::erase_if(seeds, [&](const Config& c) { return !IsPointOf(space, c); });
  switch (kind) {
    case StrategyKind::kGenetic: return MakeGeneticSearch(space, seed, std::move(seeds));
    case StrategyKind::kMcts: return MakeMctsSearch(space, seed, std::move(seeds));
    case StrategyKind::kRandom: return MakeRandomSearch(space, seed, std::move(seeds));
    case StrategyKind::kExhaustive: return MakeExhaustiveSearch(space, seed, std::move(seeds));
  }
  return nullptr;
}

namespace {
constexpr uint64_t kEnumerateLimit = 200000;
}

Config ProposalLedger::RandomFresh(int tries) {
  if (!enumerated_) {
    Config c(space_.size());
    for (int t = 0; t < tries; ++t) {
      for (size_t i = 0; i < c.size(); ++i)
        c[i] = std::uniform_int_distribution<int>(0, static_cast<int>(space_.knobs[i].values.size()) - 1)(rng_);
      if (!Seen(c) && space_.IsValid(c)) return c;
    }
    if (space_.Cardinality() > kEnumerateLimit) return {};
    // Draws keep hitting seen or invalid configs: list the rest once and draw from that list.
    enumerated_ = true;
    for (auto& e : space_.ValidConfigs())
      if (!Seen(e)) unseen_valid_.push_back(std::move(e));
  }
  while (!unseen_valid_.empty()) {
    size_t pick = std::uniform_int_distribution<size_t>(0, unseen_valid_.size() - 1)(rng_);
    Config c = unseen_valid_[pick];
    unseen_valid_[pick] = unseen_valid_.back();
    unseen_valid_.pop_back();
    if (!Seen(c)) return c;
  }
  return {};
}

bool ProposalLedger::Exhausted() { return enumerated_ && unseen_valid_.empty(); }

}  // namespace tilebank::engine
