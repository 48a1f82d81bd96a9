// One output line of a MaxPool or AveragePool window over rows of channels (channels-last: a row is
// one position's channels; channel-blocked: one block's), with Highway for the running CPU's best
// SIMD: each output position's channels folded over the window's rows in whole vectors.
#pragma once
#include <cstdint>

namespace tilebank::engine {

struct PoolLine {
  const float* const* lines = nullptr;  // the input lines (in_w rows each) the window covers along D and H
  int64_t line_count = 0;
  int64_t in_w = 0, out_w = 0, kernel = 1, stride = 1, pad = 0;  // the window along W
  int64_t width = 0;          // floats per row (every lane computed, padding lanes included)
  int64_t pad_divisor = 0;    // AveragePool counting the padding: the window's size; 0: the inputs it holds
};

// out (out_w rows of `width` floats) = the max (`max`) or average of each output position's window.
// Every window holds at least one input.
void PoolLineRows(bool max, const PoolLine& line, float* out);

}  // namespace tilebank::engine
