// A template's Halide pipeline for one op instance and policy, and the Kernel that runs it.
#pragma once
#include <Halide.h>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "engine/core/kernel.h"
#include "engine/backends/halide/kernel_disk_cache.h"

namespace tilebank::engine {

struct HalideProgram {
  Halide::Pipeline pipeline;
  std::vector<Halide::ImageParam> params;  // the buffers the pipeline reads
  std::vector<int> param_input;            // for each param, the op input it is made from
  // For each param: op input -> the buffer in the program's working layout (default ToHalide).
  std::vector<std::function<Halide::Buffer<float>(const Tensor&)>> convert;
  // For each param read straight from the input's row-major memory (no conversion): its Halide
  // extents; empty {} for the reversed input shape (ToHalide); nullopt when `convert` must run.
  std::vector<std::optional<std::vector<int>>> view_extents;
  std::vector<int> output_extents;         // Halide extents of the output
  // Output buffer -> the op's row-major output of shape `shape`.
  std::function<void(const Halide::Buffer<float>&, const std::vector<int64_t>& shape, Tensor*)> fetch;
  std::vector<int64_t> output_shape;
  // Set when the pipeline was compiled ahead of time (KernelDiskCache): runs are calls to it with
  // the params' buffers, then the output; else the JIT-compiled pipeline runs.
  ArgvEntry entry = nullptr;

  // Adds a param read from op input `input` (converted by `convert`, or ToHalide when empty).
  Halide::ImageParam AddInput(int input, int dims, const std::string& name,
                              std::function<Halide::Buffer<float>(const Tensor&)> convert_fn = nullptr);
  // Adds a param that reads op input `input`'s row-major elements as a dense buffer of `extents`.
  Halide::ImageParam AddInputView(int input, int dims, const std::string& name, std::vector<int> extents);
};

// The Halide extents a view param reads an input of `shape` with: `declared`, or, when that is empty,
// the shape reversed ([1] for a scalar).
std::vector<int> ViewExtents(const std::vector<int>& declared, const std::vector<int64_t>& shape);

class HalideKernel : public Kernel {
 public:
  explicit HalideKernel(std::shared_ptr<const HalideProgram> program) : program_(std::move(program)) {}
  Status Prepare(const std::vector<const Tensor*>& inputs) override;
  Status Run() override;
  Status Fetch(Tensor* output) override;
  Result<bool> BindDirect(const std::vector<std::vector<int64_t>>& shapes, const std::vector<const Tensor*>& constants) override;
  Status RunDirect(const std::vector<const float*>& inputs, float* output) override;
  bool ConvertsActivations() const override { return converts_; }

 private:
  Status Realize(const std::vector<Halide::Buffer<float>>& buffers, Halide::Buffer<float>& output);

  std::vector<std::vector<int64_t>> shapes_;  // direct path: the op's input shapes
  bool converts_ = false;                     // direct path: a run-time input or the output changes layout per run
  std::shared_ptr<const HalideProgram> program_;
  std::vector<Halide::Buffer<float>> buffers_;
  Halide::Buffer<float> output_;
};

}  // namespace tilebank::engine
