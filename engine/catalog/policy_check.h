// The engine's judgement of a bank entry's policy (repo/policy_check.h): the template it names is
// asked for its search space over the entry's own operator, and the policy must fit that space.
#pragma once
#include <string>

#include "engine/core/op_spec.h"
#include "engine/core/search_space.h"
#include "repo/policy_check.h"

namespace tilebank::engine {

// Empty when valid or when the template is unknown to this build; else the problem, naming the knob.
// Judged against Host(): the code-generation target, or a JudgedTarget's.
std::string PolicyProblem(const Entry& entry);

class OpTemplate;
// What is wrong with running `op` under template `t` with `policy` ("" when nothing): a policy
// stored for another shape (the nearest entry) must fit this shape's space.
std::string PolicyProblemAt(const OpTemplate& t, const OpSpec& op, const Policy& policy);

// PolicyProblem as the bank library's PolicyCheck for entries of a bank of `soc_version`: each is
// judged against the target that soc_version names (JudgedTarget), whatever this host is.
PolicyCheck EnginePolicyCheck(const std::string& soc_version);

}  // namespace tilebank::engine
