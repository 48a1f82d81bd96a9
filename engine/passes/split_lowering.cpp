#include "engine/passes/split_lowering.h"

#include <set>

namespace tilebank::engine::model {

namespace {

int AddIntConstant(Graph* g, const std::string& name, int64_t value) {
  Value v;
  v.name = name;
  v.shape = {1};
  v.dtype = "int64";
  v.constant = ConstTensor::Ints({1}, {value});
  g->values.push_back(std::move(v));
  return static_cast<int>(g->values.size() - 1);
}

}  // namespace

Status LowerSplits(Graph* g) {
  std::set<int> read(g->outputs.begin(), g->outputs.end());
  for (const Node& n : g->nodes) read.insert(n.inputs.begin(), n.inputs.end());
  std::vector<Node> nodes;
  for (Node& n : g->nodes) {
    bool static_shapes = !n.inputs.empty() && n.inputs[0] >= 0 && g->values[n.inputs[0]].shape_known;
    for (int out : n.outputs) static_shapes &= out < 0 || g->values[out].shape_known;
    // A Split of shapes known only at run time stays one node (the registry's kernel, several outputs).
    if (n.op_type != "Split" || !static_shapes || g->IsConstant(n.inputs[0])) {
      nodes.push_back(std::move(n));
      continue;
    }
    const std::vector<int64_t> in_shape = g->values[n.inputs[0]].shape;
    const int64_t axis = PositiveAxis(g->AttrInt(n, "axis", 0), in_shape.size());
    if (axis < 0 || axis >= static_cast<int64_t>(in_shape.size()))
      return Status::InvalidInput("node '" + n.name + "' (Split): axis " + std::to_string(g->AttrInt(n, "axis", 0)) + " is outside the input's rank " +
                                  std::to_string(in_shape.size()));
    int64_t offset = 0;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const int out = n.outputs[k];
      if (out < 0) continue;
      const std::vector<int64_t>& out_shape = g->values[out].shape;
      if (out_shape.size() != in_shape.size())
        return Status::InvalidInput("node '" + n.name + "' (Split): output " + std::to_string(k) + " has another rank than the input");
      const int64_t extent = out_shape[axis];
      if (read.count(out)) {
        Node slice;
        slice.name = n.name + "/part" + std::to_string(k);
        slice.op_type = "Slice";
        slice.inputs = {n.inputs[0], AddIntConstant(g, slice.name + ".starts", offset), AddIntConstant(g, slice.name + ".ends", offset + extent),
                        AddIntConstant(g, slice.name + ".axes", axis)};
        slice.outputs = {out};
        nodes.push_back(std::move(slice));
      }
      offset += extent;
    }
    if (offset != in_shape[axis])
      return Status::InvalidInput("node '" + n.name + "' (Split): its outputs cover " + std::to_string(offset) + " of the input's " +
                                  std::to_string(in_shape[axis]) + " along axis " + std::to_string(axis));
  }
  g->nodes = std::move(nodes);
  return Status::Ok();
}

}  // namespace tilebank::engine::model
