#include "engine/catalog/policy_check.h"

#include <nlohmann/json.hpp>

#include "engine/catalog/template_registry.h"
#include "engine/backends/fused_policy.h"
#include "engine/backends/halide/halide_fused_gemm.h"
#include "engine/gdat/gdat_policy.h"
#include "engine/core/host_facts.h"
#include "engine/backends/op_template.h"
#include "repo/canonical.h"
#include "base/json_text.h"

namespace tilebank::engine {

namespace {

std::string Names(const SearchSpace& space) {
  std::string text;
  for (const auto& k : space.knobs) text += (text.empty() ? "" : ", ") + k.name;
  return text;
}

std::string DomainText(const KnobDomain& domain) {
  std::string text;
  for (const auto& v : domain.values) text += (text.empty() ? "" : ", ") + KnobValueText(v);
  return text;
}

bool SameValue(const KnobValue& a, const KnobValue& b) {
  if (a.index() == b.index()) return a == b;
  // A whole-number real read back from JSON matches an integer value.
  auto as_real = [](const KnobValue& v) -> std::optional<double> {
    if (auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
    if (auto* d = std::get_if<double>(&v)) return *d;
    return std::nullopt;
  };
  auto x = as_real(a), y = as_real(b);
  return x && y && *x == *y;
}

}  // namespace

std::string PolicyProblemAt(const OpTemplate& t, const OpSpec& op, const Policy& policy) {
  const std::string id = t.id();
  if (Status s = t.Supports(op); !s.ok()) return "template " + id + " cannot run this operator: " + s.message();
  const SearchSpace space = t.Space(op);
  if (space.size() == 0) {
    const Policy expected = t.DefaultPolicy(op);
    if (policy != expected) return "policy " + PolicyText(policy) + " is not " + id + "'s only policy " + PolicyText(expected);
    return {};
  }
  for (const Knob& k : policy)
    if (space.IndexOf(k.name) < 0) return "knob '" + k.name + "' is not a knob of " + id + " (its knobs: " + Names(space) + ")";
  for (const KnobDomain& domain : space.knobs) {
    auto it = std::find_if(policy.begin(), policy.end(), [&](const Knob& k) { return k.name == domain.name; });
    if (it == policy.end() && domain.unset) continue;
    if (it == policy.end()) return "knob '" + domain.name + "' of " + id + " is missing";
    const bool in_domain = std::any_of(domain.values.begin(), domain.values.end(), [&](const KnobValue& v) { return SameValue(v, it->value); });
    if (!in_domain)
      return "knob '" + domain.name + "' = " + KnobValueText(it->value) + " is outside its domain for this operator (" + DomainText(domain) + ")";
  }
  if (!space.valid(policy)) return "policy " + PolicyText(policy) + " breaks " + id + "'s constraints for this operator";
  return {};
}

namespace {

// An sgat.fused policy: its fuse and impl knobs, and with impl halide the anchor's GEMM knobs.
std::string FusedEntryProblem(const Entry& entry) {
  if (std::string problem = FusedPolicyProblem(entry.descriptor, entry.policy); !problem.empty()) return problem;
  const std::optional<FusedPolicy> policy = ParseFusedPolicy(entry.policy);  // FusedPolicyProblem checked fuse and impl
  if (!policy || policy->impl != "halide") return {};
  const nlohmann::json d = nlohmann::json::parse(entry.descriptor, nullptr, false);
  auto description = AtcDescriptionOfOp(DumpJson(d["nodes"][0]["op"]));
  if (!description.ok()) return "descriptor: the anchor: " + description.status().message();
  auto anchor = ParseOpSpec(*description, 0);
  if (!anchor.ok()) return "descriptor: the anchor: " + anchor.status().message();
  const OpTemplate* t = HalideGemmTemplateFor(*anchor);
  if (!t) return "impl 'halide': no Halide GEMM template runs the anchor";
  if (std::string problem = PolicyProblemAt(*t, *anchor, policy->anchor); !problem.empty()) return "the anchor's knobs: " + problem;
  return {};
}

}  // namespace

std::string PolicyProblem(const Entry& entry) {
  if (entry.template_id == kFusedTemplateId) {
    if (entry.kind != EntryKind::kGraph) return std::string("template ") + kFusedTemplateId + " runs subgraphs, not " + KindName(entry.kind) + " entries";
    return FusedEntryProblem(entry);
  }
  if (entry.template_id == kGradTemplateId) {
    if (entry.kind != EntryKind::kGrad) return std::string("template ") + kGradTemplateId + " splits gradients, not " + KindName(entry.kind) + " entries";
    return GradPolicyProblem(entry.descriptor, entry.policy);
  }
  const OpTemplate* t = TemplateById(entry.template_id);
  if (!t) return {};
  const std::string id = entry.template_id;
  if (entry.kind != EntryKind::kOp) return "template " + id + " runs single operators, not " + KindName(entry.kind) + " entries";
  auto description = AtcDescriptionOfOp(entry.descriptor);
  if (!description.ok()) return "descriptor: " + description.status().message();
  auto op = ParseOpSpec(*description, 0);
  if (!op.ok()) return "descriptor: " + op.status().message();
  return PolicyProblemAt(*t, *op, entry.policy);
}

PolicyCheck EnginePolicyCheck(const std::string& soc_version) {
  return [soc_version](const Entry& entry) {
    JudgedTarget target(soc_version);
    return PolicyProblem(entry);
  };
}

}  // namespace tilebank::engine
