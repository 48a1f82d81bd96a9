// The arena's memory plan: which storage each run-time float32 value lives in and where. Values
// live from the step that writes them to the last step that reads them (a reshape shares its
// input's storage); storages are placed largest first, each at the lowest offset free over its
// lifetime; a step writes over an input that dies with it where its kernel may.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/ir/graph.h"
#include "engine/runtime/branch_plan.h"

namespace tilebank::engine::model {

// What the plan reads of one step.
struct StepValues {
  enum class Kind { kAlias, kRegistry, kOther } kind = Kind::kOther;
  std::vector<int> inputs;
  int output = -1;            // kOther, kAlias: its one output (an alias's is its input's memory)
  std::vector<int> outputs;   // kRegistry: each output (-1: unused); those in the arena get storage
  bool pointwise = false;     // may write over inputs[0]
  int in_place_input = -1;    // or over this input, which it reads whole before writing
};

// What the plan reads of each value.
struct ValueNeeds {
  std::function<bool(int)> in_arena;            // computed into the arena (float32, static shape, not a constant)
  std::function<int64_t(int)> floats;           // the floats it needs (its layout's padding included)
  std::function<std::string(int)> layout_key;   // its layout: a step writes in place only within one
};

struct MemoryPlan {
  std::vector<int> storage_of;   // value -> storage (-1: not in the arena)
  std::vector<int64_t> offset;   // storage -> offset in floats, 64-byte aligned
  int64_t floats = 0;            // the arena's size
};

// `side_by_side`: stretches of `steps` whose two lanes run at the same time (branch_plan.h). Every
// storage a stretch touches is kept for the whole stretch, so that no two it touches share memory,
// and no step there writes over a value from before it, which the other lane may still read.
MemoryPlan PlanMemory(const Graph& graph, const std::vector<StepValues>& steps, const ValueNeeds& needs,
                      const std::vector<BranchSection>& side_by_side = {});

}  // namespace tilebank::engine::model
