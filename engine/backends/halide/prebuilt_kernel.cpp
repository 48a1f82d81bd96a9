#include "engine/backends/halide/prebuilt_kernel.h"

#include <HalideBuffer.h>

#include <sstream>

namespace tilebank::engine {

namespace {

// The description's text: "output <rank> <shape...> <rank> <extents...>", then one line per
// argument, "input <op input> <count> <extents...>" (count 0: the input's shape reversed).
std::string IntsText(const std::vector<int64_t>& v) {
  std::string t = std::to_string(v.size());
  for (int64_t x : v) t += " " + std::to_string(x);
  return t;
}

bool ReadInts(std::istream& in, std::vector<int64_t>* v) {
  size_t n = 0;
  if (!(in >> n) || n > 16) return false;
  v->resize(n);
  for (auto& x : *v)
    if (!(in >> x) || x < 0) return false;
  return true;
}

struct Argument {
  int input = 0;
  std::vector<int> extents;  // empty: the input's shape reversed
};

class PrebuiltKernel : public Kernel {
 public:
  PrebuiltKernel(ArgvEntry entry, std::vector<Argument> args, std::vector<int> output_extents, std::vector<int64_t> output_shape)
      : entry_(entry), args_(std::move(args)), output_extents_(std::move(output_extents)), output_shape_(std::move(output_shape)) {}

  Status Prepare(const std::vector<const Tensor*>& inputs) override {
    inputs_ = inputs;
    shapes_.clear();
    for (const Tensor* t : inputs) shapes_.push_back(t ? t->shape : std::vector<int64_t>{});
    output_ = Tensor(output_shape_);
    return Status::Ok();
  }
  Status Run() override {
    std::vector<const float*> data;
    for (const Tensor* t : inputs_) data.push_back(t ? t->data.data() : nullptr);
    return Call(data, output_.data.data());
  }
  Status Fetch(Tensor* output) override {
    *output = output_;
    return Status::Ok();
  }
  Result<bool> BindDirect(const std::vector<std::vector<int64_t>>& shapes, const std::vector<const Tensor*>& constants) override {
    shapes_ = shapes;
    constants_.assign(shapes.size(), {});
    for (size_t i = 0; i < constants.size() && i < shapes.size(); ++i)
      if (constants[i]) constants_[i] = constants[i]->data;  // the graph may release its copy
    return true;
  }
  Status RunDirect(const std::vector<const float*>& inputs, float* output) override {
    std::vector<const float*> data = inputs;
    for (size_t i = 0; i < constants_.size() && i < data.size(); ++i)
      if (!constants_[i].empty()) data[i] = constants_[i].data();
    return Call(data, output);
  }

 private:
  Status Call(const std::vector<const float*>& data, float* output) {
    std::vector<Halide::Runtime::Buffer<float>> buffers;
    buffers.reserve(args_.size() + 1);
    for (const Argument& a : args_) {
      if (a.input < 0 || a.input >= static_cast<int>(data.size()) || !data[a.input]) return Status::InvalidInput("kernel input " + std::to_string(a.input) + " is missing");
      buffers.emplace_back(const_cast<float*>(data[a.input]), ViewExtents(a.extents, shapes_[a.input]));
    }
    buffers.emplace_back(output, output_extents_);
    std::vector<void*> argv;
    for (auto& b : buffers) argv.push_back(b.raw_buffer());
    if (int error = entry_(argv.data()); error != 0) return Status::InvalidInput("kernel failed at run time (Halide error " + std::to_string(error) + ")");
    return Status::Ok();
  }

  ArgvEntry entry_;
  std::vector<Argument> args_;
  std::vector<int> output_extents_;
  std::vector<int64_t> output_shape_;
  std::vector<std::vector<int64_t>> shapes_;  // the op's input shapes
  std::vector<std::vector<float>> constants_;  // direct path: constant inputs, held here
  std::vector<const Tensor*> inputs_;          // Prepare's
  Tensor output_;
};

}  // namespace

std::string RunDescriptionOf(const HalideProgram& program) {
  if (program.fetch) return "";
  for (const auto& view : program.view_extents)
    if (!view) return "";
  std::string text = "output " + IntsText(program.output_shape) + " " +
                     IntsText(std::vector<int64_t>(program.output_extents.begin(), program.output_extents.end())) + "\n";
  for (size_t i = 0; i < program.params.size(); ++i)
    text += "input " + std::to_string(program.param_input[i]) + " " +
            IntsText(std::vector<int64_t>(program.view_extents[i]->begin(), program.view_extents[i]->end())) + "\n";
  return text;
}

Result<std::unique_ptr<Kernel>> PrebuiltHalideKernel(ArgvEntry entry, const std::string& description) {
  std::istringstream in(description);
  std::string word;
  std::vector<int64_t> shape, extents;
  if (!entry || !(in >> word) || word != "output" || !ReadInts(in, &shape) || !ReadInts(in, &extents) || extents.empty())
    return Status::InvalidInput("a malformed kernel run description");
  std::vector<Argument> args;
  while (in >> word) {
    Argument a;
    std::vector<int64_t> e;
    if (word != "input" || !(in >> a.input) || a.input < 0 || !ReadInts(in, &e)) return Status::InvalidInput("a malformed kernel run description");
    a.extents.assign(e.begin(), e.end());
    args.push_back(std::move(a));
  }
  return std::unique_ptr<Kernel>(new PrebuiltKernel(entry, std::move(args), std::vector<int>(extents.begin(), extents.end()), std::move(shape)));
}

}  // namespace tilebank::engine
