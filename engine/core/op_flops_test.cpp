// OpFlops counts 2 per multiply-add of every convolution, whatever its rank: a 2-D one as the conv
// problem counts it, a grouped 3-D one, a transposed one by its input; an unknown dimension counts 0.
#include "engine/core/op_flops.h"

#include <doctest/doctest.h>

namespace tilebank::engine {
namespace {

OpSpec Conv(const std::string& op_type, std::vector<int64_t> x, std::vector<int64_t> w, std::vector<int64_t> y) {
  OpSpec op;
  op.op_type = op_type;
  op.inputs = {{std::move(x), "float32", ""}, {std::move(w), "float32", ""}};
  op.outputs = {{std::move(y), "float32", ""}};
  return op;
}

TEST_CASE("OpFlops: convolutions of every rank, grouped and transposed") {
  // 2-D: 2 * N * M * OH * OW * C * KH * KW.
  CHECK(OpFlops(Conv("Conv", {1, 3, 224, 224}, {64, 3, 7, 7}, {1, 64, 112, 112})) == 2.0 * 64 * 112 * 112 * 3 * 7 * 7);
  // 3-D, 4 groups of 8 input channels (W's second dimension), fused or not.
  const double grouped3d = 2.0 * 16 * 8 * 28 * 28 * 8 * 3 * 3 * 3;
  CHECK(OpFlops(Conv("Conv", {1, 32, 8, 28, 28}, {16, 8, 3, 3, 3}, {1, 16, 8, 28, 28})) == grouped3d);
  CHECK(OpFlops(Conv("FusedConv", {1, 32, 8, 28, 28}, {16, 8, 3, 3, 3}, {1, 16, 8, 28, 28})) == grouped3d);
  // 1-D.
  CHECK(OpFlops(Conv("Conv", {2, 8, 100}, {4, 8, 5}, {2, 4, 96})) == 2.0 * 2 * 4 * 96 * 8 * 5);
  // Transposed, W [C, M/group, k...]: each input element spreads over M/group x kernel outputs.
  CHECK(OpFlops(Conv("ConvTranspose", {1, 32, 4, 8, 8}, {32, 16, 2, 2, 2}, {1, 16, 8, 16, 16})) == 2.0 * 32 * 4 * 8 * 8 * 16 * 8);
  CHECK(OpFlops(Conv("Conv", {1, 3, -1, 224}, {64, 3, 7, 7}, {1, 64, -1, 112})) == 0.0);
}

}  // namespace
}  // namespace tilebank::engine
