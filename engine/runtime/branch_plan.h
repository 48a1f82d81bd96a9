// Independent branches side by side. Where a model forks into chains that read nothing of each
// other (an Inception block's four branches, the two towers of a two-stream net), each chain can run
// on a thread of its own, its steps one thread each, instead of every step in turn on both threads:
// the small steps, which two threads share poorly, stop paying a fork and a join each. This file
// finds those places in a run order; the executor runs them (Executor::RunSteps).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace tilebank::engine::model {

// What the plan reads of one step.
struct BranchStepFacts {
  std::vector<int> reads;   // the run-time values it reads (constants left out)
  std::vector<int> writes;  // the values it writes
  double cost = 0;          // its estimated time, in any unit all steps share
  bool movable = true;      // may run on another thread than the one that bound it (Kernel::RunsOnAnyThread)
};

// A stretch of the reordered run: steps [begin, split) run in order on one thread while steps
// [split, end) run in order on the other; the next step starts when both lanes are done.
struct BranchSection {
  size_t begin = 0, split = 0, end = 0;
  double balance = 0;  // the lighter lane's estimated cost over the heavier's
};

struct BranchPlan {
  std::vector<size_t> order;            // new position -> the step's index in the order given
  std::vector<BranchSection> sections;  // in the new order, ascending and disjoint
};

// The sections over `steps`, given in an order that runs (every value written before it is read).
// A stretch between two places where at most one step's values are alive (a fork and its join)
// becomes a section when its steps, the join left after it, fall into two or more chains that read
// nothing of each other, every step movable, and the chains split into two lanes whose lighter
// holds at least `min_balance` of the heavier's cost. Each lane keeps its steps' order; steps
// outside sections keep their places.
BranchPlan PlanBranches(const std::vector<BranchStepFacts>& steps, double min_balance);

// TILEBANK_BRANCHES: "on" runs the sections found side by side, "off" (the default) runs every step
// in turn; anything else is an error naming the variable.
enum class BranchMode { kOff, kOn };
bool ParseBranchMode(const std::string& text, BranchMode* mode);

}  // namespace tilebank::engine::model
