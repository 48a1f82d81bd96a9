#include "engine/backends/op_template.h"

#include <algorithm>

#include "engine/backends/halide/builder.h"
#include "engine/backends/halide/halide_program.h"
#include "engine/backends/halide/halide_target.h"
#include "engine/core/host_facts.h"
#include "engine/core/template_catalog.h"

namespace tilebank::engine {

uint32_t OpTemplate::version() const { return EngineTemplateVersions()(id()).value_or(0); }

bool OpTemplate::Implements(const std::string& op_type) const {
  const auto types = OpTypes();
  return std::find(types.begin(), types.end(), op_type) != types.end();
}

Status OpTemplate::Supports(const OpSpec& op) const {
  if (!Implements(op.op_type)) return Status::InvalidInput(std::string(id()) + " does not implement " + op.op_type);
  return SupportsInstance(op);
}

Result<std::unique_ptr<Kernel>> HalideTemplate::Build(const OpSpec& op, const Policy& policy) const {
  uint64_t key = CompileKey(id(), version(), op.canonical.text, PolicyText(policy), HostHalideTargetId());
  if (auto prebuilt = SharedBuilder().Prebuilt(key)) return std::move(prebuilt);
  auto program = SharedBuilder().Compile(key, [&] { return Define(op, policy); });
  if (!program.ok()) return program.status();
  return std::unique_ptr<Kernel>(new HalideKernel(program.value()));
}

}  // namespace tilebank::engine
