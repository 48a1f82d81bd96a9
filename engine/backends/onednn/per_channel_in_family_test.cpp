// The per-channel loop of a layout family (per_channel_in_family.h) against plain loops on
// row-major data: Add, Sub, Mul, Div of a per-channel operand (one for all images, one per image,
// one of lower rank) and BatchNormalization's affine map with and without Relu, channels-last and
// blocked by 8 and 16 (20 channels: the last block padded, its padding written 0, Div's too).
#include "engine/backends/onednn/per_channel_in_family.h"

#include <doctest/doctest.h>

#include <cmath>
#include <utility>

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

// Runs `op` in each family through PerChannelInFamily and checks it against expected(n, c, x):
// within 1e-5, or bf16's rounding (2^-8 relative, each way) where the tensor comes or goes narrow.
template <class Expected>
void CheckInFamilies(const LayoutFamilyOp& op, const std::vector<const float*>& extra, Expected expected, bool narrow_in = false,
                     bool narrow_out = false) {
  const std::vector<float> x = Input();
  for (const char* family : {"nhwc", "nChw8c", "nChw16c"}) {
    CAPTURE(family);
    const auto md = DescOfHandover(LayoutInFamily(family, kShape), kShape);
    REQUIRE(md);
    auto kernel = PerChannelInFamily(op, *md);
    REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
    CHECK((*kernel)->NarrowLayout(0).narrow);
    CHECK((*kernel)->NarrowLayout(-1).narrow);
    const FamilyRun run = RunInFamily(**kernel, family, kShape, x, extra, narrow_in, narrow_out);
    CHECK(PaddingIsZero(run, family, N, C, S));
    double worst = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t s = 0; s < S; ++s) {
          const size_t i = static_cast<size_t>((n * C + c) * S + s);
          const double want = expected(n, c, double(x[i]));
          const double allowed = narrow_in || narrow_out ? 2.0 / 256 * (std::fabs(want) + 1) : 1e-5;
          worst = std::max(worst, std::fabs(double(run.output[i]) - want) / allowed);
        }
    CHECK(worst < 1);
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

TEST_CASE("a per-channel scale reads and writes its tensor in bf16 where handed over so, each side on its own") {
  std::vector<float> operand(static_cast<size_t>(C));
  for (size_t i = 0; i < operand.size(); ++i) operand[i] = 0.25f + 0.1f * static_cast<float>(i);
  LayoutFamilyOp op;
  op.kind = LayoutFamilyOp::Kind::kBinary;
  op.op_type = "Mul";
  op.output = kShape;
  op.inputs = {kShape, {1, C, 1, 1}};
  for (const auto& sides : std::vector<std::pair<bool, bool>>{{true, false}, {false, true}, {true, true}}) {
    const bool in = sides.first, out = sides.second;  // named, not bound: doctest's CAPTURE takes them in a lambda
    CAPTURE(in);
    CAPTURE(out);
    CheckInFamilies(op, {operand.data()}, [&](int64_t, int64_t c, double v) { return v * operand[static_cast<size_t>(c)]; }, in, out);
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
