// One step of an elementwise chain computed inside its anchor's kernel (a fused subgraph's
// epilogue, engine/model/partition.h): an activation (Relu, LeakyRelu, Clip, Sigmoid, Tanh,
// HardSwish, Gelu) or a binary op (Add, Mul, Sub, Div) whose other operand broadcasts to the
// anchor's output. oneDNN's post-ops (engine/impl/onednn_post_ops.h) and the Halide GEMM's epilogue
// (engine/fusion/halide_fused_gemm.h) both take it as it is.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tilebank::engine {

struct ChainStep {
  std::string op_type;
  float alpha = 0, beta = 0;          // LeakyRelu's slope; Clip's bounds
  bool has_operand = false;           // binary ops
  std::vector<int64_t> operand_shape; // binary ops: the operand's shape
};

}  // namespace tilebank::engine
