// The executor's independent branches side by side (engine/runtime/branch_plan.h): which steps run
// as two lanes, and the run order that puts each lane's steps together.
#include <exception>
#include <string>

#include "engine/core/op_flops.h"
#include "engine/core/parallel_for.h"
#include "engine/runtime/executor.h"
#include "engine/runtime/executor_step.h"

namespace tilebank::engine::model {
namespace {

// A step's estimated time in FLOPs: its multiply-adds, and each output element as the FLOPs a
// thread does in the time it takes to move one (a pool's or a copy's cost is its memory).
constexpr double kFlopsPerElementMoved = 100;

}  // namespace

bool Executor::RunsOnAnyThread(const Step& s) const {
  switch (s.kind) {
    case Step::Kind::kAlias: return true;
    case Step::Kind::kArena: return s.arena && s.arena->runs_on_any_thread;
    case Step::Kind::kDirect: return s.kernel && s.kernel->RunsOnAnyThread();
    case Step::Kind::kCopying:
    case Step::Kind::kRegistry: return false;
  }
  return false;
}

Status Executor::PlanSideBySide(BranchMode mode) {
  if (mode == BranchMode::kOff || steps_.size() < 3 || ParallelThreads() < 2) return Status::Ok();
  std::vector<BranchStepFacts> facts(steps_.size());
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = *steps_[i];
    BranchStepFacts& f = facts[i];
    for (int v : s.inputs)
      if (v >= 0 && !graph_.IsConstant(v)) f.reads.push_back(v);
    if (s.kind == Step::Kind::kRegistry) f.writes = s.outputs;
    else f.writes = {s.output};
    f.movable = RunsOnAnyThread(s);
    const int node = bindings_[i].node;
    if (node >= 0)
      if (auto op = NodeOpSpec(graph_, graph_.nodes[node]); op.ok()) f.cost = OpFlops(op->op);
    if (s.output >= 0 && graph_.values[s.output].shape_known && s.kind != Step::Kind::kAlias)
      f.cost += kFlopsPerElementMoved * static_cast<double>(Tensor::NumElements(graph_.values[s.output].shape));
  }
  BranchPlan plan = PlanBranches(facts, kMinBranchBalance);
  if (plan.sections.empty()) return Status::Ok();
  std::vector<std::unique_ptr<Step>> steps(steps_.size());
  std::vector<NodeBinding> bindings(steps_.size());
  std::vector<bool> pointwise(steps_.size());
  for (size_t i = 0; i < plan.order.size(); ++i) {
    steps[i] = std::move(steps_[plan.order[i]]);
    bindings[i] = std::move(bindings_[plan.order[i]]);
    pointwise[i] = pointwise_[plan.order[i]];
  }
  steps_ = std::move(steps);
  bindings_ = std::move(bindings);
  pointwise_ = std::move(pointwise);
  for (const BranchSection& b : plan.sections)
    for (size_t i = b.begin; i < b.end; ++i) bindings_[i].lane = i < b.split ? 0 : 1;
  side_by_side_ = std::move(plan.sections);
  return Status::Ok();
}

Status Executor::RunSideBySide(const BranchSection& b, std::vector<double>* node_us) {
  Status lane_status[2];
  auto lane = [&](int which) {
    std::vector<const float*> in;
    const size_t from = which == 0 ? b.begin : b.split, to = which == 0 ? b.split : b.end;
    try {
      for (size_t i = from; i < to && lane_status[which].ok(); ++i) lane_status[which] = RunOneStep(i, &in, node_us);
    } catch (const std::exception& e) {  // nothing may leave an OpenMP thread
      lane_status[which] = Status::InvalidInput(std::string("a step beside another failed: ") + e.what());
    }
  };
  if (!RunOnTwoThreads(lane)) {
    lane(0);
    lane(1);
  }
  TB_RETURN_IF_ERROR(lane_status[0]);
  return lane_status[1];
}

}  // namespace tilebank::engine::model
