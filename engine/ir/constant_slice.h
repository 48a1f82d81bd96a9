// A Slice (opset 10+) whose starts, axes and steps are constants and whose every step is 1, read
// as where it starts along each axis of its input: what the passes and the layout plan take as a
// view or a part of a tensor rather than a strided copy.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/ir/graph.h"

namespace tilebank::engine::model {

// Per axis of an input of `in_shape`, where Slice node `n` starts (0 on axes it does not name),
// clamped to [0, dim] as ONNX clamps it; nullopt when `n` is not a Slice, its starts are not a
// constant, its axes or steps are given but not constants, an axis is out of range, or a
// step is not 1. Its extents are its output's shape.
std::optional<std::vector<int64_t>> ConstantSliceStarts(const Graph& g, const Node& n, const std::vector<int64_t>& in_shape);

}  // namespace tilebank::engine::model
