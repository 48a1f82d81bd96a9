// A data-parallel training job's gradient profile, what GDAT plans from: the gradients in the order
// they become ready in the backward pass (size, dtype, ready time), the cluster (world size, ranks
// per node, communicator) and the communicator's AllReduce time across message sizes. Recorded by
// the Python adapter (python/tilebank/torch.py) or written by hand; read by `tune -j 4 --gradients`.
//
// File (JSON):
//   {"model": "resnet50", "world_size": 2, "ranks_per_node": 1,
//    "communicator": {"backend": "gloo", "transport": "tcp"},
//    "iterations": 4,                       // iterations the ready times are the median of
//    "backward_ms": 30.5,                   // backward pass start to the last gradient ready
//    "gradients": [{"name": "fc.bias", "numel": 1000, "type": "float32", "ready_ms": 0.8}, ...],
//    "allreduce": [{"bytes": 4, "ms": 0.11}, {"bytes": 1048576, "ms": 0.7}, ...]}
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tilebank::engine {

struct GradientRecord {
  std::string name;
  int64_t numel = 0;
  std::string dtype = "float32";
  int64_t bytes = 0;      // numel x the dtype's size
  double ready_ms = 0;    // after the backward pass starts; non-decreasing along the list
};

struct AllReducePoint {
  int64_t bytes = 0;
  double ms = 0;
};

struct GradientProfile {
  std::string model;
  int world_size = 1, ranks_per_node = 1;
  std::string backend = "gloo", transport = "tcp";
  int iterations = 0;
  double backward_ms = 0;
  std::vector<GradientRecord> gradients;  // in ready order
  std::vector<AllReducePoint> allreduce;  // by size
  int64_t TotalBytes() const;
};

// Bytes per element of a gradient's dtype (canonical spelling: float32, float16, bfloat16,
// float64, int32, int64); 0 for a dtype gradients do not have.
int64_t GradientDtypeBytes(const std::string& dtype);

// kInvalidInput naming the file and the field for anything missing or wrong: an empty gradient
// list, a negative size, ready times that go back, an AllReduce sweep with fewer than two sizes.
Result<GradientProfile> ReadGradientProfile(const std::string& path);
Result<GradientProfile> GradientProfileFromJson(const nlohmann::json& j, const std::string& where);
nlohmann::json GradientProfileJson(const GradientProfile& profile);

// The bank's description of the problem (repo/canonical.h, gradient fusion problem): sizes and
// dtypes in ready order, world size, ranks per node and communicator; not the times.
nlohmann::json GradProblemDescription(const GradientProfile& profile);

// What a profile is called in results: its model, else the name of its file without extension.
std::string ProfileName(const GradientProfile& profile, const std::string& path);

}  // namespace tilebank::engine
