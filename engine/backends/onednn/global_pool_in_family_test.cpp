// The global pool of a layout family (global_pool_in_family.h) against plain loops on row-major
// data: max and average, channels-last and blocked by 8 and 16, channel counts that leave a partial
// vector and a padded last block (20, 70), and enough positions per image that channels-last splits
// them into chunks folded afterwards.
#include "engine/backends/onednn/global_pool_in_family.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "engine/backends/onednn/onednn_common.h"

namespace tilebank::engine {
namespace {

// narrow: the input comes in bf16 (Kernel::UseNarrowLayouts), the result within its rounding.
void CheckPool(const std::vector<int64_t>& shape, bool max, bool narrow = false) {
  const int64_t N = shape[0], C = shape[1], S = Tensor::NumElements(shape) / (N * C);
  std::vector<float> x(static_cast<size_t>(N * C * S));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * i) * 3 + (i % 11) * 0.25 - 2);
  LayoutFamilyOp op;
  op.kind = LayoutFamilyOp::Kind::kGlobalPool;
  op.op_type = max ? "GlobalMaxPool" : "GlobalAveragePool";
  op.inputs = {shape};
  op.output = {N, C, 1, 1};
  for (const char* family : {"nhwc", "nChw8c", "nChw16c"}) {
    CAPTURE(family);
    const auto md = DescOfHandover(LayoutInFamily(family, shape), shape);
    REQUIRE(md);
    auto kernel = GlobalPoolInFamily(op, *md);
    REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
    if (narrow) REQUIRE((*kernel)->UseNarrowLayouts({true}, false).ok());
    const dnnl::memory in = MovedInto(narrow ? WithBf16(*md) : *md, shape, x);
    std::vector<float> out(static_cast<size_t>(N * C), 1234.f);
    REQUIRE((*kernel)->RunDirect({static_cast<const float*>(in.get_data_handle())}, out.data()).ok());
    double worst = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c) {
        double want = max ? -INFINITY : 0;
        for (int64_t s = 0; s < S; ++s) {
          const double v = x[static_cast<size_t>((n * C + c) * S + s)];
          want = max ? std::max(want, v) : want + v / S;
        }
        worst = std::max(worst, std::fabs(want - out[static_cast<size_t>(n * C + c)]));
      }
    CHECK(worst < (narrow ? 3.0 / 256 : 1e-5));  // |x| < 5: bf16 rounds each by at most 5 * 2^-9
  }
}

TEST_CASE("a global pool in a layout family computes the row-major max and average") {
  for (bool max : {true, false}) {
    CAPTURE(max);
    CheckPool({2, 20, 3, 5}, max);
    CheckPool({1, 70, 1, 700}, max);   // channels-last: three chunks of rows
    CheckPool({2, 16, 30, 20}, max);
  }
}

TEST_CASE("a global pool in a layout family reads its input in bf16 where handed over so") {
  for (bool max : {true, false}) {
    CAPTURE(max);
    CheckPool({2, 20, 3, 5}, max, true);
    CheckPool({1, 70, 1, 700}, max, true);
  }
}

TEST_CASE("a global pool refuses a layout that is no family") {
  LayoutFamilyOp op;
  op.kind = LayoutFamilyOp::Kind::kGlobalPool;
  op.op_type = "GlobalMaxPool";
  op.inputs = {{1, 8, 4, 4}};
  op.output = {1, 8, 1, 1};
  CHECK_FALSE(GlobalPoolInFamily(op, RowMajorDesc(op.inputs[0])).ok());
}

}  // namespace
}  // namespace tilebank::engine
