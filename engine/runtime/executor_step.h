// What the executor's files (executor.cpp: loading and running; executor_bind.cpp: nodes to
// kernels; executor_layouts.cpp: the layout plan; executor_memory.cpp: the memory plan) share:
// one node's work at run time. Private to those files.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/chain_step.h"
#include "engine/kernels/op_kernel.h"
#include "engine/runtime/executor.h"
#include "engine/core/typed_tensor.h"

namespace tilebank::engine::model {

// One node's work at run time.
struct Executor::Step {
  // kRegistry: the kernel registry's kernel (engine/kernels/), on TypedTensors: any dtype, any
  // number of outputs; float32 values it reads or writes in the arena are copied in and out.
  // kArena: a registry kernel's arena form (kernels::ArenaFunction), on the arena's buffers.
  enum class Kind { kAlias, kArena, kDirect, kCopying, kRegistry } kind = Kind::kArena;
  std::vector<int> inputs;  // value per kernel input
  int output = -1;          // the first output (kRegistry: every output is in `outputs`)
  std::vector<int> outputs;                  // kRegistry: value per node output (-1: unused)
  std::unique_ptr<kernels::OpKernel> op;     // kRegistry, kArena
  bool holdings_counted = false;  // kRegistry: its first Compute ran and what it holds was counted (typed_readers_)
  const kernels::ArenaFunction* arena = nullptr;  // kArena: op's
  std::unique_ptr<Kernel> kernel;
  std::vector<Tensor> constants;  // kCopying: constant inputs as tensors (by input index; empty if not constant)
  int in_place_input = -1;        // kDirect: the input the output may be placed over (Kernel::InPlaceInput)
  // A subgraph fused on oneDNN: the chain its anchor's kernel runs as post-ops (SwapSteps builds
  // the anchor's candidates with it).
  std::optional<std::vector<ChainStep>> onednn_chain;
};


}  // namespace tilebank::engine::model
