// The per-position loop of a layout family (per_position_in_family.h) against plain loops on
// row-major data: Add, Sub, Mul, Div of one value per position (one map for all images, one per
// image, one of lower rank), channels-last and blocked by 8 and 16 (20 channels: the last block
// padded, its padding written 0).
#include "engine/backends/onednn/per_position_in_family.h"

#include <doctest/doctest.h>

#include <cmath>

#include "engine/backends/onednn/family_test_support.h"

namespace tilebank::engine {
namespace {

const std::vector<int64_t> kShape = {2, 20, 3, 5};
constexpr int64_t N = 2, C = 20, S = 15;

TEST_CASE("binary operators with one value per position in a layout family compute the row-major result") {
  std::vector<float> x(static_cast<size_t>(N * C * S));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * i) * 3 + (i % 7) * 0.25);
  std::vector<float> map(static_cast<size_t>(N * S));
  for (size_t i = 0; i < map.size(); ++i) map[i] = 0.5f + 0.05f * static_cast<float>(i);  // never 0: Div
  for (const char* type : {"Add", "Sub", "Mul", "Div"}) {
    for (const std::vector<int64_t>& map_shape : std::vector<std::vector<int64_t>>{{1, 1, 3, 5}, {N, 1, 3, 5}, {1, 3, 5}}) {
      CAPTURE(type);
      CAPTURE(map_shape.size());
      CAPTURE(map_shape[0]);
      LayoutFamilyOp op;
      op.kind = LayoutFamilyOp::Kind::kPerPositionBinary;
      op.op_type = type;
      op.output = kShape;
      op.inputs = {kShape, map_shape};
      const bool per_image = map_shape.size() == 4 && map_shape[0] == N;
      const std::string t = type;
      for (const char* family : {"nhwc", "nChw8c", "nChw16c"}) {
        CAPTURE(family);
        const auto md = DescOfHandover(LayoutInFamily(family, kShape), kShape);
        REQUIRE(md);
        auto kernel = PerPositionInFamily(op, *md);
        REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
        const FamilyRun run = RunInFamily(**kernel, family, kShape, x, {map.data()});
        CHECK(PaddingIsZero(run, family, N, C, S));
        int wrong = 0;
        for (int64_t n = 0; n < N; ++n)
          for (int64_t c = 0; c < C; ++c)
            for (int64_t s = 0; s < S; ++s) {
              const size_t i = static_cast<size_t>((n * C + c) * S + s);
              const float g = map[static_cast<size_t>((per_image ? n * S : 0) + s)];
              const float want = t == "Add" ? x[i] + g : t == "Sub" ? x[i] - g : t == "Mul" ? x[i] * g : x[i] / g;
              wrong += run.output[i] != want;
            }
        CHECK(wrong == 0);
      }
    }
  }
}

TEST_CASE("a per-position loop refuses an operand that is not one value per position") {
  LayoutFamilyOp op;
  op.kind = LayoutFamilyOp::Kind::kPerPositionBinary;
  op.op_type = "Mul";
  op.output = kShape;
  const auto md = DescOfHandover(LayoutInFamily("nhwc", kShape), kShape);
  REQUIRE(md);
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{1, 2, 3, 5}, {1, 1, 3, 1}, {3, 1, 3, 5}}) {
    op.inputs = {kShape, shape};
    CHECK_FALSE(PerPositionInFamily(op, *md).ok());
  }
  op.inputs = {kShape, {1, 1, 3, 5}};
  op.op_type = "Pow";
  CHECK_FALSE(PerPositionInFamily(op, *md).ok());
}

}  // namespace
}  // namespace tilebank::engine
