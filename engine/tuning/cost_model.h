// A surrogate of the measured cost, so a strategy can rank many candidate configs and spend
// measurements on the promising ones (the model-guided screening of AutoTVM-style tuners).
// The model is kernel ridge regression of log(cost) on every measurement so far. Two configs are
// similar by how many knobs they share (numeric knobs: also by how close their values are) plus
// how many pairs of knobs they share, so it learns each knob's effect and pairwise interactions
// (a register tile's rows and columns together). Failed measurements count as twice the slowest
// working one. As a Gaussian process would, it also knows how unsure it is of each prediction
// (little where similar configs were measured), and ranks optimistically: a config far from
// everything measured gets the benefit of the doubt (the lower confidence bound of GP-UCB).
#pragma once
#include <utility>
#include <vector>

#include "engine/core/search_space.h"

namespace tilebank::engine {

class CostModel {
 public:
  // The model ranks nothing until `min_observations` configs have a finite cost.
  explicit CostModel(const SearchSpace& space, size_t min_observations = 8);
  // Refits from all (config, cost us) pairs; costs may be +infinity (a failure).
  void Fit(const std::vector<std::pair<Config, double>>& observations);
  // Whether enough configs with a finite cost have been seen for predictions to mean anything.
  bool Ready() const { return ready_; }
  // Predicted log(cost us) of a config (only meaningful when Ready()).
  double Predict(const Config& config) const;
  // Standard deviation of the prediction of a config, in log(cost us).
  double Uncertainty(const Config& config) const;
  // Indices of `candidates`, the lowest optimistic cost (prediction minus one standard deviation)
  // first; ties keep their order.
  std::vector<size_t> Rank(const std::vector<Config>& candidates) const;

 private:
  double Kernel(const Config& a, const Config& b) const;

  std::vector<bool> ordered_;  // knobs with numeric values
  std::vector<double> near_;   // kNear^d for each distance d between value indices
  std::vector<Config> seen_;
  std::vector<double> alpha_;
  std::vector<double> inverse_;  // (K + ridge I)^-1, n x n
  double variance_scale_ = 1;    // signal variance per unit of kernel, fitted to the data
  double intercept_ = 0;
  size_t min_observations_;
  bool ready_ = false;
};

}  // namespace tilebank::engine
