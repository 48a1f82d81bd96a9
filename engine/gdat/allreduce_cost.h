// The time of one AllReduce of n bytes on a communicator, from a measured sweep: piecewise
// alpha-beta (t = alpha + beta * n on each interval between two measured sizes, a straight line
// through both), the first interval's line below the smallest size (never below its alpha) and the
// last interval's beyond the largest. Made non-decreasing in n: a sweep whose noise has a larger
// message finish sooner is read as the running maximum.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/gdat/gradient_profile.h"

namespace tilebank::engine {

class AllReduceCost {
 public:
  // `sweep` by increasing size, at least two points (ReadGradientProfile checks both).
  explicit AllReduceCost(const std::vector<AllReducePoint>& sweep);
  double Ms(int64_t bytes) const;
  // The fitted line of each interval, for reports: {from_bytes, alpha_ms, beta_ms_per_byte}.
  struct Piece {
    int64_t from_bytes;
    double alpha_ms, beta_ms_per_byte;
  };
  const std::vector<Piece>& pieces() const { return pieces_; }

 private:
  std::vector<AllReducePoint> points_;  // non-decreasing times
  std::vector<Piece> pieces_;
};

}  // namespace tilebank::engine
