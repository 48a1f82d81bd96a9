// `bank export --format aoe-gdat`: a bank's grad entries as AOE's <soc>_gradient_fusion.json,
//   [{"modelhash": "13576d811dcf5ef8",                  // the entry's repo_key
//     "modelvalue": {"gradientSize": [4000, ...],      // bytes of each gradient, in ready order
//                    "gradientTime": [0.96, ...],      // its ready time after the backward pass
//                                                      // starts, ms (empty when not kept)
//                    "splitIndex": [16, 51, 58, 61],   // each segment's last gradient, from 0
//                                                      // (HCCL's hcom_set_split_strategy_by_index)
//                    "verified": "measured"}}, ...]
// in key order. An entry whose policy does not check (GradPolicyProblem) is left out and counted.
#pragma once
#include <nlohmann/json.hpp>

#include "repo/bank.h"
#include "base/status.h"

namespace tilebank::engine {

struct AoeGradientFusion {
  nlohmann::json file = nlohmann::json::array();
  size_t left_out = 0;  // entries with a policy that does not check
};

Result<AoeGradientFusion> ExportAoeGradientFusion(const Snapshot& snapshot);

}  // namespace tilebank::engine
