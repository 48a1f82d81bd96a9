// MatMul, Gemm and BatchMatMul as one problem: out[b] = alpha * op(A[b]) x op(B[b]) + beta * C,
// with A [M,K] (or [K,M] transposed), B [K,N] (or [N,K]), batches broadcast as ONNX allows
// when one side has none, and C (Gemm's optional bias) broadcast to [M,N].
#pragma once
#include <cstdint>

#include "engine/core/op_spec.h"

namespace tilebank::engine {

enum class BiasShape { kNone, kScalar, kRow /* [N] or [1,N] */, kColumn /* [M,1] */, kFull /* [M,N] */ };

struct GemmProblem {
  int64_t batch = 1, M = 0, N = 0, K = 0;
  bool trans_a = false, trans_b = false;
  bool a_batched = false, b_batched = false;  // whether each operand has the batch dimension
  float alpha = 1.f, beta = 1.f;
  BiasShape bias = BiasShape::kNone;
  double Flops() const { return 2.0 * batch * M * N * K; }
};

// Checks the shapes (inputs against each other and against the described output).
Result<GemmProblem> AnalyzeGemm(const OpSpec& op);

}  // namespace tilebank::engine
