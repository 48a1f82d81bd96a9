#include "engine/kernels/op_kernel.h"

namespace tilebank::engine::kernels {
namespace {

class Function : public OpKernel {
 public:
  explicit Function(ComputeFn compute) : compute_(std::move(compute)) {}
  Status Compute(const KernelInputs& inputs, std::vector<TypedTensor>* outputs) const override { return compute_(inputs, outputs); }

 private:
  ComputeFn compute_;
};

}  // namespace

int64_t Attrs::Int(const std::string& name, int64_t fallback) const {
  auto it = attrs_.find(name);
  return it != attrs_.end() && it->is_number() ? it->get<int64_t>() : fallback;
}

float Attrs::Float(const std::string& name, float fallback) const {
  auto it = attrs_.find(name);
  return it != attrs_.end() && it->is_number() ? it->get<float>() : fallback;
}

std::string Attrs::String(const std::string& name, const std::string& fallback) const {
  auto it = attrs_.find(name);
  return it != attrs_.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::vector<int64_t> Attrs::Ints(const std::string& name, std::vector<int64_t> fallback) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end() || !it->is_array()) return fallback;
  std::vector<int64_t> v;
  for (const auto& x : *it)
    if (x.is_number()) v.push_back(x.get<int64_t>());
  return v;
}

std::vector<float> Attrs::Floats(const std::string& name, std::vector<float> fallback) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end() || !it->is_array()) return fallback;
  std::vector<float> v;
  for (const auto& x : *it)
    if (x.is_number()) v.push_back(x.get<float>());
  return v;
}

Status KernelInfo::Bad(const std::string& what) const { return Status::InvalidInput("node '" + node_name + "' (" + op_type + "): " + what); }

std::unique_ptr<OpKernel> FunctionKernel(ComputeFn compute) { return std::make_unique<Function>(std::move(compute)); }

}  // namespace tilebank::engine::kernels
