// The post-ops of one impl.onednn cube kernel (engine/backends/onednn/onednn_post_ops.h) as oneDNN runs
// them, and their operands' memory. The first Add of an operand with the output's own shape (a
// residual) becomes oneDNN's sum post-op: the destination holds the residual when the primitive
// starts, and the executor may place the output over the residual so that nothing is copied.
// oneDNN's convolutions run a sum at full speed, where a full-tensor binary post-op takes them
// to a kernel many times slower.
#pragma once
#include <dnnl.hpp>

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/core/tensor.h"
#include "engine/backends/onednn/onednn_post_ops.h"

namespace tilebank::engine {

class PostOpChain {
 public:
  // `first_operand_input`: the kernel input of the first operand (after the anchor's inputs).
  PostOpChain(std::vector<ChainStep> ops, size_t first_operand_input, const std::vector<int64_t>& output_shape);

  bool empty() const { return ops_.empty(); }
  size_t first_operand_input() const { return first_operand_input_; }
  const std::vector<ChainStep>& ops() const { return ops_; }
  // The kernel input of the residual run as a sum post-op; -1 when there is none.
  int sum_input() const { return sum_slot_ < 0 ? -1 : static_cast<int>(first_operand_input_) + sum_slot_; }

  // Sets the post-ops on `attr`; `operand_dims` maps an operand's shape to oneDNN dims of the
  // destination's rank. Throws dnnl::error when oneDNN lacks one.
  void Attach(dnnl::primitive_attr& attr, const std::function<dnnl::memory::dims(const std::vector<int64_t>&)>& operand_dims);
  // Operands that are given (`in[i]` not null) are copied now; the rest come on every run (SetRuntime).
  void Bind(const std::vector<const Tensor*>& in);
  void SetRuntime(const std::vector<const float*>& in);
  // The binary operands' arguments of one call.
  void AddArgs(std::unordered_map<int, dnnl::memory>& args) const;
  // The residual of this run (sum post-op), or nullptr.
  const float* sum_source() const { return sum_source_; }
  // The sum post-op adds to what the destination holds: copies the residual (`bytes`, in the
  // destination's layout) into `dst` unless it is there already or there is none.
  void LoadResidual(void* dst, size_t bytes) const;
  // Throws when the primitive is a reference implementation: far too slow to fuse with.
  void RefuseReference(const std::string& impl) const;

 private:
  std::vector<ChainStep> ops_;
  size_t first_operand_input_ = 0;
  int sum_slot_ = -1;                  // operand slot of the sum post-op
  std::vector<int> slot_of_op_;        // per op: its operand slot, -1 for activations
  std::vector<dnnl::memory::desc> mds_;  // per slot (the sum's unused)
  std::vector<dnnl::memory> operands_;   // per slot (the sum's unused)
  std::vector<bool> runtime_;          // per slot: read from the caller on every run
  std::vector<float> sum_constant_;    // a constant residual's data
  const float* sum_source_ = nullptr;
};

}  // namespace tilebank::engine
