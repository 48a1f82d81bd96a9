// Which tunable implementations of the ops' tables (engine/kernels/kernel_registry.h) run an op
// instance, split as the tuning modes use them.
#pragma once
#include <string>
#include <vector>

#include "engine/backends/op_template.h"

namespace tilebank::engine {

// The templates that can run an op: the Halide or SIMD template tuned in Schedule and Format modes,
// and the alternatives Impl mode chooses among (other templates, oneDNN, OpenBLAS), in table order.
struct OpTemplates {
  const OpTemplate* primary = nullptr;
  std::vector<const OpTemplate*> alternatives;
};
// kInvalidInput naming the op when no tunable implementation takes it.
Result<OpTemplates> TemplatesFor(const OpSpec& op);
const OpTemplate* TemplateById(const std::string& id);
// Whether some tunable implementation exists for `op_type`, and every such type, sorted.
bool Implements(const std::string& op_type);
std::vector<std::string> SupportedOpTypes();

}  // namespace tilebank::engine
