// Tuning candidates measured where a model runs their operator: the steps running it swapped in
// place (model::Executor::SwapSteps), the whole model run on fixed inputs, its outputs checked
// against the model's own, and the swapped steps' time summed per run. The candidate runs with its
// real input layout, its weights prepacked as the model binds them, and its neighbours' cache
// effects; what it is compared with (the built-in choice) is measured the same way. A candidate
// whose kernels are the built-in choice's (Kernel::Identity) is not run (RunResult::same_as_builtin).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "engine/runtime/executor.h"
#include "engine/tuning/runner.h"

namespace tilebank::engine {

using MeasureInContext = std::function<RunResult(const OpTemplate& t, const Policy& policy)>;

// A bound model and the runs a measurement makes. The model's own outputs on `inputs` are the
// reference a candidate's must match.
class ModelContext {
 public:
  static Result<ModelContext> Create(model::Executor* executor, std::vector<TypedTensor> inputs, int warmup = 1, int repeats = 7);
  // The measurement of `op`'s candidates in this model; empty when no step runs it alone or its
  // built-in choice cannot be swapped in (the tuner then measures it alone).
  MeasureInContext For(const OpSpec& op);

 private:
  RunResult Measure(const std::string& op_key, const OpTemplate& t, const Policy& policy, bool builtin, const std::string& builtin_identity);

  model::Executor* executor_ = nullptr;
  std::vector<TypedTensor> inputs_, reference_;
  bool reference_lowered_ = false;  // the reference ran bf16 steps: every candidate is judged within bf16's tolerance
  int warmup_ = 1, repeats_ = 7;
};

}  // namespace tilebank::engine
