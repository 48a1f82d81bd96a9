#include "engine/backends/simd/transpose_matrix.h"

#include <doctest/doctest.h>
#include <hwy/highway.h>
#include <hwy/targets.h>

#include <cstddef>
#include <string>
#include <vector>

namespace tilebank::engine {
namespace {

TEST_CASE("TransposeMatrix: every shape around the tile and block edges, strides wider than the matrix, on every target this build has") {
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();  // the scalar fallback among them
  REQUIRE(!targets.empty());
  for (int64_t target : targets) {
  hwy::SetSupportedTargetsForTest(target);
  const std::string target_name = hwy::TargetName(target);
  CAPTURE(target_name);
  for (int64_t rows : {1, 3, 4, 5, 15, 16, 17, 33, 48})
    for (int64_t cols : {1, 2, 4, 7, 16, 18, 40}) {
      const int64_t in_stride = rows + 3, out_stride = cols + 5;
      std::vector<float> in(static_cast<size_t>(cols * in_stride));
      for (size_t k = 0; k < in.size(); ++k) in[k] = static_cast<float>(k) + 0.5f;
      std::vector<float> out(static_cast<size_t>(rows * out_stride), -1.f);
      TransposeMatrix(in.data(), in_stride, rows, cols, out.data(), out_stride);
      CAPTURE(rows);
      CAPTURE(cols);
      bool all = true;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < out_stride; ++c) {
          const float expected = c < cols ? in[static_cast<size_t>(c * in_stride + r)] : -1.f;  // past cols: untouched
          all = all && out[static_cast<size_t>(r * out_stride + c)] == expected;
        }
      CHECK(all);
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace
}  // namespace tilebank::engine
