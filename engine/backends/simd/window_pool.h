// One output line of a MaxPool or AveragePool window, with Highway for the running CPU's best SIMD:
// over rows of channels (channels-last: a row is one position's channels; channel-blocked: one
// block's), each output position's channels folded over the window's rows in whole vectors; or
// channels first (row-major [N, C, ...]), one channel's positions along W in whole vectors.
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

// Channels first: a line is one channel's w.in inputs along W at one D and H.
struct PoolPlane {
  const float* const* lines = nullptr;  // the input lines the window covers along D and H
  int64_t line_count = 0;
  PoolAxis w;
  int64_t pad_divisor = 0;    // as PoolLine's
  float* scratch = nullptr;   // w.in floats, where line_count > 1: the lines folded into one
};

// out (w.out floats) = the max (`max`) or average of each output position's window. Every window
// holds at least one input.
void PoolPlaneLine(bool max, const PoolPlane& line, float* out);

// Channels first, a whole [H, W] plane at once, for windows of stride 1 whose output has the
// input's size on both axes (PoolFormer's 3x3 averages, YOLO's 5x5 SPPF maxima): the rows folded
// into a plane of column sums, then along the plane read as one line, the columns a window crosses
// a row's end of recomputed. Lines of 7 to 56 floats each cost a call and a scalar edge on the
// line-by-line path; here the plane is one vector loop per pass.
struct SamePlane {
  PoolAxis h, w;                      // stride 1, out == in
  const float* reciprocal = nullptr;  // AveragePool: each output's 1 / divisor (h.out * w.out); MaxPool: null
  float* scratch = nullptr;           // h.in * w.in floats
};
// Whether a window over these axes takes the whole-plane path; at most kSamePlaneKernel taps an axis.
constexpr int64_t kSamePlaneKernel = 16;
bool TakesSamePlane(const PoolAxis& h, const PoolAxis& w);
// out (the plane's h.out * w.out floats) = the max (`max`) or average of each position's window of in.
void PoolSamePlane(bool max, const SamePlane& plane, const float* in, float* out);

}  // namespace tilebank::engine
