#include "engine/backends/simd/softmax_rows_simd.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace tilebank::engine {
namespace {

// Softmax of each row in double precision.
std::vector<double> Expected(const std::vector<float>& x, int64_t rows, int64_t len, int64_t stride) {
  std::vector<double> y(rows * len);
  for (int64_t r = 0; r < rows; ++r) {
    double max = -INFINITY, sum = 0;
    for (int64_t i = 0; i < len; ++i) max = std::max(max, double(x[r * stride + i]));
    for (int64_t i = 0; i < len; ++i) sum += y[r * len + i] = std::exp(x[r * stride + i] - max);
    for (int64_t i = 0; i < len; ++i) y[r * len + i] /= sum;
  }
  return y;
}

TEST_CASE("SIMD softmax rows: every store and prefetch option, row lengths with and without a vector tail, padded strides") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-30.f, 30.f);
  for (int64_t len : {1, 3, 16, 17, 33, 64, 100, 2048}) {
    for (int64_t pad : {0, 5}) {
      const int64_t rows = 7, stride = len + pad;
      std::vector<float> x(rows * stride);
      for (auto& v : x) v = value(rng);
      x[2] = -std::numeric_limits<float>::infinity();  // exp(-inf) is 0
      const auto expected = Expected(x, rows, len, stride);
      for (auto store : {SoftmaxStore::kInPlace, SoftmaxStore::kStreaming}) {
        for (bool prefetch : {false, true}) {
          CAPTURE(len);
          CAPTURE(pad);
          CAPTURE(prefetch);
          const bool streaming = store == SoftmaxStore::kStreaming;
          CAPTURE(streaming);
          std::vector<float> y(rows * stride + 1, -1.f);
          // Offset by one float when padded, so some rows are not vector-aligned.
          float* out = y.data() + (pad ? 1 : 0);
          SoftmaxRowsSimd(x.data(), out, rows, len, stride, stride, {store, prefetch});
          double worst = 0;
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t i = 0; i < len; ++i) worst = std::max(worst, std::fabs(out[r * stride + i] - expected[r * len + i]));
          CHECK(worst < 1e-6);
          // The padding between rows is not written.
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t i = len; i < stride; ++i) CHECK(out[r * stride + i] == -1.f);
        }
      }
    }
  }
}

TEST_CASE("SIMD log-softmax rows: x - max - log(sum), in place or not, ragged rows") {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> value(-30.f, 30.f);
  for (int64_t len : {1, 5, 16, 31, 500}) {
    for (bool in_place : {false, true}) {
      CAPTURE(len);
      CAPTURE(in_place);
      const int64_t rows = 5;
      std::vector<float> x(rows * len), y(rows * len, -1.f);
      for (auto& v : x) v = value(rng);
      const auto softmax = Expected(x, rows, len, len);
      float* out = in_place ? x.data() : y.data();
      const std::vector<float> before = x;
      SoftmaxRowsOptions options;
      options.log = true;
      SoftmaxRowsSimd(x.data(), out, rows, len, len, len, options);
      double worst = 0;
      for (int64_t i = 0; i < rows * len; ++i) worst = std::max(worst, std::fabs(out[i] - std::log(softmax[i])) / std::max(1.0, std::fabs(std::log(softmax[i]))));
      CHECK(worst < 2e-6);
      if (!in_place) CHECK(x == before);
    }
  }
}


// Rows 1-3 hold a NaN, a +inf and only -infs: NaN throughout, as the reference's (exp of NaN or of
// inf - inf); rows 0 and 4 are ordinary and must stay finite.
std::vector<float> RowsWithNonFinite(int64_t len) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x(5 * len);
  for (int64_t i = 0; i < 5 * len; ++i) x[i] = float(i % 7) - 3.f;
  x[1 * len + len - 1] = std::nanf("");
  x[2 * len + len / 2] = inf;
  for (int64_t i = 0; i < len; ++i) x[3 * len + i] = -inf;
  return x;
}

void CheckNonFiniteRows(const std::vector<float>& y, int64_t len, int64_t rows_apart, int64_t apart) {
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t i = 0; i < len; ++i) {
      CAPTURE(r);
      CAPTURE(i);
      const float v = y[r * rows_apart + i * apart];
      if (r >= 1 && r <= 3)
        CHECK(std::isnan(v));
      else
        CHECK(std::isfinite(v));
    }
}

TEST_CASE("SIMD softmax and log-softmax: a slice with a NaN, a +inf or only -infs is NaN throughout, rows and columns") {
  for (int64_t len : {1, 7, 16, 40}) {
    CAPTURE(len);
    const auto x = RowsWithNonFinite(len);
    for (int mode = 0; mode < 4; ++mode) {  // in place, streamed, log, reciprocal sums left to the caller
      CAPTURE(mode);
      SoftmaxRowsOptions options;
      options.store = mode == 1 ? SoftmaxStore::kStreaming : SoftmaxStore::kInPlace;
      options.log = mode == 2;
      std::vector<float> y(x.size()), reciprocal(5);
      if (mode == 3) options.reciprocal_sums = reciprocal.data();
      SoftmaxRowsSimd(x.data(), y.data(), 5, len, len, len, options);
      if (mode == 3)
        for (int64_t r = 0; r < 5; ++r)
          for (int64_t i = 0; i < len; ++i) y[r * len + i] *= reciprocal[r];
      CheckNonFiniteRows(y, len, len, 1);
    }
    // The same slices as columns: x's transpose, `len` rows of 5 columns.
    std::vector<float> columns(x.size());
    for (int64_t r = 0; r < 5; ++r)
      for (int64_t i = 0; i < len; ++i) columns[i * 5 + r] = x[r * len + i];
    for (bool log : {false, true}) {
      CAPTURE(log);
      std::vector<float> y(x.size());
      SoftmaxColumnsSimd(columns.data(), y.data(), len, 5, 0, 5, log);
      CheckNonFiniteRows(y, len, 1, 5);
    }
  }
}

}  // namespace
}  // namespace tilebank::engine
