#include "engine/core/channel_affine.h"

#include <cmath>

namespace tilebank::engine {

ChannelAffine BatchNormAsAffine(const std::vector<double>& gamma, const std::vector<double>& beta, const std::vector<double>& mean,
                                const std::vector<double>& var, double epsilon) {
  ChannelAffine a;
  for (size_t c = 0; c < gamma.size(); ++c) {
    a.scale.push_back(gamma[c] / std::sqrt(var[c] + epsilon));
    a.shift.push_back(beta[c] - mean[c] * a.scale.back());
  }
  return a;
}

}  // namespace tilebank::engine
