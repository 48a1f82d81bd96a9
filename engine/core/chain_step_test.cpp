#include "engine/core/chain_step.h"

#include <doctest/doctest.h>

namespace tilebank::engine {
namespace {

using Dims = std::array<int64_t, 3>;

TEST_CASE("a chain step's operand over a matrix product's output: {batch, rows, cols}, batch all 1 or all matching") {
  const std::vector<int64_t> out = {2, 3, 4, 5};
  CHECK(OperandMatrixDims({5}, out) == Dims{1, 1, 5});              // a bias row
  CHECK(OperandMatrixDims({4, 1}, out) == Dims{1, 4, 1});           // a column
  CHECK(OperandMatrixDims({1, 1, 4, 5}, out) == Dims{1, 4, 5});     // broadcast over the batch
  CHECK(OperandMatrixDims({2, 3, 4, 5}, out) == Dims{6, 4, 5});     // the batch collapsed
  CHECK_FALSE(OperandMatrixDims({2, 1, 4, 5}, out).has_value());    // over part of the batch
  CHECK_FALSE(OperandMatrixDims({1, 2, 3, 4, 5}, out).has_value()); // more axes than the output
  CHECK_FALSE(OperandMatrixDims({5}, {5}).has_value());             // not a matrix output
}

}  // namespace
}  // namespace tilebank::engine
