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

// Compute runs the arena function on float32 tensors of the shapes it was made for.
class ArenaOpKernel : public OpKernel {
 public:
  ArenaOpKernel(const KernelInfo& info, ArenaFunction arena) : info_(info), arena_(std::move(arena)) {}
  const ArenaFunction* Arena() const override { return &arena_; }
  Status Compute(const KernelInputs& inputs, std::vector<TypedTensor>* outputs) const override {
    const auto& out_shape = info_.OutputShape(0);
    if (!out_shape) return info_.Bad("the arena kernel has no static output shape");
    std::vector<const float*> pointers(inputs.size(), nullptr);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i]) continue;
      if (info_.InputShape(i) && inputs[i]->shape != *info_.InputShape(i))
        return info_.Bad("input " + std::to_string(i) + " is " + ShapeText(inputs[i]->shape) + "; the kernel was made for " + ShapeText(*info_.InputShape(i)));
      // An input of another type (Where's condition) is passed as its own elements.
      pointers[i] = reinterpret_cast<const float*>(inputs[i]->bytes.data());
    }
    TypedTensor y(DType::kFloat32, *out_shape);
    arena_.run(pointers, y.data<float>());
    if (arena_.verdict)
      if (Status s = arena_.verdict(); !s.ok()) return s;
    (*outputs)[0] = std::move(y);
    return Status::Ok();
  }

 private:
  KernelInfo info_;
  ArenaFunction arena_;
};

const std::optional<std::vector<int64_t>>& Unknown() {
  static const std::optional<std::vector<int64_t>> none;
  return none;
}

}  // namespace

const std::optional<std::vector<int64_t>>& KernelInfo::InputShape(size_t i) const { return i < input_shapes.size() ? input_shapes[i] : Unknown(); }
const std::optional<std::vector<int64_t>>& KernelInfo::OutputShape(size_t i) const { return i < output_shapes.size() ? output_shapes[i] : Unknown(); }

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

std::unique_ptr<OpKernel> ArenaKernel(const KernelInfo& info, ArenaFunction arena) { return std::make_unique<ArenaOpKernel>(info, std::move(arena)); }

std::function<Status()> RunFault::Verdict(std::shared_ptr<const RunFault> fault, const KernelInfo& info, std::string what, std::string where,
                                          int64_t extent) {
  return [fault, info, what, where, extent]() -> Status {
    const std::optional<int64_t> bad = fault->First();
    if (!bad) return Status::Ok();
    return info.Bad(what + " " + std::to_string(*bad) + " is outside " + where + " of " + std::to_string(extent));
  };
}

}  // namespace tilebank::engine::kernels
