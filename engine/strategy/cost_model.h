// A surrogate of the measured cost, so a strategy can rank many candidate configs and spend
// measurements on the promising ones (the model-guided screening of AutoTVM-style tuners).
// The model is kernel ridge regression of log(cost) on every measurement so far. Two configs are
// similar by how many knobs they share (numeric knobs: also by how close their values are) plus
// how many pairs of knobs they share, so it learns each knob's effect and pairwise interactions
// (a register tile's rows and columns together). Failed measurements count as twice the slowest
// working one.
#pragma once
#include <utility>
#include <vector>

#include "engine/search_space.h"

namespace tilebank::engine {

class CostModel {
 public:
  explicit CostModel(const SearchSpace& space);
  // Refits from all (config, cost us) pairs; costs may be +infinity (a failure).
  void Fit(const std::vector<std::pair<Config, double>>& observations);
  // Whether enough configs with a finite cost have been seen for predictions to mean anything.
  bool Ready() const { return ready_; }
  // Predicted log(cost us) of a config (only meaningful when Ready()).
  double Predict(const Config& config) const;
  // Indices of `candidates`, the lowest predicted cost first (ties keep their order).
  std::vector<size_t> Rank(const std::vector<Config>& candidates) const;

 private:
  double Kernel(const Config& a, const Config& b) const;

  std::vector<bool> ordered_;  // knobs with numeric values
  std::vector<Config> seen_;
  std::vector<double> alpha_;
  double intercept_ = 0;
  bool ready_ = false;
};

}  // namespace tilebank::engine
