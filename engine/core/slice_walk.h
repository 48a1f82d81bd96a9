// What a Slice takes from a tensor, by ONNX's rules: per axis the first index, the step and how
// many. The Slice kernel and the shape inference of computed slices both read it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/core/broadcast.h"

namespace tilebank::engine {

struct SliceWalk {
  std::vector<int64_t> first, step, count;  // per axis of the input; an axis not sliced: 0, 1, its size
};

// The walk of a Slice over a tensor of `dims` (axes absent: 0, 1, ...; steps absent: 1). ONNX's
// clamping: a positive step takes [start, end) within [0, dim]; a negative one starts within
// [0, dim - 1] and ends within [-1, dim - 1]; counts without overflow for any step. kInvalidInput
// for lists of different lengths, an axis out of range or a zero step.
inline Result<SliceWalk> WalkOfSlice(const std::vector<int64_t>& dims, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                                     std::optional<std::vector<int64_t>> axes, std::optional<std::vector<int64_t>> steps) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (!axes) {
    axes.emplace(starts.size());
    for (size_t i = 0; i < axes->size(); ++i) (*axes)[i] = static_cast<int64_t>(i);
  }
  if (!steps) steps.emplace(starts.size(), 1);
  if (ends.size() != starts.size() || axes->size() != starts.size() || steps->size() != starts.size())
    return Status::InvalidInput("starts, ends, axes and steps differ in length");
  SliceWalk w{std::vector<int64_t>(dims.size(), 0), std::vector<int64_t>(dims.size(), 1), dims};
  for (size_t i = 0; i < axes->size(); ++i) {
    const int64_t axis = PositiveAxis((*axes)[i], dims.size()), s = (*steps)[i];
    if (axis < 0 || axis >= rank) return Status::InvalidInput("axis " + std::to_string((*axes)[i]) + " outside the input's rank");
    if (s == 0) return Status::InvalidInput("a step is 0");
    const size_t a = static_cast<size_t>(axis);
    const int64_t dim = dims[a];
    int64_t b = starts[i], e = ends[i];
    if (b < 0) b += dim;
    if (e < 0) e += dim;
    if (dim == 0) {
      b = 0;
      w.count[a] = 0;
    } else if (s > 0) {
      b = std::clamp<int64_t>(b, 0, dim), e = std::clamp<int64_t>(e, 0, dim);
      w.count[a] = e > b ? (e - b - 1) / s + 1 : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, dim - 1), e = std::clamp<int64_t>(e, -1, dim - 1);
      const int64_t magnitude = s == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -s;
      w.count[a] = b > e ? (b - e - 1) / magnitude + 1 : 0;
    }
    w.first[a] = b, w.step[a] = s;
  }
  return w;
}

}  // namespace tilebank::engine
