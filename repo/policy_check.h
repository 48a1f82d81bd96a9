// Whether an entry's policy is one a kernel can run: its knobs are exactly those of the template
// it names, each value inside the knob's domain, the whole policy within the template's
// constraints. Only the engine knows templates, so the bank library takes the judgement as a
// function (as it takes TemplateVersions) and runtimes need not link the engine.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "repo/bank.h"

namespace tilebank {

// Empty when the policy is valid, or when the entry's template is unknown to this build (validate
// reports unknown templates through StaleReason); otherwise what is wrong, naming the knob.
using PolicyCheck = std::function<std::string(const Entry& entry)>;

// kRefused naming `source`, the first entry whose policy is invalid and why; Ok when every
// policy is valid or `check` is empty.
Status RefuseInvalidPolicies(const std::vector<Entry>& entries, const PolicyCheck& check, const std::string& source);
Status RefuseInvalidPolicies(const Snapshot& snapshot, const PolicyCheck& check, const std::string& source);

}  // namespace tilebank
