#include "engine/catalog/template_registry.h"


#include "engine/core/op_semantics.h"
#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine {

Result<OpTemplates> TemplatesFor(const OpSpec& op) {
  // The int8 ops' operands are 8-bit, int32 and float32 by definition; every other template runs float32.
  if (!IsQuantizedTunedOp(op.op_type))
    for (const auto& in : op.inputs)
      if (in.dtype != "float32") return Status::InvalidInput(op.name + " (" + op.op_type + "): dtype " + in.dtype + " is not supported yet (float32 only)");
  OpTemplates found;
  Status first_refusal;
  for (const OpTemplate* t : kernels::KernelRegistry::Default().Tunables(op.op_type)) {
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

const OpTemplate* TemplateById(const std::string& id) { return kernels::KernelRegistry::Default().TunableById(id); }

std::vector<std::string> SupportedOpTypes() { return kernels::KernelRegistry::Default().TunableOpTypes(); }

bool Implements(const std::string& op_type) { return !kernels::KernelRegistry::Default().Tunables(op_type).empty(); }

}  // namespace tilebank::engine
