#include "engine/tuning/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "engine/kernels/quantized_op_operands.h"
#include "engine/core/gemm_problem.h"
#include "engine/core/op_semantics.h"
#include "engine/core/precision_mode.h"
#include "engine/kernels/op_spec_reference.h"
#include "engine/core/sample_stats.h"

namespace tilebank::engine {

namespace {
using Clock = std::chrono::steady_clock;
double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }
RunResult RunFailure(const Status& s) { return {false, "run error: " + s.message(), {}, 0}; }
}  // namespace

int64_t ReductionLength(const OpSpec& op) {
  const std::string& t = op.op_type;
  if (t == "MatMul" || t == "BatchMatMul" || t == "Gemm") {
    auto p = AnalyzeGemm(op);
    return p.ok() ? p->K : 1;
  }
  if (t == "Conv" && op.inputs.size() > 1 && op.inputs[1].shape.size() == 4) {
    const auto& w = op.inputs[1].shape;
    return w[1] * w[2] * w[3];
  }
  if (t == "Softmax" || t == "LayerNormalization" || t.rfind("Reduce", 0) == 0 || t.find("Pool") != std::string::npos) {
    int64_t in = Tensor::NumElements(op.inputs[0].shape), out = Tensor::NumElements(op.outputs[0].shape);
    return t == "Softmax" || t == "LayerNormalization" ? op.inputs[0].shape.back() : std::max<int64_t>(1, in / out);
  }
  return 1;
}

Result<Runner> Runner::Create(const OpSpec& op, uint64_t seed) {
  Runner r;
  r.op_ = op;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    Tensor t(op.inputs[i].shape);
    for (auto& v : t.data) v = uniform(rng);
    // A divisor kept away from zero, so the check compares numbers, not infinities.
    if (op.op_type == "Div" && i == 1)
      for (auto& v : t.data) v = (v < 0 ? -1.f : 1.f) * (0.5f + std::fabs(v));
    r.inputs_.push_back(std::move(t));
  }
  // The int8 ops' reference is the registry's reference kernel on operands made from the floats.
  auto expected = IsQuantizedTunedOp(op.op_type) ? kernels::QuantizedReference(op, r.InputPointers()) : kernels::ReferenceOf(op, r.InputPointers());
  if (!expected.ok()) return expected.status();
  r.expected_ = std::move(expected.value());
  if (r.expected_.shape != op.outputs[0].shape) return Status::InvalidInput(op.name + ": reference output shape differs from output_desc");
  double sq = 0;
  for (float v : r.expected_.data) {
    sq += double(v) * v;
    r.largest_ = std::max(r.largest_, std::fabs(double(v)));
  }
  double rms = std::sqrt(sq / std::max<int64_t>(1, r.expected_.size()));
  // fp32 sums of n terms drift like sqrt(n) ulps of the terms; allow generous headroom over that.
  r.tolerance_scale_ = 3e-6 * std::max(1.0, rms) * std::sqrt(double(std::max<int64_t>(1, ReductionLength(op)))) * 10;
  // An 8-bit result holds quantization steps: a kernel may round one step apart from the reference
  // (oneDNN scales in float32, the reference in double).
  if (op.outputs[0].dtype == "uint8" || op.outputs[0].dtype == "int8") r.tolerance_scale_ = 1.0;
  return r;
}

std::vector<const Tensor*> Runner::InputPointers() const {
  std::vector<const Tensor*> p;
  for (const auto& t : inputs_) p.push_back(&t);
  return p;
}

RunResult Runner::Compare(const Tensor& got, bool lower_precision) const {
  RunResult r;
  if (got.data.size() != expected_.data.size()) {
    r.failure = "wrong result: " + std::to_string(got.data.size()) + " elements instead of " + std::to_string(expected_.data.size());
    return r;
  }
  const double atol = lower_precision ? std::max(tolerance_scale_, kBf16Tolerance * largest_) : tolerance_scale_;
  const double rtol = lower_precision ? kBf16Tolerance : 1e-4;
  for (size_t i = 0; i < got.data.size(); ++i) {
    double want = expected_.data[i], have = got.data[i];
    double err = std::fabs(want - have);
    if (!(err <= atol + rtol * std::fabs(want))) {
      r.failure = "wrong result: element " + std::to_string(i) + " is " + std::to_string(have) + ", expected " + std::to_string(want);
      r.max_error = std::isnan(err) ? INFINITY : err;
      return r;
    }
    r.max_error = std::max(r.max_error, err);
  }
  r.ok = true;
  return r;
}

RunResult Runner::Check(Kernel& kernel, bool lower_precision) const {
  Status s = kernel.Prepare(InputPointers());
  if (s.ok()) s = kernel.Run();
  Tensor got;
  if (s.ok()) s = kernel.Fetch(&got);
  return s.ok() ? Compare(got, lower_precision) : RunFailure(s);
}

RunResult Runner::Measure(Kernel& kernel, const RunOptions& options) const {
  // The first call is the correctness check (it also pages the code and buffers in).
  auto first = Clock::now();
  RunResult r = Check(kernel, options.lower_precision);
  double first_s = Seconds(first, Clock::now());
  if (!r.ok) return r;
  if (first_s > options.timeout_seconds) {
    r.ok = false;
    r.failure = "timeout: one call took " + std::to_string(first_s) + " s";
    return r;
  }
  for (int i = 0; i < options.warmup; ++i)
    if (Status s = kernel.Run(); !s.ok()) return RunFailure(s);
  // Calls per sample, from a timed probe call.
  auto probe = Clock::now();
  if (Status s = kernel.Run(); !s.ok()) return RunFailure(s);
  double call_us = std::max(0.01, Seconds(probe, Clock::now()) * 1e6);
  int per_sample = static_cast<int>(std::clamp(options.sample_min_us / call_us, 1.0, 10000.0));
  std::vector<double> samples;
  auto start = Clock::now();
  int max_samples = call_us > options.cutoff_us ? 1 : options.max_samples;
  while (static_cast<int>(samples.size()) < max_samples &&
         (static_cast<int>(samples.size()) < options.min_samples || Seconds(start, Clock::now()) < options.target_seconds)) {
    auto t0 = Clock::now();
    for (int i = 0; i < per_sample; ++i)
      if (Status s = kernel.Run(); !s.ok()) return RunFailure(s);
    samples.push_back(Seconds(t0, Clock::now()) * 1e6 / per_sample);
    if (max_samples == 1) break;
  }
  const SampleSummary summary = Summarize(samples);
  r.time.median_us = summary.median;
  r.time.spread_us = summary.spread;
  r.time.runs = static_cast<uint32_t>(samples.size() * per_sample);
  return r;
}

}  // namespace tilebank::engine
