#include "engine/kernels/subgraph.h"

#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine::kernels {

Scope ImplicitScope(const KernelInfo& info, const KernelInputs& inputs) {
  Scope scope;
  const size_t first = inputs.size() - std::min(inputs.size(), info.implicit_inputs.size());
  for (size_t k = 0; k < info.implicit_inputs.size() && first + k < inputs.size(); ++k)
    if (inputs[first + k]) scope[info.implicit_inputs[k]] = inputs[first + k];
  return scope;
}

Status SubgraphRunner::Run(const std::vector<const TypedTensor*>& inputs, const Scope& outer, std::vector<TypedTensor>* outputs) {
  const std::string where = "subgraph '" + graph_.name + "'";
  if (inputs.size() != graph_.inputs.size())
    return Status::InvalidInput(where + " takes " + std::to_string(graph_.inputs.size()) + " inputs, not " + std::to_string(inputs.size()));
  // A name is looked up in this run's values, the formal inputs, the constants, then the enclosing
  // scopes, nearest first (nothing is copied per run: a Loop runs its body once per iteration).
  std::map<std::string, TypedTensor> local;
  auto find = [&](const std::string& name) -> const TypedTensor* {
    if (auto it = local.find(name); it != local.end()) return &it->second;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (graph_.inputs[i] == name) return inputs[i];
    if (auto it = graph_.constants.find(name); it != graph_.constants.end()) return &it->second;
    if (auto it = outer.find(name); it != outer.end()) return it->second;
    return nullptr;
  };
  kernels_.resize(graph_.nodes.size());
  kernel_types_.resize(graph_.nodes.size());
  kernel_kinds_.resize(graph_.nodes.size());
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const SubgraphNode& node = graph_.nodes[i];
    KernelInputs in;
    std::vector<DType> types;
    std::vector<ValueKind> kinds;
    auto read = [&](const std::string& name) -> Status {
      if (name.empty()) {
        in.push_back(nullptr);
        types.push_back(DType::kUndefined);
        kinds.push_back(ValueKind::kTensor);
        return Status::Ok();
      }
      const TypedTensor* value = find(name);
      if (!value) return node.info.Bad("its input '" + name + "' is in no enclosing scope");
      in.push_back(value);
      types.push_back(value->dtype);
      kinds.push_back(value->kind);
      return Status::Ok();
    };
    for (const std::string& name : node.inputs) TB_RETURN_IF_ERROR(read(name));
    for (const std::string& name : node.info.implicit_inputs) TB_RETURN_IF_ERROR(read(name));
    if (!kernels_[i] || kernel_types_[i] != types || kernel_kinds_[i] != kinds) {
      KernelInfo info = node.info;
      info.opset = opset_;
      info.input_types = types;
      info.input_kinds = kinds;
      info.num_outputs = static_cast<int>(node.outputs.size());
      auto made = KernelRegistry::Default().Create(info);
      if (!made.ok()) return made.status().WithContext(where);
      kernels_[i] = std::move(made.value());
      kernel_types_[i] = types;
      kernel_kinds_[i] = kinds;
    }
    std::vector<TypedTensor> results(node.outputs.size());
    TB_RETURN_IF_ERROR(kernels_[i]->Compute(in, &results).WithContext(where));
    for (size_t k = 0; k < node.outputs.size(); ++k)
      if (!node.outputs[k].empty()) local[node.outputs[k]] = std::move(results[k]);
  }
  outputs->clear();
  for (const std::string& name : graph_.outputs) {
    const TypedTensor* value = find(name);
    if (!value) return Status::InvalidInput(where + ": its output '" + name + "' is computed nowhere");
    outputs->push_back(*value);
  }
  return Status::Ok();
}

}  // namespace tilebank::engine::kernels
