// One output line of a MaxPool or AveragePool window over rows of channels (channels-last: a row is
// one position's channels; channel-blocked: one block's), with Highway for the running CPU's best
// SIMD: each output position's channels folded over the window's rows in whole vectors.
#pragma once
#include <algorithm>
#include <cstdint>

namespace tilebank::engine {

// One spatial axis of a pooling window: output o reads inputs [o * stride - pad, + kernel) within
// [0, in).
struct PoolAxis {
  int64_t in = 1, out = 1, kernel = 1, stride = 1, pad = 0;
  int64_t First(int64_t o) const { return std::max<int64_t>(o * stride - pad, 0); }
  int64_t End(int64_t o) const { return std::min(o * stride - pad + kernel, in); }
};

struct PoolLine {
  const float* const* lines = nullptr;  // the input lines (w.in rows each) the window covers along D and H
  int64_t line_count = 0;
  PoolAxis w;                           // the window along W
  int64_t width = 0;          // floats per row (every lane computed, padding lanes included)
  int64_t pad_divisor = 0;    // AveragePool counting the padding: the window's size; 0: the inputs it holds
};

// out (w.out rows of `width` floats) = the max (`max`) or average of each output position's window.
// Every window holds at least one input.
void PoolLineRows(bool max, const PoolLine& line, float* out);

}  // namespace tilebank::engine
