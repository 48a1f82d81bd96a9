#include "engine/builder/halide_program.h"

#include "engine/run/huge_pages.h"
#include "engine/templates/layout.h"

namespace tilebank::engine {

Halide::ImageParam HalideProgram::AddInput(int input, int dims, const std::string& name,
                                           std::function<Halide::Buffer<float>(const Tensor&)> convert_fn) {
  Halide::ImageParam p(Halide::Float(32), dims, name);
  params.push_back(p);
  param_input.push_back(input);
  convert.push_back(convert_fn ? std::move(convert_fn) : [](const Tensor& t) { return ToHalide(t); });
  return p;
}

Status HalideKernel::Prepare(const std::vector<const Tensor*>& inputs) {
  buffers_.clear();
  for (size_t i = 0; i < program_->params.size(); ++i) {
    int input = program_->param_input[i];
    if (input < 0 || input >= static_cast<int>(inputs.size()) || !inputs[input])
      return Status::InvalidInput("kernel expects input " + std::to_string(input));
    buffers_.push_back(program_->convert[i](*inputs[input]));
  }
  output_ = Halide::Buffer<float>(LargeBuffer(program_->output_extents));
  return Status::Ok();
}

Status HalideKernel::Run() {
  try {
    // The cached program is shared: bind this kernel's buffers before each run.
    for (size_t i = 0; i < buffers_.size(); ++i) {
      Halide::ImageParam p = program_->params[i];
      p.set(buffers_[i]);
    }
    Halide::Pipeline pipeline = program_->pipeline;  // a handle to the shared pipeline
    pipeline.realize(output_);
    // Unbind: a cached program must not keep this kernel's input buffers alive.
    for (size_t i = 0; i < buffers_.size(); ++i) {
      Halide::ImageParam p = program_->params[i];
      p.reset();
    }
  } catch (const Halide::Error& e) {
    return Status::InvalidInput(std::string("kernel failed at run time: ") + e.what());
  }
  return Status::Ok();
}

Status HalideKernel::Fetch(Tensor* output) {
  program_->fetch ? program_->fetch(output_, program_->output_shape, output) : FromHalide(output_, program_->output_shape, output);
  return Status::Ok();
}

}  // namespace tilebank::engine
