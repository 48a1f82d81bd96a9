// The Adams2019 anchor: a plain MatMul algorithm scheduled by Halide's own autoscheduler
// (libautoschedule_adams2019.so from libhalide14), JIT-compiled for the same target as the
// tuned kernels and run through the same Kernel interface.
#pragma once
#include <memory>
#include <string>

#include "engine/core/kernel.h"
#include "engine/core/op_spec.h"

namespace tilebank::bench {

// `plugin` is the path of libautoschedule_adams2019.so. `schedule_seconds` receives the time the
// autoscheduler and the JIT compile took. Only 2-D MatMul without transposes.
Result<std::unique_ptr<engine::Kernel>> BuildAdams2019MatMul(const engine::OpSpec& op, const std::string& plugin,
                                                             double* schedule_seconds);

}  // namespace tilebank::bench
