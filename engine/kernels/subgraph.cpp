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

void SubgraphRunner::Resolve() {
  std::map<std::string, std::pair<size_t, size_t>> produced;  // name -> (node, output index), so far
  auto source_of = [&](const std::string& name) {
    Source s;
    s.name = &name;
    if (name.empty()) return s;
    if (auto it = produced.find(name); it != produced.end()) {
      s.from = Source::From::kNode;
      std::tie(s.node, s.index) = it->second;
      return s;
    }
    for (size_t i = 0; i < graph_.inputs.size(); ++i)
      if (graph_.inputs[i] == name) {
        s.from = Source::From::kInput;
        s.index = i;
        return s;
      }
    if (auto it = graph_.constants.find(name); it != graph_.constants.end()) {
      s.from = Source::From::kConstant;
      s.constant = &it->second;
      return s;
    }
    s.from = Source::From::kOuter;
    return s;
  };
  node_inputs_.assign(graph_.nodes.size(), {});
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const SubgraphNode& node = graph_.nodes[i];
    for (const std::string& name : node.inputs) node_inputs_[i].push_back(source_of(name));
    for (const std::string& name : node.info.implicit_inputs) node_inputs_[i].push_back(source_of(name));
    for (size_t k = 0; k < node.outputs.size(); ++k)
      if (!node.outputs[k].empty()) produced[node.outputs[k]] = {i, k};
  }
  outputs_.clear();
  for (const std::string& name : graph_.outputs) outputs_.push_back(source_of(name));
  results_.resize(graph_.nodes.size());
  for (size_t i = 0; i < graph_.nodes.size(); ++i) results_[i].resize(graph_.nodes[i].outputs.size());
  kernels_.resize(graph_.nodes.size());
  kernel_types_.resize(graph_.nodes.size());
  kernel_kinds_.resize(graph_.nodes.size());
  resolved_ = true;
}

const TypedTensor* SubgraphRunner::Find(const Source& source, const std::vector<const TypedTensor*>& inputs, const Scope& outer) const {
  switch (source.from) {
    case Source::From::kNode: return &results_[source.node][source.index];
    case Source::From::kInput: return inputs[source.index];
    case Source::From::kConstant: return source.constant;
    case Source::From::kOuter: {
      auto it = outer.find(*source.name);
      return it == outer.end() ? nullptr : it->second;
    }
    case Source::From::kNone: break;
  }
  return nullptr;
}

Status SubgraphRunner::Run(const std::vector<const TypedTensor*>& inputs, const Scope& outer, std::vector<TypedTensor>* outputs) {
  auto where = [&] { return "subgraph '" + graph_.name + "'"; };
  if (inputs.size() != graph_.inputs.size())
    return Status::InvalidInput(where() + " takes " + std::to_string(graph_.inputs.size()) + " inputs, not " + std::to_string(inputs.size()));
  if (!resolved_) Resolve();
  // A name is this run's value of the node that computes it (when an earlier node does), else the
  // formal input, the constant, then the enclosing scopes', nearest first: nothing is copied per
  // run (a Loop runs its body once per iteration).
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const SubgraphNode& node = graph_.nodes[i];
    const std::vector<Source>& sources = node_inputs_[i];
    in_.assign(sources.size(), nullptr);
    bool same_types = kernels_[i] && kernel_types_[i].size() == sources.size();
    for (size_t j = 0; j < sources.size(); ++j) {
      if (sources[j].from == Source::From::kNone) {
        same_types = same_types && kernel_types_[i][j] == DType::kUndefined && kernel_kinds_[i][j] == ValueKind::kTensor;
        continue;
      }
      in_[j] = Find(sources[j], inputs, outer);
      if (!in_[j]) return node.info.Bad("its input '" + *sources[j].name + "' is in no enclosing scope");
      same_types = same_types && kernel_types_[i][j] == in_[j]->dtype && kernel_kinds_[i][j] == in_[j]->kind;
    }
    if (!same_types) {
      std::vector<DType> types;
      std::vector<ValueKind> kinds;
      for (const TypedTensor* value : in_) {
        types.push_back(value ? value->dtype : DType::kUndefined);
        kinds.push_back(value ? value->kind : ValueKind::kTensor);
      }
      KernelInfo info = node.info;
      info.opset = opset_;
      info.input_types = types;
      info.input_kinds = kinds;
      info.num_outputs = static_cast<int>(node.outputs.size());
      auto made = KernelRegistry::Default().Create(info);
      if (!made.ok()) return made.status().WithContext(where());
      kernels_[i] = std::move(made.value());
      kernel_types_[i] = std::move(types);
      kernel_kinds_[i] = std::move(kinds);
    }
    if (Status computed = kernels_[i]->Compute(in_, &results_[i]); !computed.ok()) return computed.WithContext(where());
  }
  outputs->clear();
  for (const Source& source : outputs_) {
    const TypedTensor* value = Find(source, inputs, outer);
    if (!value) return Status::InvalidInput(where() + ": its output '" + *source.name + "' is computed nowhere");
    outputs->push_back(*value);
  }
  // Large values are not held between runs (a branch not taken again, a body's last iteration
  // of a growing cache): the reuse pays where a run allocates many small ones.
  for (auto& node_results : results_)
    for (TypedTensor& t : node_results)
      if (t.bytes.capacity() > kKeptBytes) t = TypedTensor();
  return Status::Ok();
}

}  // namespace tilebank::engine::kernels
