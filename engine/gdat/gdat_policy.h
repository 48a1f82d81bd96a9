// GDAT's grad entries: template gdat.split, version 1. Knobs:
//   ends            "3,10,161": each segment's end (exclusive) in the gradients' ready order
//   segment_bytes   "1048576,...": each segment's size
//   hangover_ms     the plan's hangover; baseline_hangover_ms PyTorch DDP's default plan's
//   verified        "model" (predicted by the fitted cost model) or "measured" (in the running job)
//   ready_ms        "0.8,1.25,...": each gradient's ready time after the backward pass starts, as
//                   recorded (AOE's gradient_fusion.json keeps them beside the sizes)
// The entry's before/after (microseconds) are DDP's default plan and this plan: the median
// training iteration when verified "measured", the backward pass start to the last AllReduce done
// predicted by the model when verified "model".
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "engine/core/search_space.h"
#include "repo/entry.h"

namespace tilebank::engine {

inline constexpr const char* kGradTemplateId = "gdat.split";

struct GradPolicy {
  std::vector<size_t> ends;
  std::vector<int64_t> segment_bytes;
  std::vector<double> ready_ms;  // empty in entries written before it was kept
  double hangover_ms = 0, baseline_hangover_ms = 0;
  std::string verified = "model";
  Policy Knobs() const;  // sorted by name
};

// What is wrong with a grad entry's gdat.split policy for its descriptor ("" when nothing): ends
// that do not increase or do not finish at the gradient count, sizes that do not add up.
std::string GradPolicyProblem(const std::string& descriptor, const Policy& policy);
// The policy of a gdat.split entry (nullopt when GradPolicyProblem has something to say).
std::optional<GradPolicy> ParseGradPolicy(const Entry& entry);

}  // namespace tilebank::engine
