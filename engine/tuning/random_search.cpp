#include "engine/tuning/search_strategy.h"

namespace tilebank::engine {
namespace {

// Uniform random search: the baseline every other strategy is scored against.
class RandomSearch : public SearchStrategy {
 public:
  RandomSearch(const SearchSpace& space, uint64_t seed, std::vector<Config> seeds) : ledger_(space, seed), seeds_(std::move(seeds)) {}
  std::vector<Config> Propose(size_t count) override {
    std::vector<Config> out;
    while (out.size() < count && !seeds_.empty()) {
      Config c = seeds_.front();
      seeds_.erase(seeds_.begin());
      if (!ledger_.Seen(c)) ledger_.Mark(c), out.push_back(c);
    }
    while (out.size() < count) {
      Config c = ledger_.RandomFresh();
      if (c.empty()) break;
      ledger_.Mark(c);
      out.push_back(std::move(c));
    }
    return out;
  }
  void Observe(const Config&, double) override {}

 private:
  ProposalLedger ledger_;
  std::vector<Config> seeds_;
};

}  // namespace

std::unique_ptr<SearchStrategy> MakeRandomSearch(const SearchSpace& space, uint64_t seed, std::vector<Config> seeds) {
  return std::make_unique<RandomSearch>(space, seed, std::move(seeds));
}

}  // namespace tilebank::engine
