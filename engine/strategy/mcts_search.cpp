// Reinforcement-learning search for vector ops: Monte Carlo tree search over the knob decisions,
// one knob per tree level. Selection follows UCT (mean reward + c * sqrt(ln N / n)); an unexpanded
// value is tried first; the rest of the config is completed by a rollout policy that samples each
// knob's values by softmax over the mean reward that value earned so far (learned from every
// measurement). Reward = best cost so far / cost, in (0, 1]; failures and invalid configs earn 0,
// so the tree learns to avoid them. A config already measured is never proposed again.
#include <cmath>
#include <limits>
#include <map>

#include "engine/strategy/search_strategy.h"

namespace tilebank::engine {
namespace {

constexpr double kExploration = 0.7;
constexpr double kRolloutTemperature = 0.15;
constexpr int kAttemptsPerProposal = 64;

struct Node {
  double visits = 0;
  double reward = 0;
  std::map<int, std::unique_ptr<Node>> children;
};

class MctsSearch : public SearchStrategy {
 public:
  MctsSearch(const SearchSpace& space, uint64_t seed, std::vector<Config> seeds)
      : ledger_(space, seed), seeds_(std::move(seeds)) {
    for (const auto& k : space.knobs) value_stats_.emplace_back(k.values.size(), std::pair<double, double>{0, 0});
  }

  std::vector<Config> Propose(size_t count) override {
    std::vector<Config> out;
    while (out.size() < count) {
      Config c;
      while (c.empty() && !seeds_.empty()) {
        c = seeds_.front();
        seeds_.erase(seeds_.begin());
        if (ledger_.Seen(c)) c.clear();
      }
      for (int attempt = 0; c.empty() && attempt < kAttemptsPerProposal; ++attempt) {
        Config candidate = Descend();
        if (!ledger_.space().IsValid(candidate)) {
          Backpropagate(candidate, 0.0);  // learn the constraint
          continue;
        }
        if (ledger_.Seen(candidate)) {
          // Known outcome: reinforce with the remembered reward, no measurement.
          auto it = costs_.find(candidate);
          if (it != costs_.end()) Backpropagate(candidate, Reward(it->second));
          continue;
        }
        c = candidate;
      }
      if (c.empty()) c = ledger_.RandomFresh();
      if (c.empty()) break;
      ledger_.Mark(c);
      out.push_back(std::move(c));
    }
    return out;
  }

  void Observe(const Config& config, double cost_us) override {
    if (!std::isfinite(cost_us)) cost_us = std::numeric_limits<double>::infinity();
    costs_[config] = cost_us;
    if (cost_us < best_) best_ = cost_us;
    Backpropagate(config, Reward(cost_us));
  }

 private:
  double Reward(double cost) const { return std::isfinite(cost) && cost > 0 ? best_ / cost : 0.0; }

  // Selection + expansion down the tree, then the learned rollout for the remaining knobs.
  Config Descend() {
    const auto& knobs = ledger_.space().knobs;
    Config c(knobs.size(), 0);
    Node* node = &root_;
    size_t depth = 0;
    for (; depth < knobs.size(); ++depth) {
      int n = static_cast<int>(knobs[depth].values.size());
      std::vector<int> untried;
      for (int v = 0; v < n; ++v)
        if (!node->children.count(v)) untried.push_back(v);
      if (!untried.empty()) {
        int v = untried[std::uniform_int_distribution<size_t>(0, untried.size() - 1)(ledger_.rng())];
        c[depth] = v;
        node->children[v] = std::make_unique<Node>();
        ++depth;
        break;
      }
      double best_score = -1;
      int best_v = 0;
      for (auto& [v, child] : node->children) {
        double mean = child->visits > 0 ? child->reward / child->visits : 0;
        double score = mean + kExploration * std::sqrt(std::log(node->visits + 1) / (child->visits + 1e-9));
        if (score > best_score) best_score = score, best_v = v;
      }
      c[depth] = best_v;
      node = node->children[best_v].get();
    }
    for (; depth < knobs.size(); ++depth) c[depth] = RolloutChoice(depth);
    return c;
  }

  int RolloutChoice(size_t knob) {
    const auto& stats = value_stats_[knob];
    std::vector<double> weights(stats.size());
    for (size_t v = 0; v < stats.size(); ++v) {
      // Unmeasured values get an optimistic mean so every value is tried.
      double mean = stats[v].second > 0 ? stats[v].first / stats[v].second : 1.0;
      weights[v] = std::exp(mean / kRolloutTemperature);
    }
    return static_cast<int>(std::discrete_distribution<size_t>(weights.begin(), weights.end())(ledger_.rng()));
  }

  void Backpropagate(const Config& c, double reward) {
    Node* node = &root_;
    node->visits += 1, node->reward += reward;
    for (size_t d = 0; d < c.size(); ++d) {
      auto it = node->children.find(c[d]);
      if (it == node->children.end()) break;
      node = it->second.get();
      node->visits += 1, node->reward += reward;
    }
    for (size_t k = 0; k < c.size(); ++k) value_stats_[k][c[k]].first += reward, value_stats_[k][c[k]].second += 1;
  }

  ProposalLedger ledger_;
  std::vector<Config> seeds_;
  Node root_;
  std::vector<std::vector<std::pair<double, double>>> value_stats_;  // per knob value: reward sum, count
  std::map<Config, double> costs_;
  double best_ = std::numeric_limits<double>::infinity();
};

}  // namespace

std::unique_ptr<SearchStrategy> MakeMctsSearch(const SearchSpace& space, uint64_t seed, std::vector<Config> seeds) {
  return std::make_unique<MctsSearch>(space, seed, std::move(seeds));
}

}  // namespace tilebank::engine
