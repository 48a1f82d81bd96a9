// Softmax of contiguous rows, hand-written with Highway (SIMD for the best instruction set of the
// running CPU, chosen at run time): the Impl alternative softmax.simd runs it per block of rows.
//
// Per row: a pass for the maximum, a pass that writes exp(x - max) and sums it, a pass that scales
// by 1 / sum. Unlike the Halide template, the exponentials go straight to their destination, so
// the memory traffic of writing the output overlaps the pass that computes (the Halide pipeline
// reads in one pass, computes in the next and writes in a third).
#pragma once
#include <cstdint>

namespace tilebank::engine {

enum class SoftmaxStore {
  kInPlace,    // exp(x - max) into the output row, scaled there
  kStreaming,  // exp(x - max) into a scratch row, written scaled with non-temporal stores
};

struct SoftmaxRowsOptions {
  SoftmaxStore store = SoftmaxStore::kInPlace;
  bool prefetch_next_row = false;  // prefetch the next input row while computing exponentials
  // LogSoftmax: y = x - max - log(sum of exp(x - max)); the exponentials are not stored (`store`
  // unused), and y may be x.
  bool log = false;
  // Where given (not with log; `store` unused): y = exp(x - max) left unscaled, and row r's 1 / sum of it
  // written here; a caller that takes a product of the rows next scales its fewer results instead.
  float* reciprocal_sums = nullptr;
};

// Softmax of `rows` rows of `len` floats: row r is x[r * x_stride ...] -> y[r * y_stride ...].
// The exponential is engine/backends/halide/exp_non_positive.h's. A row may be computed in place
// (y == x); distinct rows may not overlap. Thread-safe.
void SoftmaxRowsSimd(const float* x, float* y, int64_t rows, int64_t len, int64_t x_stride, int64_t y_stride,
                     const SoftmaxRowsOptions& options);

// Softmax (LogSoftmax with `log`) along an axis that is not the last: `x` and `y` hold `dim` rows of
// `inner` floats (one outer index's block), the softmax runs down each column, for columns
// [first, first + count), a vector of columns at a time. y may be x. Thread-safe.
void SoftmaxColumnsSimd(const float* x, float* y, int64_t dim, int64_t inner, int64_t first, int64_t count, bool log);

// log(sum of exp) down the same columns (ReduceLogSumExp over an axis not the last): out[c] for
// columns [first, first + count), as max + log(sum of exp(x - max)). Thread-safe.
void LogSumExpColumnsSimd(const float* x, int64_t dim, int64_t inner, int64_t first, int64_t count, float* out);
// The same along each of `rows` contiguous rows of `len` floats (the last axis): out[r].
void LogSumExpRowsSimd(const float* x, int64_t rows, int64_t len, float* out);

}  // namespace tilebank::engine
