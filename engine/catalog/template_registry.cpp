#include "engine/catalog/template_registry.h"

#include <algorithm>
#include <set>

#include "engine/backends/library_impls.h"
#include "engine/catalog/onednn_int8_template.h"
#include "engine/core/op_semantics.h"
#include "engine/backends/halide/templates.h"

namespace tilebank::engine {

namespace {

std::vector<const OpTemplate*> AllTemplates() {
  return {&MatMulTemplate(), &BatchMatMulTemplate(), &GemmOpTemplate(), &ConvDirectTemplate(), &ConvIm2colTemplate(),
          &SoftmaxTemplate(), &SoftmaxSimdTemplate(), &LayerNormTemplate(),
          &ReduceTemplate(), &ElementwiseTemplate(), &PoolTemplate(), &OneDnnImpl(), &OpenBlasImpl(), &OneDnnInt8Template()};
}

}  // namespace

Result<OpTemplates> TemplatesFor(const OpSpec& op) {
  // The int8 ops' operands are 8-bit, int32 and float32 by definition; every other template runs float32.
  if (!IsQuantizedTunedOp(op.op_type))
    for (const auto& in : op.inputs)
      if (in.dtype != "float32") return Status::InvalidInput(op.name + " (" + op.op_type + "): dtype " + in.dtype + " is not supported yet (float32 only)");
  OpTemplates found;
  Status first_refusal;
  for (const OpTemplate* t : AllTemplates()) {
    if (!t->Implements(op.op_type)) continue;
    Status s = t->Supports(op);
    if (!s.ok()) {
      if (first_refusal.ok()) first_refusal = s;
      continue;
    }
    if (!found.primary && std::string(t->id()).rfind("impl.", 0) != 0) found.primary = t;
    else found.alternatives.push_back(t);
  }
  if (!found.primary) {
    if (!first_refusal.ok()) return first_refusal;
    return Status::InvalidInput(op.name + ": operator type " + op.op_type + " is not supported");
  }
  return found;
}

const OpTemplate* TemplateById(const std::string& id) {
  for (const OpTemplate* t : AllTemplates())
    if (id == t->id()) return t;
  return nullptr;
}

std::vector<std::string> SupportedOpTypes() {
  std::set<std::string> types;
  for (const OpTemplate* t : AllTemplates())
    for (auto& type : t->OpTypes()) types.insert(std::move(type));
  return {types.begin(), types.end()};
}

bool Implements(const std::string& op_type) {
  const auto types = SupportedOpTypes();
  return std::binary_search(types.begin(), types.end(), op_type);
}

}  // namespace tilebank::engine
