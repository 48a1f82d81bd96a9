#include "engine/passes/pad_conv_fusion.h"

#include <optional>

#include "engine/ir/graph_uses.h"

namespace tilebank::engine::model {
namespace {

// The Pad's amounts ([begin per axis, end per axis]) when it pads with zeros in constant mode and
// names every axis; nullopt otherwise.
std::optional<std::vector<int64_t>> ZeroPads(const Graph& g, const Node& pad, size_t rank) {
  if (g.AttrString(pad, "mode", "constant") != "constant" || pad.inputs.empty()) return std::nullopt;
  std::vector<int64_t> pads;
  if (pad.inputs.size() >= 2 && pad.inputs[1] >= 0) {  // opset 11+: pads, constant_value and axes as inputs
    if (!g.IsConstant(pad.inputs[1])) return std::nullopt;
    const ConstTensor& c = *g.values[pad.inputs[1]].constant;
    for (int64_t i = 0; i < c.size(); ++i) pads.push_back(static_cast<int64_t>(c.At(i)));
    if (pad.inputs.size() >= 3 && pad.inputs[2] >= 0) {
      if (!g.IsConstant(pad.inputs[2]) || g.values[pad.inputs[2]].constant->size() != 1 || g.values[pad.inputs[2]].constant->At(0) != 0) return std::nullopt;
    }
    if (pad.inputs.size() >= 4 && pad.inputs[3] >= 0) return std::nullopt;  // axes: not taken
  } else {
    pads = g.AttrInts(pad, "pads", {});
    if (g.AttrFloat(pad, "value", 0.0f) != 0.0f) return std::nullopt;
  }
  if (pads.size() != 2 * rank) return std::nullopt;
  return pads;
}

// Whether `n` reads a border of zeros through its own pads as it would read them padded: a Conv
// without auto_pad, and an AveragePool that counts its pads into the average (or has none, so it
// can be told to) without ceil_mode (whose extra windows ONNX leaves out of the count).
bool TakesPadsOf(const Graph& g, const Node& n) {
  if (g.AttrString(n, "auto_pad", "NOTSET") != "NOTSET") return false;
  if (n.op_type == "Conv") return true;
  if (n.op_type != "AveragePool" || g.AttrInt(n, "ceil_mode", 0) != 0) return false;
  if (g.AttrInt(n, "count_include_pad", 0) != 0) return true;
  for (int64_t p : g.AttrInts(n, "pads", {}))
    if (p != 0) return false;
  return true;
}

}  // namespace

size_t FusePadIntoConvOrPool(Graph* g) {
  size_t fused = 0;
  std::vector<bool> drop(g->nodes.size(), false);
  const GraphUses u = UsesOf(*g);
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    const Node& pad = g->nodes[i];
    if (pad.op_type != "Pad" || pad.inputs.empty() || pad.inputs[0] < 0 || pad.outputs.size() != 1 || pad.outputs[0] < 0 || !u.Private(pad.outputs[0])) continue;
    const Value& x = g->values[pad.inputs[0]];
    if (!x.shape_known || x.shape.size() < 3 || x.shape.size() > 5 || x.kind != ValueKind::kTensor) continue;
    const size_t rank = x.shape.size(), spatial = rank - 2;
    const auto pads = ZeroPads(*g, pad, rank);
    if (!pads) continue;
    bool fits = (*pads)[0] == 0 && (*pads)[1] == 0 && (*pads)[rank] == 0 && (*pads)[rank + 1] == 0;
    for (int64_t p : *pads) fits &= p >= 0;
    Node& reader = g->nodes[u.readers[pad.outputs[0]][0]];
    if (!fits || !TakesPadsOf(*g, reader) || reader.inputs.empty() || reader.inputs[0] != pad.outputs[0]) continue;
    std::vector<int64_t> own_pads = g->AttrInts(reader, "pads", std::vector<int64_t>(2 * spatial, 0));
    if (own_pads.size() != 2 * spatial) continue;
    for (size_t d = 0; d < spatial; ++d) {
      own_pads[d] += (*pads)[2 + d];
      own_pads[spatial + d] += (*pads)[rank + 2 + d];
    }
    if (reader.op_type == "AveragePool") reader.attrs["count_include_pad"] = int64_t{1};
    reader.attrs["pads"] = own_pads;
    reader.inputs[0] = pad.inputs[0];
    drop[i] = true;
    ++fused;
  }
  if (fused) EraseNodes(g, [&](size_t i) { return drop[i]; });
  return fused;
}

}  // namespace tilebank::engine::model
