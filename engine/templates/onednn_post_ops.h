// SGAT's fused implementation: impl.onednn's Conv, MatMul or Gemm kernel with elementwise
// operators applied to its output inside the primitive (oneDNN post-ops), so the intermediate
// tensors are never written. A post-op is an activation (Relu, LeakyRelu, Clip, Sigmoid, Tanh,
// HardSwish) or a binary op (Add, Mul, Sub, Div) with an operand that broadcasts to the output.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/builder/kernel.h"
#include "engine/ops/op_spec.h"
#include "repo/entry.h"

namespace tilebank::engine {

// The template of SGAT's graph entries: a subgraph (engine/model/partition.h) whose anchor runs in
// oneDNN with the first `fuse` steps of its chain as post-ops (a GELU's five nodes are one step).
// Its policy is that one knob.
inline constexpr const char* kFusedTemplateId = "sgat.fused";

// The "fuse" knob of an sgat.fused entry of this build's template version; nullopt for another
// template, a stale version or a policy without it.
std::optional<int> CurrentFuse(const Entry& entry);

// What is wrong with a graph entry's sgat.fused policy for its descriptor ("" when nothing).
std::string FusedPolicyProblem(const std::string& descriptor, const std::vector<Knob>& policy);

struct PostOp {
  std::string op_type;
  float alpha = 0, beta = 0;          // LeakyRelu's slope; Clip's bounds
  bool has_operand = false;           // binary ops
  std::vector<int64_t> operand_shape; // binary ops: the operand's shape
};

// Whether oneDNN runs `op_type` as a post-op.
bool IsOneDnnPostOp(const std::string& op_type);

// The kernel's inputs are the anchor's, then one per post-op with an operand, in order; its output
// is the last post-op's. kInvalidInput when oneDNN cannot fuse them (a broadcast it lacks, or only a
// reference implementation would run them).
Result<std::unique_ptr<Kernel>> OneDnnFusedKernel(const OpSpec& anchor, const std::vector<PostOp>& post_ops);

}  // namespace tilebank::engine
