// One step of an elementwise chain computed inside its anchor's kernel (a fused subgraph's
// epilogue, engine/passes/partition.h): an activation (Relu, LeakyRelu, Clip, Sigmoid, Tanh,
// HardSwish, Swish: x Sigmoid(x), Gelu, GeluTanh: GELU's tanh approximation) or a binary op (Add, Mul, Sub, Div) whose other operand broadcasts to the
// anchor's output. oneDNN's post-ops (engine/backends/onednn/onednn_post_ops.h) and the Halide GEMM's epilogue
// (engine/backends/halide/halide_fused_gemm.h) both take it as it is.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tilebank::engine {

struct ChainStep {
  std::string op_type;
  float alpha = 0, beta = 0;          // LeakyRelu's slope; Clip's bounds
  bool has_operand = false;           // binary ops
  std::vector<int64_t> operand_shape; // binary ops: the operand's shape
};

// A binary step's operand over a matrix product's output `out` (rank >= 2) as {batch, rows, cols}:
// its missing leading axes count as 1, and the axes before the last two must all be 1 (broadcast
// over the batch) or all match `out`'s (collapsed into the batch). nullopt otherwise: an operand of
// higher rank than `out`, or one broadcast over part of the batch.
std::optional<std::array<int64_t, 3>> OperandMatrixDims(const std::vector<int64_t>& operand, const std::vector<int64_t>& out);

}  // namespace tilebank::engine
