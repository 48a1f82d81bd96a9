// The per-channel loop of a layout family (per_channel_in_family.h) against plain loops on
// row-major data: Add, Sub, Mul, Div of a per-channel operand (one for all images, one per image,
// one of lower rank) and BatchNormalization's affine map with and without Relu, channels-last and
// blocked by 8 and 16 (20 channels: the last block padded, its padding written 0, Div's too).
#include "engine/backends/onednn/per_channel_in_family.h"

#include <doctest/doctest.h>

#include <cmath>

#include "engine/backends/onednn/family_test_support.h"

namespace tilebank::engine {
namespace {

const std::vector<int64_t> kShape = {2, 20, 3, 5};
constexpr int64_t N = 2, C = 20, S = 15;

std::vector<float> Input() {
  std::vector<float> x(static_cast<size_t>(N * C * S));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * i) * 3 + (i % 7) * 0.25);
  return x;
}

// Runs `op` in each family through PerChannelInFamily and checks it against expected(n, c, x).
template <class Expected>
void CheckInFamilies(const LayoutFamilyOp& op, const std::vector<const float*>& extra, Expected expected) {
  const std::vector<float> x = Input();
  for (const char* family : {"nhwc", "nChw8c", "nChw16c"}) {
    CAPTURE(family);
    const auto md = DescOfHandover(LayoutInFamily(family, kShape), kShape);
    REQUIRE(md);
    auto kernel = PerChannelInFamily(op, *md);
    REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
    const FamilyRun run = RunInFamily(**kernel, family, kShape, x, extra);
    CHECK(PaddingIsZero(run, family, N, C, S));
    double worst = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t s = 0; s < S; ++s) {
          const size_t i = static_cast<size_t>((n * C + c) * S + s);
          worst = std::max(worst, std::fabs(double(run.output[i]) - expected(n, c, double(x[i]))));
        }
    CHECK(worst < 1e-5);
  }
}

TEST_CASE("per-channel binary operators in a layout family compute the row-major result") {
  std::vector<float> operand(static_cast<size_t>(N * C));
  for (size_t i = 0; i < operand.size(); ++i) operand[i] = 0.5f + 0.05f * static_cast<float>(i);  // never 0: Div
  for (const char* type : {"Add", "Sub", "Mul", "Div"}) {
    for (const std::vector<int64_t>& operand_shape : std::vector<std::vector<int64_t>>{{1, C, 1, 1}, {N, C, 1, 1}, {C, 1, 1}}) {
      CAPTURE(type);
      CAPTURE(operand_shape.size());
      CAPTURE(operand_shape[0]);
      LayoutFamilyOp op;
      op.kind = LayoutFamilyOp::Kind::kBinary;
      op.op_type = type;
      op.output = kShape;
      op.inputs = {kShape, operand_shape};
      const bool per_image = operand_shape.size() == 4 && operand_shape[0] == N;
      const std::string t = type;
      CheckInFamilies(op, {operand.data()}, [&](int64_t n, int64_t c, double v) {
        const double a = operand[static_cast<size_t>((per_image ? n * C : 0) + c)];
        return t == "Add" ? v + a : t == "Sub" ? v - a : t == "Mul" ? v * a : v / a;
      });
    }
  }
}

TEST_CASE("BatchNormalization's per-channel affine map in a layout family, with and without Relu") {
  for (bool relu : {false, true}) {
    CAPTURE(relu);
    LayoutFamilyOp op;
    op.kind = LayoutFamilyOp::Kind::kAffine;
    op.output = kShape;
    op.inputs = {kShape};
    op.relu = relu;
    for (int64_t c = 0; c < C; ++c) op.scale.push_back(0.5f + 0.1f * c), op.shift.push_back(0.2f * c - 1);
    CheckInFamilies(op, {}, [&](int64_t, int64_t c, double v) {
      const double y = v * op.scale[c] + op.shift[c];
      return relu ? std::max(y, 0.0) : y;
    });
  }
}

TEST_CASE("a per-channel loop refuses an operand that is not per channel") {
  LayoutFamilyOp op;
  op.kind = LayoutFamilyOp::Kind::kBinary;
  op.op_type = "Mul";
  op.output = kShape;
  op.inputs = {kShape, {1, C, 3, 1}};
  const auto md = DescOfHandover(LayoutInFamily("nhwc", kShape), kShape);
  REQUIRE(md);
  CHECK_FALSE(PerChannelInFamily(op, *md).ok());
  op.inputs = {kShape, {1, C, 1, 1}};
  CHECK(PerChannelInFamily(op, *md).ok());
  CHECK_FALSE(PerChannelInFamily(op, RowMajorDesc(kShape)).ok());  // row-major is no family
}

}  // namespace
}  // namespace tilebank::engine
