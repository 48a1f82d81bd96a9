// The runner: random inputs, a reference check of every candidate, and timing the way the
// anchors are timed (warm-up, repeated samples, median and interquartile spread).
#pragma once
#include <limits>
#include <string>
#include <vector>

#include "engine/core/kernel.h"
#include "engine/core/op_spec.h"
#include "repo/entry.h"

namespace tilebank::engine {

struct RunOptions {
  int warmup = 2;
  int min_samples = 7;
  int max_samples = 60;
  double target_seconds = 0.15;   // keep sampling until this much time or max_samples
  double sample_min_us = 200;     // a sample times enough calls to last at least this long
  double timeout_seconds = 10;    // one call slower than this fails the candidate
  // A candidate whose first call is slower than this (us) is a sure loser: one sample is enough.
  double cutoff_us = std::numeric_limits<double>::infinity();
  // The candidate computes in bfloat16 (engine/core/precision_mode.h): its result is checked within
  // bf16's tolerance of the float32 reference, not float32's.
  bool lower_precision = false;
};

struct RunResult {
  bool ok = false;
  std::string failure;  // "wrong result: ...", "run error: ...", "timeout: ..."
  Measurement time;     // per call, microseconds
  double max_error = 0;
  // Not measured: the candidate builds the very kernels of the built-in choice (Kernel::Identity),
  // so it is no alternative to it and costs no trial.
  bool same_as_builtin = false;
};

class Runner {
 public:
  // Makes inputs from `seed` and computes the reference output once.
  static Result<Runner> Create(const OpSpec& op, uint64_t seed = 1);

  RunResult Measure(Kernel& kernel, const RunOptions& options = {}) const;
  // Only the correctness check (`lower_precision`: RunOptions::lower_precision).
  RunResult Check(Kernel& kernel, bool lower_precision = false) const;

  const std::vector<Tensor>& inputs() const { return inputs_; }
  const Tensor& expected() const { return expected_; }

 private:
  Runner() = default;
  std::vector<const Tensor*> InputPointers() const;
  RunResult Compare(const Tensor& got, bool lower_precision) const;

  OpSpec op_;
  std::vector<Tensor> inputs_;
  Tensor expected_;
  double tolerance_scale_ = 0;  // absolute error allowed: rms(expected) * f(reduction length)
  double largest_ = 0;          // the largest |expected| value
};

// Elements summed into one output value (K for GEMM, C/g*KH*KW for Conv, the axis for Softmax, ...).
int64_t ReductionLength(const OpSpec& op);

}  // namespace tilebank::engine
