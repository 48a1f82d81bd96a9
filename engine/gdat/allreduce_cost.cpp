#include "engine/gdat/allreduce_cost.h"

#include <algorithm>

namespace tilebank::engine {

AllReduceCost::AllReduceCost(const std::vector<AllReducePoint>& sweep) : points_(sweep) {
  for (size_t i = 1; i < points_.size(); ++i) points_[i].ms = std::max(points_[i].ms, points_[i - 1].ms);
  for (size_t i = 0; i + 1 < points_.size(); ++i) {
    const auto& a = points_[i];
    const auto& b = points_[i + 1];
    const double beta = (b.ms - a.ms) / static_cast<double>(b.bytes - a.bytes);
    pieces_.push_back({a.bytes, a.ms - beta * static_cast<double>(a.bytes), beta});
  }
}

double AllReduceCost::Ms(int64_t bytes) const {
  if (pieces_.empty()) return points_.empty() ? 0 : points_.front().ms;
  if (bytes <= points_.front().bytes) {
    const Piece& p = pieces_.front();  // towards 0 bytes the time falls to the first line's alpha at most
    return std::max(std::max(p.alpha_ms, 0.0), p.alpha_ms + p.beta_ms_per_byte * static_cast<double>(bytes));
  }
  // The last piece whose interval starts below `bytes` (the last one beyond the sweep).
  auto it = std::upper_bound(pieces_.begin(), pieces_.end(), bytes, [](int64_t n, const Piece& p) { return n <= p.from_bytes; });
  const Piece& p = *(it - 1);
  return p.alpha_ms + p.beta_ms_per_byte * static_cast<double>(bytes);
}

}  // namespace tilebank::engine
