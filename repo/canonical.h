// Canonical descriptors: the normalized text whose xxh3-64 is an entry's key.
//
// Operator: an element of an ATC single-op list,
//   {"op", "input_desc": [{"format","shape","type"}], "output_desc": [...], "attr": [{"name","type","value"}]}
// becomes compact JSON with sorted keys:
//   {"attr":{...},"in":[{"dtype","format","shape"}],"op":"MatMul","out":[...]}
// Op-type aliases map to ONNX names, dtypes to one spelling, formats to upper case (missing: ND),
// attributes are typed, negative axes are made positive, and attributes at their default are dropped.
//
// Subgraph: {"nodes": [{"name", "op", "input_desc", "output_desc", "attr", "inputs": ["node[:k]" | graph-input]}]}
// becomes {"nodes":[{"op":<op descriptor>,"src":["n<i>:<k>" | "g<j>"]}]} in a canonical topological
// order that depends on neither node names nor the order the nodes are listed in.
//
// Gradient fusion problem: {"gradients": [{"shape": [...], "type"} | {"numel": N, "type"}], "world_size": N,
// optionally "ranks_per_node": R, "communicator": {"backend", "transport"}}
// becomes {"communicator":{...},"grads":[{"dtype","numel"}],"ranks_per_node":R,"world_size":N} (ready
// order is kept: it matters; the optional fields only when given).
#pragma once
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "repo/key.h"
#include "base/status.h"

namespace tilebank {

struct CanonicalDescriptor {
  EntryKind kind = EntryKind::kOp;
  std::string op_type;  // ONNX op type; for subgraphs the sorted distinct types joined by '+'
  std::string text;     // the canonical descriptor
  Key key = 0;          // KeyOfDescriptor(text)
};

Result<CanonicalDescriptor> CanonicalizeOp(const nlohmann::json& atc_op);
Result<CanonicalDescriptor> CanonicalizeGraph(const nlohmann::json& graph);
Result<CanonicalDescriptor> CanonicalizeGrad(const nlohmann::json& problem);
// Picks by shape: "op" -> operator, "nodes" -> subgraph, "gradients" -> gradient problem.
Result<CanonicalDescriptor> CanonicalizeDescription(const nlohmann::json& description);

// Reads a stored canonical descriptor back as a description and canonicalizes it again: for a
// descriptor in canonical form the result's text is the input, which is what validate checks.
Result<CanonicalDescriptor> Recanonicalize(EntryKind kind, const std::string& canonical_text);

// The ATC single-op description of a canonical op descriptor (what the engine's op parser reads).
Result<nlohmann::json> AtcDescriptionOfOp(const std::string& canonical_op_text);

// The descriptor of an op with every shape replaced by its rank: entries that share it differ
// only in shape sizes, which is what `query --fallback nearest` searches among.
std::string ShapeClassOf(const std::string& canonical_op_text);
// The shape_class index key of an op descriptor: the xxh3-64 of its shape class.
inline Key ShapeClassKey(const std::string& canonical_op_text) { return KeyOfDescriptor(ShapeClassOf(canonical_op_text)); }

}  // namespace tilebank
