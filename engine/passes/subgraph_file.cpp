#include "engine/passes/subgraph_file.h"
#include "base/json_text.h"

#include <charconv>
#include <fstream>
#include <optional>
#include <map>
#include <random>
#include <set>

namespace tilebank::engine::model {

namespace {

constexpr const char* kFormat = "tilebank.subgraphs";

// The subgraph's graph inputs that hold constants, by their name in `description`.
std::vector<std::string> ConstantInputs(const Graph& g, const Subgraph& s) {
  std::set<std::string> names;
  std::map<std::string, int> nodes;  // node name -> index in the description
  const auto& list = s.description["nodes"];
  for (size_t i = 0; i < list.size(); ++i) nodes[list[i]["name"]] = static_cast<int>(i);
  std::vector<int> order = {s.anchor};
  order.insert(order.end(), s.chain.begin(), s.chain.end());
  for (size_t i = 0; i < order.size(); ++i) {
    const Node& n = g.nodes[order[i]];
    const auto& refs = list[i]["inputs"];
    // The description lists the operands NodeOpSpec keeps, in order: the node's inputs minus Clip's bounds.
    std::vector<int> operands;
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (n.inputs[k] >= 0 && !(n.op_type == "Clip" && k > 0)) operands.push_back(n.inputs[k]);
    for (size_t k = 0; k < refs.size() && k < operands.size(); ++k)
      if (g.IsConstant(operands[k]) && !nodes.count(refs[k].get<std::string>())) names.insert(refs[k].get<std::string>());
  }
  return {names.begin(), names.end()};
}

Status Bad(const std::string& where, const std::string& what) { return Status::InvalidInput(where + ": " + what); }

// ReadSubgraphFile's body; nlohmann's type errors are its caller's to turn into a status.
Result<std::vector<SubgraphTask>> ReadSubgraphFileOrThrow(const std::string& path);

// A tensor description's shape: positive integer dimensions, at most 2^28 elements (1 GiB of floats).
Result<std::vector<int64_t>> ShapeOf(const nlohmann::json& desc, const std::string& where) {
  if (!desc.is_object() || !desc.contains("shape") || !desc["shape"].is_array()) return Bad(where, "a tensor description needs \"shape\"");
  std::vector<int64_t> shape;
  int64_t elements = 1;
  for (const auto& d : desc["shape"]) {
    if (!d.is_number_integer() || d.get<int64_t>() < 1 || d.get<int64_t>() > (int64_t{1} << 28))
      return Bad(where, "shape " + DumpJson(desc["shape"]) + " must hold positive integers");
    shape.push_back(d.get<int64_t>());
    elements *= shape.back();
    if (elements > (int64_t{1} << 28)) return Bad(where, "shape " + DumpJson(desc["shape"]) + " is larger than 2^28 elements");
  }
  return shape;
}

// The slot of a "const_input<slot>" attribute; nullopt for another name.
std::optional<int> ConstInputSlot(const std::string& name) {
  const std::string prefix = "const_input";
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  int slot = 0;
  auto [end, ec] = std::from_chars(name.data() + prefix.size(), name.data() + name.size(), slot);
  if (ec != std::errc() || end != name.data() + name.size() || slot < 0) return std::nullopt;
  return slot;
}

// The graph the description stands for: graph inputs named by the nodes' inputs, weights random
// (seeded), small constants from the attributes that carry them.
Result<Graph> GraphOf(const nlohmann::json& entry, const std::string& where) {
  if (!entry.contains("nodes") || !entry["nodes"].is_array() || entry["nodes"].empty()) return Bad(where, "\"nodes\" must be a non-empty list");
  std::set<std::string> constants;
  if (entry.contains("constants")) {
    if (!entry["constants"].is_array()) return Bad(where, "\"constants\" must be a list of input names");
    for (const auto& c : entry["constants"])
      if (c.is_string()) constants.insert(c.get<std::string>());
  }
  Graph g;
  g.opset = 17;
  std::map<std::string, int> value_of;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  auto add_value = [&](const std::string& name, std::vector<int64_t> shape) {
    Value v;
    v.name = name;
    v.shape = std::move(shape);
    g.values.push_back(std::move(v));
    return static_cast<int>(g.values.size() - 1);
  };
  auto constant = [&](const std::string& name, std::vector<int64_t> shape, std::vector<float> values) {
    const int id = add_value(name, shape);
    if (values.empty()) {
      values.resize(static_cast<size_t>(Tensor::NumElements(shape)));
      for (auto& x : values) x = dist(rng);
    }
    g.values[id].constant = ConstTensor::Floats(std::move(shape), std::move(values));
    return id;
  };
  const auto& nodes = entry["nodes"];
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& d = nodes[i];
    const std::string at = where + " node " + std::to_string(i);
    if (!d.is_object() || !d.contains("op") || !d["op"].is_string() || !d.contains("name") || !d["name"].is_string())
      return Bad(at, "needs \"op\" and \"name\"");
    if (!d.contains("inputs") || !d["inputs"].is_array() || !d.contains("input_desc") || !d["input_desc"].is_array() ||
        d["inputs"].size() != d["input_desc"].size() || !d.contains("output_desc") || !d["output_desc"].is_array() || d["output_desc"].empty())
      return Bad(at, "needs \"inputs\" and \"input_desc\" of one length, and \"output_desc\"");
    Node n;
    n.op_type = d["op"];
    n.name = d["name"];
    std::map<int, std::vector<float>> small;  // operand slot -> its values
    float clip_min = 0, clip_max = 0;
    bool has_min = false, has_max = false;
    if (d.contains("attr")) {
      if (!d["attr"].is_array()) return Bad(at, "\"attr\" must be a list");
      for (const auto& a : d["attr"]) {
        if (!a.is_object() || !a.contains("name") || !a["name"].is_string() || !a.contains("value")) return Bad(at, "an attribute needs \"name\" and \"value\"");
        const std::string name = a["name"];
        if (auto slot = ConstInputSlot(name)) {
          if (!a["value"].is_array()) return Bad(at, name + " must be a list of numbers");
          for (const auto& x : a["value"]) {
            if (!x.is_number()) return Bad(at, name + " must be a list of numbers");
            small[*slot].push_back(x.get<float>());
          }
        } else if (n.op_type == "Clip" && (name == "min" || name == "max")) {
          if (!a["value"].is_number()) return Bad(at, "Clip's " + name + " must be a number");
          (name == "min" ? clip_min : clip_max) = a["value"].get<float>();
          (name == "min" ? has_min : has_max) = true;
        } else {
          n.attrs[name] = a["value"];
        }
      }
    }
    for (size_t k = 0; k < d["inputs"].size(); ++k) {
      if (!d["inputs"][k].is_string()) return Bad(at, "inputs must be names");
      const std::string ref = d["inputs"][k];
      auto it = value_of.find(ref);
      if (it == value_of.end()) {
        auto shape = ShapeOf(d["input_desc"][k], at);
        if (!shape.ok()) return shape.status();
        std::vector<float> values;
        if (auto sv = small.find(static_cast<int>(k)); sv != small.end()) {
          if (static_cast<int64_t>(sv->second.size()) != Tensor::NumElements(*shape))
            return Bad(at, "const_input" + std::to_string(k) + " has " + std::to_string(sv->second.size()) + " values for shape " +
                               DumpJson(d["input_desc"][k]["shape"]));
          values = sv->second;
        }
        const int id = constants.count(ref) ? constant(ref, *shape, values) : add_value(ref, *shape);
        if (!constants.count(ref)) g.inputs.push_back(id);
        it = value_of.emplace(ref, id).first;
      }
      n.inputs.push_back(it->second);
    }
    if (n.op_type == "Clip") {
      n.inputs.push_back(has_min ? constant(n.name + "/min", {}, {clip_min}) : -1);
      if (has_max) n.inputs.push_back(constant(n.name + "/max", {}, {clip_max}));
    }
    auto out_shape = ShapeOf(d["output_desc"][0], at);
    if (!out_shape.ok()) return out_shape.status();
    const int out = add_value(n.name, *out_shape);
    value_of[n.name] = out;
    n.outputs = {out};
    g.nodes.push_back(std::move(n));
  }
  g.outputs = {g.nodes.back().outputs[0]};
  return g;
}

}  // namespace

std::vector<SubgraphTask> DistinctSubgraphs(const Graph& graph, const std::vector<double>& node_us) {
  std::vector<SubgraphTask> tasks;
  std::map<std::string, size_t> index_of;  // canonical text -> task
  auto us = [&](int node) { return node >= 0 && node < static_cast<int>(node_us.size()) ? node_us[node] : 0.0; };
  for (const Subgraph& s : PartitionSubgraphs(graph)) {
    auto [it, fresh] = index_of.try_emplace(s.canonical.text, tasks.size());
    if (fresh) {
      SubgraphTask t;
      t.graph = ExtractSubgraph(graph, s);
      auto own = PartitionSubgraphs(t.graph);
      if (own.size() != 1 || own[0].canonical.text != s.canonical.text) {  // cannot happen: the same nodes
        index_of.erase(it);
        continue;
      }
      t.subgraph = std::move(own[0]);
      t.subgraph.description["constants"] = ConstantInputs(graph, s);
      t.name = graph.nodes[s.anchor].name;
      tasks.push_back(std::move(t));
    }
    SubgraphTask& t = tasks[it->second];
    t.occurrences++;
    t.model_us += us(s.anchor);
    for (int c : s.chain) t.model_us += us(c);
  }
  return tasks;
}

std::string SubgraphOpType(const SubgraphTask& t) {
  std::string text = t.graph.nodes[t.subgraph.anchor].op_type;
  for (int c : t.subgraph.chain) text += "+" + t.graph.nodes[c].op_type;
  return text;
}

nlohmann::json SubgraphFileJson(const std::vector<SubgraphTask>& tasks, const std::string& model_name, const std::string& soc_version) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& t : tasks)
    list.push_back({{"repo_key", std::to_string(t.subgraph.key())},
                    {"name", t.name},
                    {"occurrences", t.occurrences},
                    {"nodes", t.subgraph.description["nodes"]},
                    {"constants", t.subgraph.description.value("constants", nlohmann::json::array())}});
  return {{"format", kFormat}, {"version", 1}, {"model", model_name}, {"soc_version", soc_version}, {"subgraphs", list}};
}

Result<std::vector<SubgraphTask>> ReadSubgraphFile(const std::string& path) {
  try {
    return ReadSubgraphFileOrThrow(path);
  } catch (const nlohmann::json::exception& e) {  // a field of another type than the format says
    return Status::InvalidInput(path + ": " + e.what());
  }
}

namespace {

Result<std::vector<SubgraphTask>> ReadSubgraphFileOrThrow(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::InvalidInput(path + ": cannot be read");
  const nlohmann::json file = nlohmann::json::parse(in, nullptr, false);
  if (file.is_discarded()) return Status::InvalidInput(path + ": not JSON");
  if (!file.is_object() || file.value("format", "") != kFormat) return Status::InvalidInput(path + ": not a subgraph file (\"format\": \"" + std::string(kFormat) + "\")");
  if (!file.contains("version") || !file["version"].is_number_integer() || file["version"].get<int>() != 1)
    return Status::InvalidInput(path + ": subgraph file version " + (file.contains("version") ? DumpJson(file["version"]) : "(none)") + "; this build reads version 1");
  if (!file.contains("subgraphs") || !file["subgraphs"].is_array()) return Status::InvalidInput(path + ": \"subgraphs\" must be a list");
  std::vector<SubgraphTask> tasks;
  for (size_t i = 0; i < file["subgraphs"].size(); ++i) {
    const auto& entry = file["subgraphs"][i];
    const std::string where = path + ": subgraphs[" + std::to_string(i) + "]";
    if (!entry.is_object()) return Bad(where, "must be an object");
    auto graph = GraphOf(entry, where);
    if (!graph.ok()) return graph.status();
    auto own = PartitionSubgraphs(*graph);
    if (own.size() != 1 || own[0].chain.size() + 1 != graph->nodes.size())
      return Bad(where, "its nodes are not one anchor (Conv, MatMul, Gemm) with a chain of elementwise nodes after it");
    SubgraphTask t;
    t.subgraph = std::move(own[0]);
    t.graph = std::move(graph.value());
    const std::string key = std::to_string(t.subgraph.key());
    if (entry.contains("repo_key") && entry["repo_key"] != key)
      return Bad(where, "its nodes make repo_key " + key + ", not " + DumpJson(entry["repo_key"]));
    t.name = entry.value("name", t.graph.nodes[t.subgraph.anchor].name);
    t.occurrences = entry.value("occurrences", 1);
    tasks.push_back(std::move(t));
  }
  return tasks;
}

}  // namespace

}  // namespace tilebank::engine::model
