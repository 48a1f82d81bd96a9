#include "engine/catalog/builtin_choice.h"

#include <cstdlib>
#include <map>

#include "engine/catalog/template_registry.h"
#include "engine/backends/library_impls.h"
#include "engine/core/conv_problem.h"
#include "engine/core/op_semantics.h"
#include "engine/backends/op_template.h"
#include "engine/backends/halide/templates.h"

namespace tilebank::engine {

namespace {

// Op classes oneDNN runs faster than the primary template's analytical default, side by side on
// x86-64 with AVX2 or AVX-512 (bench/builtin_choice_bench.py; docs/PERFORMANCE.md, "Defaults").
// Every other class runs the primary template's default.
const std::map<std::string, bool>& OneDnnClasses() {
  static const std::map<std::string, bool> classes = {
      {"conv.depthwise", true}, {"conv.grouped", true},      {"conv.pointwise", true}, {"conv.spatial", true},
      {"matmul", true},         {"matmul.batched", true},    {"Gemm", true},           {"BatchMatMul", true},
      {"LayerNormalization", true}, {"Add", true},           {"Sub", true},            {"Mul", true},
      {"Div", true},            {"Softmax", false},          {"Gelu", false},
      {"MaxPool", true},        {"AveragePool", true},       {"GlobalAveragePool", true},
  };
  return classes;
}

}  // namespace

Result<DefaultPolicies> DefaultPoliciesFromEnvironment() {
  const char* value = std::getenv("TILEBANK_DEFAULT_POLICIES");
  if (!value || !*value || std::string(value) == "builtin") return DefaultPolicies::kBuiltin;
  if (std::string(value) == "template") return DefaultPolicies::kTemplate;
  if (std::string(value) == "onednn") return DefaultPolicies::kOneDnn;
  return Status::InvalidInput(std::string("TILEBANK_DEFAULT_POLICIES is '") + value + "': expected builtin, template or onednn");
}

std::string OpClassOf(const OpSpec& op) {
  if (op.op_type == "Conv") {
    auto p = AnalyzeConv(op);
    if (!p.ok()) return "Conv";
    if (p->G > 1) return p->Cg == 1 && p->OCg == 1 ? "conv.depthwise" : "conv.grouped";
    if (p->KH == 1 && p->KW == 1 && p->sh == 1 && p->sw == 1) return "conv.pointwise";
    return "conv.spatial";
  }
  if (op.op_type == "MatMul") return op.inputs.size() > 1 && op.inputs[1].shape.size() > 2 ? "matmul.batched" : "matmul";
  return op.op_type;
}

BuiltinChoice BuiltinChoiceFor(const OpSpec& op, DefaultPolicies mode) {
  auto templates = TemplatesFor(op);
  BuiltinChoice choice;
  if (!templates.ok()) return choice;
  choice.tmpl = templates->primary;
  choice.policy = templates->primary->DefaultPolicy(op);
  // The int8 ops' template picks among oneDNN's implementations; with no library at all it runs
  // the registry's reference kernel.
  if (IsQuantizedTunedOp(op.op_type) && mode == DefaultPolicies::kTemplate) choice.policy = MakePolicy({{"impl", std::string("reference")}});
  if (mode == DefaultPolicies::kTemplate || !OneDnnImpl().Supports(op).ok()) return choice;
  if (mode == DefaultPolicies::kBuiltin) {
    auto it = OneDnnClasses().find(OpClassOf(op));
    if (it == OneDnnClasses().end() || !it->second) return choice;
  }
  choice.tmpl = &OneDnnImpl();
  choice.policy = OneDnnImpl().DefaultPolicy(op);
  return choice;
}

}  // namespace tilebank::engine
