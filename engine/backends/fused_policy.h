// SGAT's graph entries: template sgat.fused, a subgraph (engine/passes/partition.h) whose anchor runs
// with the first `fuse` steps of its chain inside it (a GELU's five nodes are one step). fuse 0
// runs the subgraph unfused, in place of the executor's built-in fusion.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "engine/core/search_space.h"
#include "repo/entry.h"

namespace tilebank::engine {

inline constexpr const char* kFusedTemplateId = "sgat.fused";

// An sgat.fused policy. impl "onednn": the anchor in oneDNN with the steps as post-ops
// (engine/backends/onednn/onednn_post_ops.h); impl "halide": the anchor's GEMM template under the
// `anchor` knobs, the steps in its epilogue (engine/backends/halide/halide_fused_gemm.h); impl "attention":
// an attention block as one kernel, `anchor` its tile knobs (engine/backends/onednn/attention_kernel.h).
struct FusedPolicy {
  int fuse = 0;
  std::string impl = "onednn";
  Policy anchor;
  // As stored: fuse, impl and the anchor's knobs, sorted by name.
  Policy Knobs() const;
};

// The first `fuse` steps in oneDNN as post-ops (0: nothing fused).
inline FusedPolicy OneDnnFusion(int fuse) { return FusedPolicy{fuse, "onednn", {}}; }

// Stored knobs as a FusedPolicy; nullopt without an integer `fuse` or with an unknown `impl`.
std::optional<FusedPolicy> ParseFusedPolicy(const Policy& policy);
// The policy of an sgat.fused entry of this build's template version; nullopt for another
// template, a stale version or a policy ParseFusedPolicy refuses.
std::optional<FusedPolicy> CurrentFusedPolicy(const Entry& entry);

// What is wrong with a graph entry's sgat.fused policy for its descriptor ("" when nothing). The
// anchor knobs of impl "halide" are checked against the anchor's template by bank validate
// (engine/catalog/policy_check.h).
std::string FusedPolicyProblem(const std::string& descriptor, const std::vector<Knob>& policy);

}  // namespace tilebank::engine
