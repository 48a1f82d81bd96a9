#include "engine/core/chain_step.h"

namespace tilebank::engine {

std::optional<std::array<int64_t, 3>> OperandMatrixDims(const std::vector<int64_t>& operand, const std::vector<int64_t>& out) {
  if (operand.size() > out.size() || out.size() < 2) return std::nullopt;
  std::vector<int64_t> d(out.size() - operand.size(), 1);
  d.insert(d.end(), operand.begin(), operand.end());
  int64_t batch = 1;
  bool all_one = true, all_match = true;
  for (size_t i = 0; i + 2 < d.size(); ++i) {
    batch *= d[i];
    all_one &= d[i] == 1;
    all_match &= d[i] == out[i];
  }
  if (!all_one && !all_match) return std::nullopt;
  return std::array<int64_t, 3>{batch, d[d.size() - 2], d.back()};
}

}  // namespace tilebank::engine
