#include "engine/backends/halide/halide_program.h"

#include "engine/backends/halide/huge_pages.h"
#include "engine/backends/halide/layout.h"

namespace tilebank::engine {

Halide::ImageParam HalideProgram::AddInput(int input, int dims, const std::string& name,
                                           std::function<Halide::Buffer<float>(const Tensor&)> convert_fn) {
  Halide::ImageParam p(Halide::Float(32), dims, name);
  params.push_back(p);
  param_input.push_back(input);
  view_extents.push_back(convert_fn ? std::nullopt : std::optional<std::vector<int>>(std::vector<int>{}));
  convert.push_back(convert_fn ? std::move(convert_fn) : [](const Tensor& t) { return ToHalide(t); });
  return p;
}

Halide::ImageParam HalideProgram::AddInputView(int input, int dims, const std::string& name, std::vector<int> extents) {
  Halide::ImageParam p = AddInput(input, dims, name, AsExtents(extents));
  view_extents.back() = std::move(extents);
  return p;
}

std::vector<int> ViewExtents(const std::vector<int>& declared, const std::vector<int64_t>& shape) {
  std::vector<int> extents = declared;
  if (extents.empty())
    for (auto it = shape.rbegin(); it != shape.rend(); ++it) extents.push_back(static_cast<int>(*it));
  if (extents.empty()) extents.push_back(1);  // a scalar
  return extents;
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

Status HalideKernel::Realize(const std::vector<Halide::Buffer<float>>& buffers, Halide::Buffer<float>& output) {
  if (program_->entry) {
    std::vector<Halide::Buffer<float>> handles = buffers;
    std::vector<void*> args;
    for (auto& b : handles) args.push_back(b.raw_buffer());
    args.push_back(output.raw_buffer());
    if (int error = program_->entry(args.data()); error != 0)
      return Status::InvalidInput("kernel failed at run time (Halide error " + std::to_string(error) + ")");
    return Status::Ok();
  }
  try {
    // The cached program is shared: bind this kernel's buffers before each run.
    for (size_t i = 0; i < buffers.size(); ++i) {
      Halide::ImageParam p = program_->params[i];
      p.set(buffers[i]);
    }
    Halide::Pipeline pipeline = program_->pipeline;  // a handle to the shared pipeline
    pipeline.realize(output);
    // Unbind: a cached program must not keep this kernel's input buffers alive.
    for (size_t i = 0; i < buffers.size(); ++i) {
      Halide::ImageParam p = program_->params[i];
      p.reset();
    }
  } catch (const Halide::Error& e) {
    return Status::InvalidInput(std::string("kernel failed at run time: ") + e.what());
  }
  return Status::Ok();
}

Status HalideKernel::Run() { return Realize(buffers_, output_); }

Result<bool> HalideKernel::BindDirect(const std::vector<std::vector<int64_t>>& shapes, const std::vector<const Tensor*>& constants) {
  shapes_ = shapes;
  buffers_.assign(program_->params.size(), Halide::Buffer<float>());
  for (size_t i = 0; i < program_->params.size(); ++i) {
    const int input = program_->param_input[i];
    if (input < 0 || input >= static_cast<int>(shapes.size())) return Status::InvalidInput("kernel expects input " + std::to_string(input));
    if (input < static_cast<int>(constants.size()) && constants[input]) buffers_[i] = program_->convert[i](*constants[input]);
  }
  converts_ = static_cast<bool>(program_->fetch);
  for (size_t i = 0; i < program_->params.size(); ++i) converts_ |= !buffers_[i].defined() && !program_->view_extents[i];
  if (!program_->fetch) output_ = Halide::Buffer<float>();  // realized straight into the caller's memory
  else output_ = Halide::Buffer<float>(LargeBuffer(program_->output_extents));
  return true;
}

Status HalideKernel::RunDirect(const std::vector<const float*>& inputs, float* output) {
  std::vector<Halide::Buffer<float>> buffers = buffers_;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].defined()) continue;  // a constant, converted at bind time
    const int input = program_->param_input[i];
    const float* data = inputs[input];
    if (!data) return Status::InvalidInput("kernel input " + std::to_string(input) + " is missing");
    if (const auto& view = program_->view_extents[i]) {
      buffers[i] = Halide::Buffer<float>(const_cast<float*>(data), ViewExtents(*view, shapes_[input]));
    } else {  // a layout conversion (Format policies), made on every run
      Tensor t(shapes_[input]);
      std::copy(data, data + t.size(), t.data.begin());
      buffers[i] = program_->convert[i](t);
    }
  }
  if (!program_->fetch) {
    Halide::Buffer<float> out(output, program_->output_extents);
    return Realize(buffers, out);
  }
  TB_RETURN_IF_ERROR(Realize(buffers, output_));
  Tensor t;
  program_->fetch(output_, program_->output_shape, &t);
  std::copy(t.data.begin(), t.data.end(), output);
  return Status::Ok();
}

Status HalideKernel::Fetch(Tensor* output) {
  program_->fetch ? program_->fetch(output_, program_->output_shape, output) : FromHalide(output_, program_->output_shape, output);
  return Status::Ok();
}

}  // namespace tilebank::engine
