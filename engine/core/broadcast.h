// Shape arithmetic every layer agrees on: numpy broadcasting, row-major strides, ONNX axes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tilebank::engine {

// The broadcast of `shapes` into `out`; false when they do not broadcast. A dimension of 0
// broadcast with 1 stays 0.
bool BroadcastShapes(const std::vector<std::vector<int64_t>>& shapes, std::vector<int64_t>* out);

// Row-major strides of `shape`, in elements.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape);
// The strides, over the dimensions of `out_shape`, at which a row-major tensor of `in_shape` is read
// when broadcast to it (numpy rules, `in_shape` aligned to the right: 0 where it has size 1 or no
// dimension). `in_shape` has at most `out_shape`'s rank.
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& out_shape);
// Where row `row` of `out_shape` (its last dimension a row) starts in each operand read at
// `strides[i]` (BroadcastStrides): offsets[i], for i < strides.size().
void BroadcastRowOffsets(int64_t row, const std::vector<int64_t>& out_shape, const std::vector<std::vector<int64_t>>& strides, int64_t* offsets);
// An ONNX axis (negative: counted from the end) as a dimension index of a tensor of `rank`.
inline int64_t PositiveAxis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

}  // namespace tilebank::engine
