// The group norm of a layout family (group_norm_in_family.h) against plain loops on row-major data:
// channels-last and blocked by 8 and 16 (20 channels: the last block padded, its padding written 0),
// with and without SiLU, InstanceNormalization's one group per channel included.
#include "engine/backends/onednn/group_norm_in_family.h"

#include <doctest/doctest.h>

#include <cmath>

#include "engine/backends/onednn/family_test_support.h"

namespace tilebank::engine {
namespace {


TEST_CASE("group norm in a layout family: channels-last and channel-blocked (padded) compute the row-major result") {
  const std::vector<int64_t> shape = {2, 20, 3, 5};
  const int64_t N = 2, C = 20, S = 15;
  std::vector<float> x(static_cast<size_t>(N * C * S));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * i) * 3 + (i % 7) * 0.25f;
  for (int64_t groups : {4, 20}) {
    for (bool swish : {false, true}) {
      LayoutFamilyOp op;
      op.kind = LayoutFamilyOp::Kind::kGroupNorm;
      op.output = shape;
      op.inputs = {shape};
      op.groups = groups;
      op.swish = swish;
      op.epsilon = 1e-5f;
      for (int64_t c = 0; c < C; ++c) op.scale.push_back(0.5f + 0.1f * c), op.shift.push_back(0.2f * c - 1);
      // Plain loops, row-major.
      std::vector<float> expected(x.size());
      const int64_t per_group = C / groups;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t g = 0; g < groups; ++g) {
          double mean = 0, var = 0;
          const float* xg = x.data() + (n * C + g * per_group) * S;
          for (int64_t k = 0; k < per_group * S; ++k) mean += xg[k];
          mean /= per_group * S;
          for (int64_t k = 0; k < per_group * S; ++k) var += (xg[k] - mean) * (xg[k] - mean);
          var /= per_group * S;
          for (int64_t k = 0; k < per_group * S; ++k) {
            const int64_t c = g * per_group + k / S;
            double v = (xg[k] - mean) / std::sqrt(var + 1e-5) * op.scale[c] + op.shift[c];
            if (swish) v = v / (1 + std::exp(-v));
            expected[(n * C + g * per_group) * S + k] = static_cast<float>(v);
          }
        }
      for (const char* family : {"nhwc", "nChw8c", "nChw16c"}) {
        CAPTURE(family);
        CAPTURE(groups);
        CAPTURE(swish);
        auto kernel = LayoutFamilyKernel(op, family);
        REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
        const FamilyRun run = RunInFamily(**kernel, family, shape, x);
        CHECK(PaddingIsZero(run, family, N, C, S));  // 20 channels blocked by 8 or 16: 24 or 32
        const std::vector<float>& y = run.output;
        double worst = 0;
        for (size_t i = 0; i < y.size(); ++i) worst = std::max(worst, std::fabs(double(y[i]) - expected[i]));
        CHECK(worst < 2e-5);
      }
    }
  }
}

}  // namespace
}  // namespace tilebank::engine
