#include "engine/backends/fused_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "engine/core/search_space.h"
#include "engine/backends/onednn/attention_kernel.h"
#include "engine/backends/onednn/onednn_post_ops.h"
#include "engine/core/template_catalog.h"

namespace tilebank::engine {

Policy FusedPolicy::Knobs() const {
  Policy knobs = anchor;
  knobs.push_back({"fuse", int64_t{fuse}});
  knobs.push_back({"impl", impl});
  std::sort(knobs.begin(), knobs.end(), [](const Knob& a, const Knob& b) { return a.name < b.name; });
  return knobs;
}

std::optional<FusedPolicy> ParseFusedPolicy(const Policy& policy) {
  FusedPolicy p;
  bool has_fuse = false;
  for (const Knob& k : policy) {
    if (k.name == "fuse" && std::holds_alternative<int64_t>(k.value)) {
      p.fuse = static_cast<int>(std::get<int64_t>(k.value));
      has_fuse = true;
    } else if (k.name == "impl" && std::holds_alternative<std::string>(k.value)) {
      p.impl = std::get<std::string>(k.value);
    } else {
      p.anchor.push_back(k);
    }
  }
  if (!has_fuse || (p.impl != "onednn" && p.impl != "halide" && p.impl != "attention")) return std::nullopt;
  return p;
}

std::optional<FusedPolicy> CurrentFusedPolicy(const Entry& entry) {
  if (entry.template_id != kFusedTemplateId || EngineTemplateVersions()(kFusedTemplateId) != entry.template_version) return std::nullopt;
  return ParseFusedPolicy(entry.policy);
}

namespace {

// An attention block's policy: fuse 0 (unfused, impl onednn) or fuse 1 with impl attention and its
// tile knobs (AttentionTilesProblem; their bounds are the block's, checked at bind).
std::string AttentionPolicyProblem(const std::vector<Knob>& policy) {
  auto parsed = ParseFusedPolicy(policy);
  if (!parsed) return std::string("the policy of ") + kFusedTemplateId + " needs an integer 'fuse' and an 'impl' of onednn, halide or attention";
  if (parsed->fuse == 0) return parsed->impl == "onednn" && parsed->anchor.empty() ? "" : "an unfused attention block (fuse 0) has impl 'onednn' and no other knob";
  if (parsed->fuse != 1) return "knob 'fuse' = " + std::to_string(parsed->fuse) + " is outside its domain for an attention block (0 or 1)";
  if (parsed->impl != "attention") return "an attention block runs fused with impl 'attention', not '" + parsed->impl + "'";
  return AttentionTilesProblem(parsed->anchor, nullptr);
}

}  // namespace

std::string FusedPolicyProblem(const std::string& descriptor, const std::vector<Knob>& policy) {
  const nlohmann::json d = nlohmann::json::parse(descriptor, nullptr, false);
  if (!d.is_object() || !d.contains("nodes") || !d["nodes"].is_array() || d["nodes"].size() < 2)
    return "descriptor: not a subgraph of an anchor and at least one chain node";
  const auto& nodes = d["nodes"];
  auto type = [&](size_t i) {
    const auto& n = nodes[i];
    return n.is_object() && n.contains("op") && n["op"].is_object() && n["op"].contains("op") && n["op"]["op"].is_string()
               ? n["op"]["op"].get<std::string>() : std::string();
  };
  int softmaxes = 0, matmuls = 0;
  for (size_t i = 0; i < nodes.size(); ++i) softmaxes += type(i) == "Softmax", matmuls += type(i) == "MatMul";
  if (softmaxes == 1 && matmuls == 2) return AttentionPolicyProblem(policy);
  if (type(0) != "Conv" && type(0) != "MatMul" && type(0) != "Gemm")
    return "descriptor: the subgraph's first node (" + type(0) + ") is not an anchor (Conv, MatMul, Gemm)";
  // A node whose constant operand is 0.044715: the cube's factor in GELU's tanh approximation.
  auto scales_cube = [&](size_t i) {
    const auto& n = nodes[i];
    if (!n.is_object() || !n.contains("op") || !n["op"].is_object() || !n["op"].contains("attr") || !n["op"]["attr"].is_object()) return false;
    for (const auto& [name, value] : n["op"]["attr"].items())
      if (name.rfind("const_input", 0) == 0 && value.is_array() && value.size() == 1 && value[0].is_number() &&
          std::fabs(value[0].get<double>() - 0.044715) < 1e-4)
        return true;
    return false;
  };
  // The Mul of x * Sigmoid(x) (SiLU): it reads a Sigmoid node and that Sigmoid's own input.
  auto completes_swish = [&](size_t i) {
    const auto& src = nodes[i].value("src", nlohmann::json::array());
    if (type(i) != "Mul" || !src.is_array() || src.size() != 2) return false;
    for (int side = 0; side < 2; ++side) {
      const std::string gate = src[side].is_string() ? src[side].get<std::string>() : "";
      if (gate.size() < 4 || gate[0] != 'n' || gate.substr(gate.size() - 2) != ":0") continue;
      const size_t j = std::strtoul(gate.c_str() + 1, nullptr, 10);
      if (j >= nodes.size() || type(j) != "Sigmoid" || !nodes[j].contains("src") || nodes[j]["src"].size() != 1) continue;
      if (nodes[j]["src"][0] == src[1 - side]) return true;
    }
    return false;
  };
  // Chain nodes are post-ops, or the five nodes of a GELU (Div, Erf, Add, Mul, Mul), one step, or
  // the nine of its tanh approximation (eight with Pow for the cube), one step, or SiLU's two
  // (Sigmoid, Mul), one step.
  int64_t chain = 0;
  for (size_t i = 1; i < nodes.size(); ++i) {
    if (type(i) == "Erf") chain -= 4;
    else if (completes_swish(i)) chain -= 1;
    else if (scales_cube(i)) chain -= 8;
    else if (type(i) == "Pow") chain += 1;  // one node fewer in that GELU
    else if (!IsOneDnnPostOp(type(i))) return "descriptor: chain node " + std::to_string(i) + " (" + type(i) + ") cannot run as a post-op";
    ++chain;
  }
  const Knob* fuse = nullptr;
  const Knob* impl = nullptr;
  for (const Knob& k : policy) {
    if (k.name == "fuse") fuse = &k;
    if (k.name == "impl") impl = &k;
  }
  if (!fuse) return std::string("the policy of ") + kFusedTemplateId + " has no knob 'fuse'";
  const auto* fused = std::get_if<int64_t>(&fuse->value);
  if (!fused || *fused < 0 || *fused > chain)
    return "knob 'fuse' = " + KnobValueText(fuse->value) + " is outside its domain for this subgraph (0 to " + std::to_string(chain) + ")";
  const auto* impl_text = impl ? std::get_if<std::string>(&impl->value) : nullptr;
  if (impl && (!impl_text || (*impl_text != "onednn" && *impl_text != "halide")))
    return "knob 'impl' = " + KnobValueText(impl->value) + " is outside its domain (onednn, halide)";
  const bool halide = impl_text && *impl_text == "halide";
  if (halide && *fused == 0) return "impl 'halide' fuses at least one step (fuse 0 is impl 'onednn': nothing fused)";
  if (halide && type(0) == "Conv") return "impl 'halide' fuses MatMul and Gemm anchors, not Conv";
  if (!halide && policy.size() > (impl ? 2u : 1u))
    return std::string("the oneDNN policy of ") + kFusedTemplateId + " is 'fuse' and 'impl' only";
  return {};
}


}  // namespace tilebank::engine
