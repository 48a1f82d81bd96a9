// The engine's judgement of a bank entry's policy (repo/policy_check.h): the template it names is
// asked for its search space over the entry's own operator, and the policy must fit that space.
#pragma once
#include <string>

#include "repo/policy_check.h"

namespace tilebank::engine {

// Empty when valid or when the template is unknown to this build; else the problem, naming the knob.
std::string PolicyProblem(const Entry& entry);

// PolicyProblem as the bank library's PolicyCheck.
PolicyCheck EnginePolicyCheck();

}  // namespace tilebank::engine
