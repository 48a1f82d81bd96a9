// What the canonicalizer knows about operator types: spelling aliases (AOE/ATC names to ONNX
// names), the declared type of each known attribute, and ONNX default values, so that an
// attribute spelled out at its default and one left out give the same descriptor.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilebank {

enum class AttrType { kInt, kReal, kText, kIntList, kRealList, kTextList };

// How a default value is formed; some depend on the number of spatial dimensions of input 0.
enum class DefaultRule {
  kNone,        // no default: always kept
  kValue,       // the literal in `int_value` / `real_value` / `text_value`
  kOnesSpatial, // a list of 1s, one per spatial dimension (rank - 2)
  kZerosPads,   // a list of 0s, two per spatial dimension
};

struct AttrSpec {
  const char* name;
  AttrType type;
  DefaultRule rule;
  long long int_value = 0;
  double real_value = 0;
  const char* text_value = "";
  bool is_axis = false;  // negative values count from the end of input 0's rank
};

// The ONNX name for `op_type` ("Conv2D" -> "Conv", "LayerNorm" -> "LayerNormalization"),
// or `op_type` itself when it is not an alias.
std::string CanonicalOpType(std::string_view op_type);

// Known attributes of a canonical op type; empty for ops without attributes or unknown ops.
const std::vector<AttrSpec>& AttrSpecsOf(std::string_view canonical_op_type);

}  // namespace tilebank
