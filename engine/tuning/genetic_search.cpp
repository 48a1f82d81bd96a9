// Genetic search for cube ops. A generation of `kPopulation` configs is measured, then the next is
// bred from the best measured so far: the elites survive (not re-measured), parents are picked by
// tournament, children take each knob from either parent and mutate (a step to a neighbouring value
// of an ordered knob, or any value), and a child that is invalid or already measured is repaired by
// further mutation before falling back to a fresh random config. Once the cost model (cost_model.h)
// has enough measurements, each generation is screened: kGeneticScreen times as many children are bred,
// the model's best predicted are measured, plus kExplorers children drawn at random from the rest
// (replayed over data/spaces, screening took GA's score at 50 trials from 0.38 to about 0.6, and
// dropping the explorer cost a third of that). Generations of 6, the model fitted from the first
// one on: over 600 replays of the MatMul table, 0.69 at 50 trials against 0.61 with generations
// of 8 and a model from 8 measurements.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "engine/tuning/cost_model.h"
#include "engine/tuning/search_strategy.h"

namespace tilebank::engine {
namespace {

constexpr size_t kPopulation = 6;
constexpr size_t kElites = 3;
constexpr size_t kTournament = 3;
constexpr int kRepairTries = 30;
constexpr size_t kGeneticScreen = 16;
constexpr size_t kExplorers = 1;

class GeneticSearch : public SearchStrategy {
 public:
  GeneticSearch(const SearchSpace& space, uint64_t seed, std::vector<Config> seeds)
      : ledger_(space, seed), pending_(std::move(seeds)), model_(space, kPopulation) {}

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
    const size_t children = kPopulation - (can_breed ? std::min(kElites, parents.size()) : 0);
    model_.Fit(std::vector<std::pair<Config, double>>(measured_.begin(), measured_.end()));
    const bool screen = can_breed && model_.Ready();
    std::vector<Config> brood;
    for (size_t i = 0; i < (screen ? children * kGeneticScreen : children); ++i) {
      Config child = can_breed ? Child(parents) : Config{};
      if (child.empty() || Unfit(child) || std::find(brood.begin(), brood.end(), child) != brood.end()) child = ledger_.RandomFresh();
      if (child.empty()) break;
      brood.push_back(std::move(child));
    }
    if (screen) brood = Screen(std::move(brood), children);
    for (auto& c : brood) pending_.push_back(std::move(c));
  }

  // A child of two tournament winners, repaired by further mutation while it is unfit.
  Config Child(const std::vector<std::pair<double, Config>>& parents) {
    Config child = Crossover(Tournament(parents), Tournament(parents));
    Mutate(child, 1.0 / std::max<size_t>(1, child.size()));
    for (int t = 0; t < kRepairTries && Unfit(child); ++t) Mutate(child, 2.0 / std::max<size_t>(1, child.size()));
    return child;
  }

  // Invalid, measured or already waiting to be measured.
  bool Unfit(const Config& c) const { return ledger_.Seen(c) || !ledger_.space().IsValid(c) || Pending(c); }

  // The `keep` children the model ranks best, of which kExplorers are swapped for random others.
  std::vector<Config> Screen(std::vector<Config> brood, size_t keep) {
    const std::vector<size_t> order = model_.Rank(brood);
    const size_t exploit = std::min(order.size(), keep > kExplorers ? keep - kExplorers : keep);
    std::vector<Config> chosen;
    for (size_t i = 0; i < exploit; ++i) chosen.push_back(brood[order[i]]);
    std::vector<size_t> rest(order.begin() + exploit, order.end());
    std::shuffle(rest.begin(), rest.end(), ledger_.rng());
    for (size_t i = 0; i < rest.size() && chosen.size() < keep; ++i) chosen.push_back(brood[rest[i]]);
    return chosen;
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
  CostModel model_;
};

}  // namespace

std::unique_ptr<SearchStrategy> MakeGeneticSearch(const SearchSpace& space, uint64_t seed, std::vector<Config> seeds) {
  return std::make_unique<GeneticSearch>(space, seed, std::move(seeds));
}

}  // namespace tilebank::engine
