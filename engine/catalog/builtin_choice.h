// What an operator runs with when the bank holds nothing for it: the built-in choice of its op
// class (AOE's built-in repository under the custom one). The table in builtin_choice.cpp says,
// per op class, whether oneDNN or the primary Halide template's analytical default runs it; it
// comes from bench/builtin_choice_bench.py, which times both for every op class of a set of models
// side by side (docs/PERFORMANCE.md, "Defaults").
#pragma once
#include <string>

#include "engine/core/op_spec.h"
#include "engine/core/search_space.h"

namespace tilebank::engine {

class OpTemplate;

// TILEBANK_DEFAULT_POLICIES: "builtin" (the table, the default), "template" (the primary template's
// default everywhere, as before the table) or "onednn" (oneDNN wherever it runs the op): the
// benchmark compares them. Any other value is refused by the caller with the name of the variable.
enum class DefaultPolicies { kBuiltin, kTemplate, kOneDnn };
Result<DefaultPolicies> DefaultPoliciesFromEnvironment();

// The op's class in the table, from its description alone (the bank's key): "conv.depthwise",
// "conv.grouped", "conv.pointwise" (1x1, stride 1), "conv.spatial", "matmul" (a 2-D right operand),
// "matmul.batched", or the op type for the rest.
std::string OpClassOf(const OpSpec& op);

struct BuiltinChoice {
  const OpTemplate* tmpl = nullptr;
  Policy policy;
};

// The choice for `op` under `mode`; `op` must be one TemplatesFor accepts.
BuiltinChoice BuiltinChoiceFor(const OpSpec& op, DefaultPolicies mode);

}  // namespace tilebank::engine
