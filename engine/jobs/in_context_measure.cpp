#include "engine/jobs/in_context_measure.h"

#include "engine/catalog/builtin_choice.h"
#include "engine/core/precision_mode.h"
#include "engine/core/sample_stats.h"
#include "engine/runtime/model_session.h"
#include "repo/key.h"

namespace tilebank::engine {

Result<ModelContext> ModelContext::Create(model::Executor* executor, std::vector<TypedTensor> inputs, int warmup, int repeats) {
  ModelContext c;
  c.executor_ = executor;
  c.inputs_ = std::move(inputs);
  c.warmup_ = warmup;
  c.repeats_ = repeats;
  TB_RETURN_IF_ERROR(executor->Run(PointersTo(c.inputs_), &c.reference_));
  c.reference_lowered_ = executor->LowerPrecisionSteps() > 0;
  return c;
}

MeasureInContext ModelContext::For(const OpSpec& op) {
  const std::string key = FormatKey(EntryKind::kOp, op.canonical.key);
  auto mode = DefaultPoliciesFromEnvironment();
  const BuiltinChoice builtin = BuiltinChoiceFor(op, mode.ok() ? *mode : DefaultPolicies::kBuiltin);
  if (!builtin.tmpl || !executor_->SwapSteps(key, *builtin.tmpl, builtin.policy).ok()) return nullptr;
  const std::string builtin_identity = executor_->SwappedIdentity();
  executor_->RestoreSteps();
  return [this, key, builtin, builtin_identity](const OpTemplate& t, const Policy& policy) {
    return Measure(key, t, policy, &t == builtin.tmpl && policy == builtin.policy, builtin_identity);
  };
}

RunResult ModelContext::Measure(const std::string& op_key, const OpTemplate& t, const Policy& policy, bool builtin, const std::string& builtin_identity) {
  RunResult r;
  auto swapped = executor_->SwapSteps(op_key, t, policy);
  if (!swapped.ok()) {
    r.failure = "in context: " + swapped.status().message();
    return r;
  }
  if (!builtin && !builtin_identity.empty() && executor_->SwappedIdentity() == builtin_identity) {
    executor_->RestoreSteps();
    r.failure = "the same kernel as the built-in choice";
    r.same_as_builtin = true;
    return r;
  }
  const auto inputs = PointersTo(inputs_);
  std::vector<TypedTensor> outputs;
  std::vector<double> node_us, samples;
  Status status;
  for (int i = 0; i < warmup_ && status.ok(); ++i) status = executor_->Run(inputs, &outputs);
  if (status.ok()) {
    const model::Comparison check = model::CompareTypedTensors(outputs, reference_, reference_lowered_ || LowersPrecision(policy));
    if (!check.ok) status = Status::InvalidInput("wrong result: the model's output changed (" + check.worst + ")");
    r.max_error = check.max_abs_error;
  }
  for (int i = 0; i < repeats_ && status.ok(); ++i) {
    status = executor_->Run(inputs, &outputs, &node_us);
    double us = 0;
    for (size_t step : *swapped) us += step < node_us.size() ? node_us[step] : 0.0;
    samples.push_back(us);
  }
  executor_->RestoreSteps();
  if (!status.ok()) {
    r.failure = (status.message().rfind("wrong result", 0) == 0 ? "" : "run error: ") + status.message();
    return r;
  }
  const SampleSummary s = Summarize(samples);
  r.ok = true;
  r.time = {s.median, s.spread, static_cast<uint32_t>(samples.size())};
  return r;
}

}  // namespace tilebank::engine
