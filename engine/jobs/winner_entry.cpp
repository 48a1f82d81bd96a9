#include "engine/jobs/winner_entry.h"

#include <utility>

#include "engine/core/template_catalog.h"
#include "repo/provenance.h"

namespace tilebank::engine {

WinnerTemplate EngineTemplate(const std::string& template_id, std::vector<Knob> policy) {
  return {template_id, EngineTemplateVersions()(template_id).value_or(0), TuneMode::kImpl, std::move(policy)};
}

Entry WinnerEntry(EntryKind kind, const std::string& op_type, const std::string& descriptor, WinnerTemplate how,
                  const Measurement& before, const Measurement& after, int trials, const std::string& strategy,
                  const std::string& bank_id) {
  Entry e;
  e.kind = kind;
  e.op_type = op_type;
  e.descriptor = descriptor;
  e.template_id = std::move(how.id);
  e.template_version = how.version;
  e.tune_mode = how.mode;
  e.policy = std::move(how.policy);
  e.before = before;
  e.after = after;
  e.trials = static_cast<uint32_t>(trials);
  e.strategy = strategy;
  StampProvenance(&e, bank_id);
  return e;
}

}  // namespace tilebank::engine
