// Every template and library implementation the engine has, and which of them run an operator.
#pragma once
#include <string>
#include <vector>

#include "engine/backends/op_template.h"

namespace tilebank::engine {

// The templates that can run an op: the Halide template tuned in Schedule and Format modes, and
// the alternatives Impl mode chooses among (other templates, oneDNN, OpenBLAS).
struct OpTemplates {
  const OpTemplate* primary = nullptr;
  std::vector<const OpTemplate*> alternatives;
};
// kInvalidInput naming the op when no template supports it.
Result<OpTemplates> TemplatesFor(const OpSpec& op);
const OpTemplate* TemplateById(const std::string& id);
// Whether some template implements `op_type`, and every such type, sorted.
bool Implements(const std::string& op_type);
std::vector<std::string> SupportedOpTypes();

}  // namespace tilebank::engine
