#include "engine/tuning/search_strategy.h"

namespace tilebank::engine {
namespace {

// Every valid config, in mixed-radix order (first knob fastest).
class ExhaustiveSearch : public SearchStrategy {
 public:
  ExhaustiveSearch(const SearchSpace& space, std::vector<Config> seeds)
      : space_(space), seeds_(std::move(seeds)), next_(space.size(), 0) {}
  std::vector<Config> Propose(size_t count) override {
    std::vector<Config> out;
    while (out.size() < count && !seeds_.empty()) {
      out.push_back(seeds_.front());
      seen_.insert(seeds_.front());
      seeds_.erase(seeds_.begin());
    }
    while (out.size() < count && !done_) {
      Config c = next_;
      Advance();
      if (!seen_.count(c) && space_.IsValid(c)) out.push_back(c);
    }
    return out;
  }
  void Observe(const Config&, double) override {}

 private:
  void Advance() {
    for (size_t i = 0; i < next_.size(); ++i) {
      if (++next_[i] < static_cast<int>(space_.knobs[i].values.size())) return;
      next_[i] = 0;
    }
    done_ = true;
  }
  const SearchSpace& space_;
  std::vector<Config> seeds_;
  std::set<Config> seen_;
  Config next_;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<SearchStrategy> MakeExhaustiveSearch(const SearchSpace& space, uint64_t, std::vector<Config> seeds) {
  return std::make_unique<ExhaustiveSearch>(space, std::move(seeds));
}

}  // namespace tilebank::engine
