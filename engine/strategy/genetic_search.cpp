// Genetic search for cube ops. A generation of `kPopulation` configs is measured, then the next is
// bred from the best measured so far: the elites survive (not re-measured), parents are picked by
// tournament, children take each knob from either parent and mutate (a step to a neighbouring value
// of an ordered knob, or any value), and a child that is invalid or already measured is repaired by
// further mutation before falling back to a fresh random config.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "engine/strategy/search_strategy.h"

namespace tilebank::engine {
namespace {

constexpr size_t kPopulation = 12;
constexpr size_t kElites = 3;
constexpr size_t kTournament = 3;
constexpr int kRepairTries = 30;

class GeneticSearch : public SearchStrategy {
 public:
  GeneticSearch(const SearchSpace& space, uint64_t seed, std::vector<Config> seeds)
      : ledger_(space, seed), pending_(std::move(seeds)) {}

  size_t PreferredBatch() const override { return kPopulation; }

  std::vector<Config> Propose(size_t count) override {
    std::vector<Config> out;
    while (out.size() < count) {
      if (pending_.empty()) Breed();
      if (pending_.empty()) break;
      Config c = pending_.front();
      pending_.erase(pending_.begin());
      if (ledger_.Seen(c) || !ledger_.space().IsValid(c)) continue;
      ledger_.Mark(c);
      out.push_back(std::move(c));
    }
    return out;
  }

  void Observe(const Config& config, double cost_us) override {
    measured_[config] = std::isfinite(cost_us) ? cost_us : std::numeric_limits<double>::infinity();
  }

 private:
  // Fills pending_ with the next generation (the first one is random around the seeds).
  void Breed() {
    std::vector<std::pair<double, Config>> ranked;
    for (const auto& [c, cost] : measured_) ranked.push_back({cost, c});
    std::sort(ranked.begin(), ranked.end());
    const bool can_breed = ranked.size() >= 2 && std::isfinite(ranked[1].first);
    // Parents: the best measured configs, at most a population's worth (elites included).
    std::vector<std::pair<double, Config>> parents(ranked.begin(), ranked.begin() + std::min(ranked.size(), kPopulation));
    size_t children = kPopulation - (can_breed ? std::min(kElites, parents.size()) : 0);
    for (size_t i = 0; i < children; ++i) {
      Config child;
      if (can_breed) {
        const Config& a = Tournament(parents);
        const Config& b = Tournament(parents);
        child = Crossover(a, b);
        Mutate(child, 1.0 / std::max<size_t>(1, child.size()));
        for (int t = 0; t < kRepairTries && (ledger_.Seen(child) || !ledger_.space().IsValid(child) || Pending(child)); ++t)
          Mutate(child, 2.0 / std::max<size_t>(1, child.size()));
      }
      if (child.empty() || ledger_.Seen(child) || !ledger_.space().IsValid(child) || Pending(child)) child = ledger_.RandomFresh();
      if (child.empty()) break;
      pending_.push_back(std::move(child));
    }
  }

  bool Pending(const Config& c) const { return std::find(pending_.begin(), pending_.end(), c) != pending_.end(); }

  const Config& Tournament(const std::vector<std::pair<double, Config>>& pool) {
    size_t best = pool.size();
    for (size_t i = 0; i < kTournament; ++i) {
      size_t pick = std::uniform_int_distribution<size_t>(0, pool.size() - 1)(ledger_.rng());
      if (best == pool.size() || pool[pick].first < pool[best].first) best = pick;
    }
    return pool[best].second;
  }

  Config Crossover(const Config& a, const Config& b) {
    Config child(a.size());
    for (size_t i = 0; i < a.size(); ++i) child[i] = std::bernoulli_distribution(0.5)(ledger_.rng()) ? a[i] : b[i];
    return child;
  }

  void Mutate(Config& c, double rate) {
    const auto& knobs = ledger_.space().knobs;
    for (size_t i = 0; i < c.size(); ++i) {
      int n = static_cast<int>(knobs[i].values.size());
      if (n < 2 || !std::bernoulli_distribution(rate)(ledger_.rng())) continue;
      if (std::bernoulli_distribution(0.6)(ledger_.rng())) {  // a neighbouring value
        int step = std::bernoulli_distribution(0.5)(ledger_.rng()) ? 1 : -1;
        c[i] = std::clamp(c[i] + step, 0, n - 1);
      } else {
        c[i] = std::uniform_int_distribution<int>(0, n - 1)(ledger_.rng());
      }
    }
  }

  ProposalLedger ledger_;
  std::vector<Config> pending_;
  std::map<Config, double> measured_;
};

}  // namespace

std::unique_ptr<SearchStrategy> MakeGeneticSearch(const SearchSpace& space, uint64_t seed, std::vector<Config> seeds) {
  return std::make_unique<GeneticSearch>(space, seed, std::move(seeds));
}

}  // namespace tilebank::engine
