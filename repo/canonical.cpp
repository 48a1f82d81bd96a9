#include "repo/canonical.h"

#include <xxhash.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "repo/op_defaults.h"
#include "base/json_text.h"

namespace tilebank {
namespace {

using json = nlohmann::json;

Result<std::string> CanonicalDtype(const std::string& raw) {
  static const std::map<std::string, std::string> names = {
      {"float", "float32"},   {"float32", "float32"},  {"fp32", "float32"},    {"dt_float", "float32"},
      {"float16", "float16"}, {"half", "float16"},     {"fp16", "float16"},    {"dt_float16", "float16"},
      {"bfloat16", "bfloat16"}, {"bf16", "bfloat16"},  {"dt_bf16", "bfloat16"},
      {"double", "float64"},  {"float64", "float64"},  {"dt_double", "float64"},
      {"int8", "int8"},       {"dt_int8", "int8"},     {"uint8", "uint8"},     {"dt_uint8", "uint8"},
      {"int16", "int16"},     {"dt_int16", "int16"},   {"int32", "int32"},     {"dt_int32", "int32"},
      {"int64", "int64"},     {"dt_int64", "int64"},   {"bool", "bool"},       {"dt_bool", "bool"},
  };
  std::string lower = raw;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  auto it = names.find(lower);
  if (it == names.end()) return Status::InvalidInput("unknown data type '" + raw + "'");
  return it->second;
}

// The shortest decimal that reads back as the same float32, as a double: 1e-5 written as
// 1e-05 or as float32's 9.99999974e-06 both become 1e-05.
double NormalizeReal(double value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<float>(value));
  if (ec != std::errc()) return value;
  *end = '\0';
  return std::strtod(buf, nullptr);
}

Result<json> ToInt(const json& v, const std::string& where) {
  if (v.is_boolean()) return json(v.get<bool>() ? 1 : 0);
  if (v.is_number_integer()) return json(v.get<int64_t>());
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e18) return json(static_cast<int64_t>(d));
  }
  return Status::InvalidInput(where + ": expected an integer, got " + DumpJson(v));
}

Result<json> ToReal(const json& v, const std::string& where) {
  if (v.is_number()) {
    double d = v.get<double>();
    if (std::isfinite(d)) return json(NormalizeReal(d));
  }
  return Status::InvalidInput(where + ": expected a finite number, got " + DumpJson(v));
}

Result<json> ToText(const json& v, const std::string& where) {
  if (v.is_string()) return v;
  return Status::InvalidInput(where + ": expected a string, got " + DumpJson(v));
}

Result<json> ConvertAttr(const json& v, AttrType type, const std::string& where) {
  auto list = [&](auto convert) -> Result<json> {
    if (!v.is_array()) return Status::InvalidInput(where + ": expected a list, got " + DumpJson(v));
    json out = json::array();
    for (size_t i = 0; i < v.size(); ++i) {
      auto item = convert(v[i], where + "[" + std::to_string(i) + "]");
      if (!item.ok()) return item.status();
      out.push_back(std::move(*item));
    }
    return out;
  };
  switch (type) {
    case AttrType::kInt: return ToInt(v, where);
    case AttrType::kReal: return ToReal(v, where);
    case AttrType::kText: return ToText(v, where);
    case AttrType::kIntList: return list(ToInt);
    case AttrType::kRealList: return list(ToReal);
    case AttrType::kTextList: return list(ToText);
  }
  return Status::InvalidInput(where + ": unsupported attribute type");
}

Result<AttrType> AttrTypeFromAtc(const std::string& name, const std::string& where) {
  static const std::map<std::string, AttrType> types = {
      {"bool", AttrType::kInt},          {"int", AttrType::kInt},           {"float", AttrType::kReal},
      {"str", AttrType::kText},          {"string", AttrType::kText},       {"data_type", AttrType::kText},
      {"list_bool", AttrType::kIntList}, {"list_int", AttrType::kIntList},  {"list_float", AttrType::kRealList},
      {"list_str", AttrType::kTextList}, {"list_string", AttrType::kTextList}};
  auto it = types.find(name);
  if (it == types.end()) return Status::InvalidInput(where + ": unknown attribute type '" + name + "'");
  return it->second;
}

AttrType AttrTypeOfValue(const json& v) {
  if (v.is_array()) {
    if (!v.empty() && v[0].is_string()) return AttrType::kTextList;
    bool any_real = std::any_of(v.begin(), v.end(), [](const json& x) { return x.is_number_float(); });
    return any_real ? AttrType::kRealList : AttrType::kIntList;
  }
  if (v.is_string()) return AttrType::kText;
  if (v.is_number_float()) return AttrType::kReal;
  return AttrType::kInt;
}

Result<json> CanonicalTensors(const json& op, const char* field, bool required) {
  json out = json::array();
  if (!op.contains(field)) {
    if (required) return Status::InvalidInput(std::string("missing \"") + field + "\"");
    return out;
  }
  const json& list = op[field];
  if (!list.is_array()) return Status::InvalidInput(std::string("\"") + field + "\" must be a list");
  for (size_t i = 0; i < list.size(); ++i) {
    std::string where = std::string(field) + "[" + std::to_string(i) + "]";
    const json& t = list[i];
    if (!t.is_object()) return Status::InvalidInput(where + " must be an object");
    if (!t.contains("shape") || !t["shape"].is_array()) return Status::InvalidInput(where + ".shape missing or not a list");
    json shape = json::array();
    for (const json& d : t["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < -1)
        return Status::InvalidInput(where + ".shape: dimensions must be integers >= 0 (or -1 for dynamic), got " + DumpJson(d));
      shape.push_back(d.get<int64_t>());
    }
    if (!t.contains("type") || !t["type"].is_string()) return Status::InvalidInput(where + ".type missing");
    auto dtype = CanonicalDtype(t["type"].get<std::string>());
    if (!dtype.ok()) return dtype.status().WithContext(where);
    std::string format = "ND";
    if (t.contains("format")) {
      if (!t["format"].is_string()) return Status::InvalidInput(where + ".format must be a string");
      format = t["format"].get<std::string>();
      std::transform(format.begin(), format.end(), format.begin(), [](unsigned char c) { return std::toupper(c); });
    }
    out.push_back({{"dtype", *dtype}, {"format", format}, {"shape", shape}});
  }
  return out;
}

json DefaultOf(const AttrSpec& spec, int spatial_dims) {
  switch (spec.rule) {
    case DefaultRule::kNone: return nullptr;
    case DefaultRule::kValue:
      if (spec.type == AttrType::kInt) return spec.int_value;
      if (spec.type == AttrType::kReal) return NormalizeReal(spec.real_value);
      return spec.text_value;
    case DefaultRule::kOnesSpatial: return json(std::vector<int64_t>(std::max(spatial_dims, 0), 1));
    case DefaultRule::kZerosPads: return json(std::vector<int64_t>(2 * std::max(spatial_dims, 0), 0));
  }
  return nullptr;
}

// Makes negative axes positive against `rank`; out-of-range axes are an error.
Result<json> NormalizeAxes(json value, int64_t rank, const std::string& where) {
  auto fix = [&](json& axis) -> Status {
    int64_t a = axis.get<int64_t>();
    if (a < -rank || a >= rank)
      return Status::InvalidInput(where + ": axis " + std::to_string(a) + " out of range for rank " + std::to_string(rank));
    if (a < 0) axis = a + rank;
    return Status::Ok();
  };
  if (value.is_array()) {
    for (json& axis : value) TB_RETURN_IF_ERROR(fix(axis));
  } else {
    TB_RETURN_IF_ERROR(fix(value));
  }
  return value;
}

// Reads "attr" as ATC's list of {"name","type","value"} (or a plain {"name": value} object).
Result<std::vector<std::pair<std::string, std::pair<json, std::string>>>> RawAttrs(const json& op) {
  std::vector<std::pair<std::string, std::pair<json, std::string>>> raw;  // name -> (value, atc type)
  if (!op.contains("attr")) return raw;
  const json& attrs = op["attr"];
  if (attrs.is_object()) {
    for (auto& [name, value] : attrs.items()) raw.push_back({name, {value, ""}});
    return raw;
  }
  if (!attrs.is_array()) return Status::InvalidInput("\"attr\" must be a list of {\"name\",\"type\",\"value\"}");
  for (size_t i = 0; i < attrs.size(); ++i) {
    const json& a = attrs[i];
    std::string where = "attr[" + std::to_string(i) + "]";
    if (!a.is_object() || !a.contains("name") || !a["name"].is_string() || !a.contains("value"))
      return Status::InvalidInput(where + " needs \"name\" and \"value\"");
    std::string type = a.contains("type") && a["type"].is_string() ? a["type"].get<std::string>() : "";
    raw.push_back({a["name"].get<std::string>(), {a["value"], type}});
  }
  return raw;
}

Result<json> CanonicalAttrs(const std::string& op_type, const json& op, const json& inputs) {
  auto raw = RawAttrs(op);
  if (!raw.ok()) return raw.status();
  const int64_t rank0 = inputs.empty() ? 0 : static_cast<int64_t>(inputs[0]["shape"].size());
  const auto& specs = AttrSpecsOf(op_type);
  json out = json::object();
  std::set<std::string> seen;
  for (auto& [name, value_and_type] : *raw) {
    const auto& [value, atc_type] = value_and_type;
    std::string where = "attr " + name;
    if (!seen.insert(name).second) return Status::InvalidInput(where + " given twice");
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& s : specs)
      if (name == s.name) spec = &s;
    AttrType type;
    if (spec) {
      type = spec->type;
    } else if (!atc_type.empty()) {
      auto declared = AttrTypeFromAtc(atc_type, where);
      if (!declared.ok()) return declared.status();
      type = *declared;
    } else {
      type = AttrTypeOfValue(value);
    }
    auto converted = ConvertAttr(value, type, where);
    if (!converted.ok()) return converted.status();
    json canonical = std::move(*converted);
    if (spec && spec->is_axis) {
      auto fixed = NormalizeAxes(canonical, rank0, where);
      if (!fixed.ok()) return fixed.status();
      canonical = std::move(*fixed);
    }
    if (spec) {
      json dflt = DefaultOf(*spec, static_cast<int>(rank0) - 2);
      if (spec->is_axis && !dflt.is_null() && rank0 > 0) dflt = *NormalizeAxes(dflt, rank0, where);
      if (!dflt.is_null() && canonical == dflt) continue;
    }
    // Conv's kernel_shape is implied by the weights' spatial dimensions.
    if (op_type == "Conv" && name == "kernel_shape" && inputs.size() >= 2) {
      const json& w = inputs[1]["shape"];
      if (w.size() >= 2 && canonical == json(std::vector<json>(w.begin() + 2, w.end()))) continue;
    }
    out[name] = std::move(canonical);
  }
  return out;
}

Result<json> CanonicalOpObject(const json& op, std::string* op_type_out) {
  if (!op.is_object()) return Status::InvalidInput("an operator description must be a JSON object");
  if (!op.contains("op") || !op["op"].is_string() || op["op"].get<std::string>().empty())
    return Status::InvalidInput("missing \"op\" (the operator type, e.g. \"MatMul\")");
  std::string op_type = CanonicalOpType(op["op"].get<std::string>());
  auto inputs = CanonicalTensors(op, "input_desc", true);
  if (!inputs.ok()) return inputs.status().WithContext(op_type);
  auto outputs = CanonicalTensors(op, "output_desc", false);
  if (!outputs.ok()) return outputs.status().WithContext(op_type);
  auto attrs = CanonicalAttrs(op_type, op, *inputs);
  if (!attrs.ok()) return attrs.status().WithContext(op_type);
  *op_type_out = op_type;
  return json{{"attr", *attrs}, {"in", *inputs}, {"op", op_type}, {"out", *outputs}};
}

CanonicalDescriptor Finish(EntryKind kind, std::string op_type, const json& canonical) {
  CanonicalDescriptor d;
  d.kind = kind;
  d.op_type = std::move(op_type);
  d.text = DumpJson(canonical);
  d.key = KeyOfDescriptor(d.text);
  return d;
}

uint64_t HashWords(const std::vector<uint64_t>& words) {
  return XXH3_64bits(words.data(), words.size() * sizeof(uint64_t));
}

}  // namespace

Result<CanonicalDescriptor> CanonicalizeOp(const json& atc_op) {
  std::string op_type;
  auto object = CanonicalOpObject(atc_op, &op_type);
  if (!object.ok()) return object.status();
  return Finish(EntryKind::kOp, op_type, *object);
}

Result<CanonicalDescriptor> CanonicalizeGraph(const json& graph) {
  if (!graph.is_object() || !graph.contains("nodes") || !graph["nodes"].is_array() || graph["nodes"].empty())
    return Status::InvalidInput("a subgraph needs a non-empty \"nodes\" list");
  const json& nodes = graph["nodes"];
  const size_t n = nodes.size();

  // Real nodes are 0..n-1; graph inputs become pseudo-nodes n.. so one refinement treats both.
  std::map<std::string, size_t> index_of;
  for (size_t i = 0; i < n; ++i) {
    if (!nodes[i].is_object() || !nodes[i].contains("name") || !nodes[i]["name"].is_string())
      return Status::InvalidInput("nodes[" + std::to_string(i) + "] needs a \"name\"");
    if (!index_of.emplace(nodes[i]["name"].get<std::string>(), i).second)
      return Status::InvalidInput("node name '" + nodes[i]["name"].get<std::string>() + "' used twice");
  }
  struct Source { size_t producer; int64_t output; };
  std::vector<json> op_objects(n);
  std::vector<std::string> op_types(n);
  std::vector<std::vector<Source>> sources(n);
  std::map<std::string, size_t> graph_inputs;
  for (size_t i = 0; i < n; ++i) {
    const json& node = nodes[i];
    std::string where = "node '" + node["name"].get<std::string>() + "'";
    auto object = CanonicalOpObject(node, &op_types[i]);
    if (!object.ok()) return object.status().WithContext(where);
    op_objects[i] = std::move(*object);
    if (!node.contains("inputs")) continue;
    if (!node["inputs"].is_array()) return Status::InvalidInput(where + ": \"inputs\" must be a list of names");
    for (const json& ref : node["inputs"]) {
      if (!ref.is_string()) return Status::InvalidInput(where + ": inputs must be strings");
      std::string name = ref.get<std::string>();
      int64_t output = 0;
      if (auto colon = name.rfind(':'); colon != std::string::npos && index_of.count(name.substr(0, colon))) {
        auto [end, ec] = std::from_chars(name.data() + colon + 1, name.data() + name.size(), output);
        if (ec != std::errc() || end != name.data() + name.size() || output < 0)
          return Status::InvalidInput(where + ": bad output index in '" + name + "'");
        name.resize(colon);
      }
      auto it = index_of.find(name);
      if (it != index_of.end()) {
        sources[i].push_back({it->second, output});
      } else {
        auto [gi, fresh] = graph_inputs.emplace(name, n + graph_inputs.size());
        sources[i].push_back({gi->second, 0});
      }
    }
  }
  const size_t total = n + graph_inputs.size();
  struct Use { size_t consumer; size_t slot; int64_t output; };
  std::vector<std::vector<Use>> uses(total);
  for (size_t i = 0; i < n; ++i)
    for (size_t s = 0; s < sources[i].size(); ++s) uses[sources[i][s].producer].push_back({i, s, sources[i][s].output});

  // Colour refinement: a node's colour summarises its op, its producers and its consumers.
  std::vector<uint64_t> color(total);
  for (size_t i = 0; i < n; ++i) color[i] = KeyOfDescriptor(DumpJson(op_objects[i]));
  for (size_t i = n; i < total; ++i) color[i] = KeyOfDescriptor("graph-input");
  auto distinct = [&] { return std::set<uint64_t>(color.begin(), color.end()).size(); };
  size_t classes = distinct();
  for (size_t round = 0; round < total; ++round) {
    std::vector<uint64_t> next(total);
    for (size_t v = 0; v < total; ++v) {
      std::vector<uint64_t> words{color[v]};
      if (v < n)
        for (const Source& s : sources[v]) words.insert(words.end(), {color[s.producer], uint64_t(s.output)});
      std::vector<std::array<uint64_t, 3>> consumers;
      for (const Use& u : uses[v]) consumers.push_back({color[u.consumer], u.slot, uint64_t(u.output)});
      std::sort(consumers.begin(), consumers.end());
      for (auto& c : consumers) words.insert(words.end(), c.begin(), c.end());
      next[v] = HashWords(words);
    }
    color.swap(next);
    size_t now = distinct();
    if (now == classes && round > 0) break;
    classes = now;
  }

  // Kahn's topological sort, always taking the ready node of smallest colour.
  std::vector<size_t> pending(n, 0), position(n, 0);
  for (size_t i = 0; i < n; ++i)
    for (const Source& s : sources[i]) pending[i] += s.producer < n;
  auto by_color = [&](size_t a, size_t b) { return std::pair(color[a], a) > std::pair(color[b], b); };
  std::vector<size_t> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push_back(i);
  std::vector<size_t> order;
  while (!ready.empty()) {
    std::make_heap(ready.begin(), ready.end(), by_color);
    std::pop_heap(ready.begin(), ready.end(), by_color);
    size_t v = ready.back();
    ready.pop_back();
    position[v] = order.size();
    order.push_back(v);
    for (const Use& u : uses[v])
      if (--pending[u.consumer] == 0) ready.push_back(u.consumer);
  }
  if (order.size() != n) return Status::InvalidInput("the subgraph has a cycle");

  std::map<size_t, size_t> graph_input_number;
  json canonical_nodes = json::array();
  std::set<std::string> distinct_types;
  for (size_t v : order) {
    json src = json::array();
    for (const Source& s : sources[v]) {
      if (s.producer < n) {
        src.push_back("n" + std::to_string(position[s.producer]) + ":" + std::to_string(s.output));
      } else {
        auto [it, fresh] = graph_input_number.emplace(s.producer, graph_input_number.size());
        src.push_back("g" + std::to_string(it->second));
      }
    }
    canonical_nodes.push_back({{"op", op_objects[v]}, {"src", src}});
    distinct_types.insert(op_types[v]);
  }
  std::string op_type;
  for (const std::string& t : distinct_types) op_type += (op_type.empty() ? "" : "+") + t;
  return Finish(EntryKind::kGraph, op_type, json{{"nodes", canonical_nodes}});
}

Result<CanonicalDescriptor> CanonicalizeGrad(const json& problem) {
  if (!problem.is_object() || !problem.contains("gradients") || !problem["gradients"].is_array() ||
      problem["gradients"].empty())
    return Status::InvalidInput("a gradient fusion problem needs a non-empty \"gradients\" list");
  if (!problem.contains("world_size") || !problem["world_size"].is_number_integer() ||
      problem["world_size"].get<int64_t>() < 1)
    return Status::InvalidInput("a gradient fusion problem needs \"world_size\" (an integer >= 1)");
  json grads = json::array();
  const json& list = problem["gradients"];
  for (size_t i = 0; i < list.size(); ++i) {
    const json& g = list[i];
    std::string where = "gradients[" + std::to_string(i) + "]";
    if (!g.is_object() || !g.contains("type") || !g["type"].is_string())
      return Status::InvalidInput(where + " needs \"type\"");
    auto dtype = CanonicalDtype(g["type"].get<std::string>());
    if (!dtype.ok()) return dtype.status().WithContext(where);
    int64_t numel = 1;
    if (g.contains("numel") && g["numel"].is_number_integer()) {
      numel = g["numel"].get<int64_t>();
    } else if (g.contains("shape") && g["shape"].is_array()) {
      for (const json& d : g["shape"]) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0) return Status::InvalidInput(where + ".shape must hold integers >= 0");
        numel *= d.get<int64_t>();
      }
    } else {
      return Status::InvalidInput(where + " needs \"shape\" or \"numel\"");
    }
    if (numel < 0) return Status::InvalidInput(where + ".numel must be >= 0");
    grads.push_back({{"dtype", *dtype}, {"numel", numel}});
  }
  json canonical = {{"grads", grads}, {"world_size", problem["world_size"]}};
  // The cluster beyond the world size, when the problem names it (older descriptors do not).
  if (problem.contains("ranks_per_node")) {
    const json& r = problem["ranks_per_node"];
    if (!r.is_number_integer() || r.get<int64_t>() < 1 || r.get<int64_t>() > problem["world_size"].get<int64_t>())
      return Status::InvalidInput("\"ranks_per_node\" must be an integer from 1 to \"world_size\"");
    canonical["ranks_per_node"] = r;
  }
  if (problem.contains("communicator")) {
    const json& c = problem["communicator"];
    if (!c.is_object() || !c.contains("backend") || !c["backend"].is_string() || !c.contains("transport") || !c["transport"].is_string())
      return Status::InvalidInput("\"communicator\" must be {\"backend\": \"...\", \"transport\": \"...\"}");
    canonical["communicator"] = {{"backend", c["backend"]}, {"transport", c["transport"]}};
  }
  return Finish(EntryKind::kGrad, "AllReduce", canonical);
}

Result<CanonicalDescriptor> CanonicalizeDescription(const json& description) {
  if (description.is_object()) {
    if (description.contains("op")) return CanonicalizeOp(description);
    if (description.contains("nodes")) return CanonicalizeGraph(description);
    if (description.contains("gradients")) return CanonicalizeGrad(description);
  }
  return Status::InvalidInput(
      "not an operator ({\"op\", \"input_desc\", ...}), subgraph ({\"nodes\": [...]}) or gradient problem "
      "({\"gradients\": [...]}) description");
}

namespace {

// A canonical op object written back in ATC's layout.
Result<json> AtcFromCanonicalOp(const json& c) {
  if (!c.is_object() || !c.contains("op") || !c.contains("in") || !c.contains("out") || !c.contains("attr") ||
      c.size() != 4 || !c["in"].is_array() || !c["out"].is_array())
    return Status::InvalidInput("not a canonical operator descriptor");
  json op = {{"op", c["op"]}, {"attr", c["attr"]}, {"input_desc", json::array()}, {"output_desc", json::array()}};
  for (const char* side : {"in", "out"})
    for (const json& t : c[side]) {
      if (!t.is_object() || !t.contains("dtype") || !t.contains("format") || !t.contains("shape"))
        return Status::InvalidInput("not a canonical tensor descriptor");
      op[std::string(side) == "in" ? "input_desc" : "output_desc"].push_back(
          {{"type", t["dtype"]}, {"format", t["format"]}, {"shape", t["shape"]}});
    }
  return op;
}

}  // namespace

Result<json> AtcDescriptionOfOp(const std::string& canonical_op_text) {
  json c = json::parse(canonical_op_text, nullptr, false);
  if (c.is_discarded()) return Status::InvalidInput("descriptor is not valid JSON");
  return AtcFromCanonicalOp(c);
}

Result<CanonicalDescriptor> Recanonicalize(EntryKind kind, const std::string& canonical_text) {
  json c = json::parse(canonical_text, nullptr, false);
  if (c.is_discarded()) return Status::InvalidInput("descriptor is not valid JSON");
  switch (kind) {
    case EntryKind::kOp: {
      auto atc = AtcFromCanonicalOp(c);
      if (!atc.ok()) return atc.status();
      return CanonicalizeOp(*atc);
    }
    case EntryKind::kGraph: {
      if (!c.is_object() || !c.contains("nodes") || !c["nodes"].is_array())
        return Status::InvalidInput("not a canonical subgraph descriptor");
      json graph = {{"nodes", json::array()}};
      for (size_t i = 0; i < c["nodes"].size(); ++i) {
        const json& node = c["nodes"][i];
        if (!node.is_object() || !node.contains("op") || !node.contains("src"))
          return Status::InvalidInput("not a canonical subgraph node");
        auto atc = AtcFromCanonicalOp(node["op"]);
        if (!atc.ok()) return atc.status();
        (*atc)["name"] = "n" + std::to_string(i);
        (*atc)["inputs"] = node["src"];
        graph["nodes"].push_back(std::move(*atc));
      }
      return CanonicalizeGraph(graph);
    }
    case EntryKind::kGrad: {
      if (!c.is_object() || !c.contains("grads") || !c["grads"].is_array() || !c.contains("world_size"))
        return Status::InvalidInput("not a canonical gradient descriptor");
      json problem = {{"gradients", json::array()}, {"world_size", c["world_size"]}};
      for (const char* key : {"ranks_per_node", "communicator"})
        if (c.contains(key)) problem[key] = c[key];
      for (const json& g : c["grads"]) {
        if (!g.is_object() || !g.contains("dtype") || !g.contains("numel"))
          return Status::InvalidInput("not a canonical gradient");
        problem["gradients"].push_back({{"type", g["dtype"]}, {"numel", g["numel"]}});
      }
      return CanonicalizeGrad(problem);
    }
  }
  return Status::InvalidInput("unknown kind");
}

std::string ShapeClassOf(const std::string& canonical_op_text) {
  // A scan of our own compact JSON (no parser: this runs once per op entry written): inside the
  // top-level "in" and "out" lists, every "shape":[...] becomes "shape":<rank>.
  const std::string& t = canonical_op_text;
  std::string out;
  out.reserve(t.size());
  int depth = 0;
  bool in_string = false;
  bool in_tensors = false;  // inside the value of top-level "in" or "out"
  int tensors_depth = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < t.size()) out += t[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      if (depth == 1 && (t.compare(i, 5, "\"in\":") == 0 || t.compare(i, 6, "\"out\":") == 0)) {
        in_tensors = true;
        tensors_depth = depth;
      }
      if (in_tensors && t.compare(i, 9, "\"shape\":[") == 0) {
        size_t close = t.find(']', i + 9);
        if (close == std::string::npos) return canonical_op_text;
        size_t rank = 0;
        if (close > i + 9) rank = 1 + std::count(t.begin() + i + 9, t.begin() + close, ',');
        out += "\"shape\":" + std::to_string(rank);
        i = close;
        continue;
      }
      in_string = true;
      out += c;
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') {
      --depth;
      if (in_tensors && depth == tensors_depth) in_tensors = false;
    }
    out += c;
  }
  return out;
}

}  // namespace tilebank
