#include "engine/passes/batch_norm_affine.h"

#include <string>

namespace tilebank::engine::model {

bool InferenceBatchNorm(const Graph& g, const Node& n) {
  if (n.op_type != "BatchNormalization" || n.inputs.size() != 5 || n.inputs[0] < 0 || n.outputs.empty() || n.outputs[0] < 0) return false;
  for (size_t k = 1; k < n.outputs.size(); ++k)
    if (n.outputs[k] >= 0) return false;
  return g.AttrInt(n, "training_mode", 0) == 0;
}

Result<ChannelAffine> BatchNormAffine(const Graph& g, const Node& n, int64_t channels) {
  std::vector<std::vector<double>> p;  // scale, bias, mean, variance
  for (size_t i = 1; i < 5; ++i) {
    const int v = i < n.inputs.size() ? n.inputs[i] : -1;
    if (v < 0 || !g.IsConstant(v) || g.values[v].constant->size() != channels)
      return Status::InvalidInput("node '" + n.name + "' (" + n.op_type + "): scale, bias, mean and variance must be " +
                                  std::to_string(channels) + " constants");
    const ConstTensor& c = *g.values[v].constant;
    std::vector<double> values(c.size());
    for (int64_t k = 0; k < c.size(); ++k) values[k] = c.At(k);
    p.push_back(std::move(values));
  }
  return BatchNormAsAffine(p[0], p[1], p[2], p[3], g.AttrFloat(n, "epsilon", 1e-5f));
}

}  // namespace tilebank::engine::model
