#include "engine/strategy/cost_model.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

namespace tilebank::engine {

namespace {
constexpr size_t kMinObservations = 8;  // finite ones, before the model ranks anything
constexpr double kRidge = 1.0;          // noise term: how far predictions may miss measurements
constexpr double kPair = 1.0;           // weight of knob pairs that match together (interactions)
constexpr double kNear = 0.7;           // similarity of numeric values one step apart (k steps: kNear^k)
}  // namespace

CostModel::CostModel(const SearchSpace& space) {
  for (const auto& knob : space.knobs) {
    bool numeric = true;
    for (const auto& v : knob.values) numeric = numeric && !std::holds_alternative<std::string>(v);
    ordered_.push_back(numeric);
  }
}

double CostModel::Kernel(const Config& a, const Config& b) const {
  double sum = 0, squares = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    double s = a[k] == b[k] ? 1.0 : ordered_[k] ? std::pow(kNear, std::abs(a[k] - b[k])) : 0.0;
    sum += s, squares += s * s;
  }
  return sum + kPair * 0.5 * (sum * sum - squares);
}

void CostModel::Fit(const std::vector<std::pair<Config, double>>& observations) {
  double worst = 0;
  size_t finite = 0;
  for (const auto& [c, cost] : observations)
    if (std::isfinite(cost)) worst = std::max(worst, cost), ++finite;
  ready_ = finite >= kMinObservations;
  if (!ready_) return;
  const Eigen::Index n = static_cast<Eigen::Index>(observations.size());
  Eigen::MatrixXd gram(n, n);
  Eigen::VectorXd y(n);
  seen_.clear();
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& [config, cost] = observations[i];
    seen_.push_back(config);
    y(i) = std::log(std::isfinite(cost) ? cost : 2 * worst);
    for (Eigen::Index j = 0; j <= i; ++j) gram(i, j) = gram(j, i) = Kernel(config, observations[j].first);
  }
  intercept_ = y.mean();
  y.array() -= intercept_;
  gram.diagonal().array() += kRidge;
  Eigen::VectorXd alpha = gram.ldlt().solve(y);
  alpha_.assign(alpha.data(), alpha.data() + alpha.size());
}

double CostModel::Predict(const Config& config) const {
  double v = intercept_;
  for (size_t i = 0; i < seen_.size(); ++i) v += alpha_[i] * Kernel(config, seen_[i]);
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
