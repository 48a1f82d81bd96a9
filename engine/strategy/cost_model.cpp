#include "engine/strategy/cost_model.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

namespace tilebank::engine {

namespace {
constexpr size_t kMinObservations = 8;  // finite ones, before the model ranks anything
constexpr double kRidge = 1.0;          // shrinks the weights of rarely seen values towards 0
}  // namespace

CostModel::CostModel(const SearchSpace& space) {
  for (const auto& knob : space.knobs) {
    offset_.push_back(features_);
    features_ += static_cast<int>(knob.values.size());
  }
}

void CostModel::Fit(const std::vector<std::pair<Config, double>>& observations) {
  double worst = 0;
  size_t finite = 0;
  for (const auto& [c, cost] : observations)
    if (std::isfinite(cost)) worst = std::max(worst, cost), ++finite;
  ready_ = finite >= kMinObservations;
  if (!ready_) return;
  const Eigen::Index n = static_cast<Eigen::Index>(observations.size());
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(n, features_);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& [config, cost] = observations[i];
    for (size_t k = 0; k < config.size(); ++k) x(i, offset_[k] + config[k]) = 1;
    y(i) = std::log(std::isfinite(cost) ? cost : 2 * worst);
  }
  intercept_ = y.mean();
  y.array() -= intercept_;
  Eigen::MatrixXd gram = x.transpose() * x;
  gram.diagonal().array() += kRidge;
  Eigen::VectorXd w = gram.ldlt().solve(x.transpose() * y);
  weights_.assign(w.data(), w.data() + w.size());
}

double CostModel::Predict(const Config& config) const {
  double v = intercept_;
  for (size_t k = 0; k < config.size(); ++k) v += weights_[offset_[k] + config[k]];
  return v;
}

std::vector<size_t> CostModel::Rank(const std::vector<Config>& candidates) const {
  std::vector<std::pair<double, size_t>> predicted;
  for (size_t i = 0; i < candidates.size(); ++i) predicted.push_back({Predict(candidates[i]), i});
  std::sort(predicted.begin(), predicted.end());
  std::vector<size_t> order;
  for (const auto& [prediction, index] : predicted) order.push_back(index);
  return order;
}

}  // namespace tilebank::engine
