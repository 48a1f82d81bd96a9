#include "engine/tuning/cost_model.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

namespace tilebank::engine {

namespace {
constexpr double kRidge = 1.0;          // noise term: how far predictions may miss measurements
constexpr double kPair = 1.0;           // weight of knob pairs that match together (interactions)
constexpr double kNear = 0.7;           // similarity of numeric values one step apart (k steps: kNear^k)
constexpr double kOptimism = 1.0;       // Rank's bonus, in standard deviations of the prediction
}  // namespace

CostModel::CostModel(const SearchSpace& space, size_t min_observations) : min_observations_(min_observations) {
  for (const auto& knob : space.knobs) {
    bool numeric = true;
    for (const auto& v : knob.values) numeric = numeric && !std::holds_alternative<std::string>(v);
    ordered_.push_back(numeric);
    while (near_.size() < knob.values.size()) near_.push_back(std::pow(kNear, static_cast<double>(near_.size())));
  }
}

double CostModel::Kernel(const Config& a, const Config& b) const {
  double sum = 0, squares = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    double s = a[k] == b[k] ? 1.0 : ordered_[k] ? near_[std::abs(a[k] - b[k])] : 0.0;
    sum += s, squares += s * s;
  }
  return sum + kPair * 0.5 * (sum * sum - squares);
}

void CostModel::Fit(const std::vector<std::pair<Config, double>>& observations) {
  double worst = 0;
  size_t finite = 0;
  for (const auto& [c, cost] : observations)
    if (std::isfinite(cost)) worst = std::max(worst, cost), ++finite;
  ready_ = finite >= min_observations_;
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
  const Eigen::MatrixXd inverse = gram.ldlt().solve(Eigen::MatrixXd::Identity(n, n));
  const Eigen::VectorXd alpha = inverse * y;
  alpha_.assign(alpha.data(), alpha.data() + alpha.size());
  inverse_.assign(inverse.data(), inverse.data() + inverse.size());
  variance_scale_ = y.dot(alpha) / static_cast<double>(n);
}

double CostModel::Predict(const Config& config) const {
  double v = intercept_;
  for (size_t i = 0; i < seen_.size(); ++i) v += alpha_[i] * Kernel(config, seen_[i]);
  return v;
}

double CostModel::Uncertainty(const Config& config) const {
  const size_t n = seen_.size();
  std::vector<double> k(n);
  for (size_t i = 0; i < n; ++i) k[i] = Kernel(config, seen_[i]);
  double explained = 0;  // k' (K + ridge)^-1 k; inverse_ is symmetric, stored column-major
  for (size_t j = 0; j < n; ++j) {
    double column = 0;
    for (size_t i = 0; i < n; ++i) column += inverse_[j * n + i] * k[i];
    explained += k[j] * column;
  }
  return std::sqrt(std::max(0.0, (Kernel(config, config) - explained) * variance_scale_));
}

std::vector<size_t> CostModel::Rank(const std::vector<Config>& candidates) const {
  std::vector<std::pair<double, size_t>> predicted;
  for (size_t i = 0; i < candidates.size(); ++i)
    predicted.push_back({Predict(candidates[i]) - kOptimism * Uncertainty(candidates[i]), i});
  std::sort(predicted.begin(), predicted.end());
  std::vector<size_t> order;
  for (const auto& [prediction, index] : predicted) order.push_back(index);
  return order;
}

}  // namespace tilebank::engine
