// A template's Halide pipeline for one op instance and policy, and the Kernel that runs it.
#pragma once
#include <Halide.h>

#include <functional>
#include <memory>
#include <vector>

#include "engine/builder/kernel.h"

namespace tilebank::engine {

struct HalideProgram {
  Halide::Pipeline pipeline;
  std::vector<Halide::ImageParam> params;  // the buffers the pipeline reads
  std::vector<int> param_input;            // for each param, the op input it is made from
  // For each param: op input -> the buffer in the program's working layout (default ToHalide).
  std::vector<std::function<Halide::Buffer<float>(const Tensor&)>> convert;
  std::vector<int> output_extents;         // Halide extents of the output
  // Output buffer -> the op's row-major output of shape `shape`.
  std::function<void(const Halide::Buffer<float>&, const std::vector<int64_t>& shape, Tensor*)> fetch;
  std::vector<int64_t> output_shape;

  // Adds a param read from op input `input` (converted by `convert`, or ToHalide when empty).
  Halide::ImageParam AddInput(int input, int dims, const std::string& name,
                              std::function<Halide::Buffer<float>(const Tensor&)> convert_fn = nullptr);
};

class HalideKernel : public Kernel {
 public:
  explicit HalideKernel(std::shared_ptr<const HalideProgram> program) : program_(std::move(program)) {}
  Status Prepare(const std::vector<const Tensor*>& inputs) override;
  Status Run() override;
  Status Fetch(Tensor* output) override;

 private:
  std::shared_ptr<const HalideProgram> program_;
  std::vector<Halide::Buffer<float>> buffers_;
  Halide::Buffer<float> output_;
};

}  // namespace tilebank::engine
