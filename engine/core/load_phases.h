// Where a model's load goes, in seconds per phase (`tilebank run --json` prints it as
// "load_phases_s"). Each phase is filled by the step that does it; one not done stays 0.
#pragma once
#include <chrono>

namespace tilebank::engine {

struct LoadPhases {
  double read = 0;         // the protobuf and its external data read (engine/ir/onnx_import.h)
  double onnx_passes = 0;  // libonnx's checker, opset conversion and shape inference, in the child process
  double graph = 0;        // the executor's graph built from the proto, folded and fused (graph passes)
  double bind = 0;         // each node's kernel chosen and built: bank lookups, oneDNN primitives, compiled kernels
  double finish = 0;       // the executor's constants, layouts, memory plan and arena
};

// Adds the seconds since construction (or since the last Lap) to `*into`; nothing when `into` is null.
class PhaseClock {
 public:
  void Lap(double* into) {
    const auto now = std::chrono::steady_clock::now();
    if (into) *into += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace tilebank::engine
