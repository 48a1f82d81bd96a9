#include "engine/passes/batch_norm_affine.h"

#include <cmath>
#include <string>

namespace tilebank::engine::model {

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
  const double eps = g.AttrFloat(n, "epsilon", 1e-5f);
  ChannelAffine a;
  for (int64_t c = 0; c < channels; ++c) {
    a.scale.push_back(p[0][c] / std::sqrt(p[3][c] + eps));
    a.shift.push_back(p[1][c] - p[2][c] * a.scale.back());
  }
  return a;
}

}  // namespace tilebank::engine::model
