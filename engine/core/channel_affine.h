// Inference BatchNormalization as a per-channel affine map y = x * scale[c] + shift[c]: what
// constant folding folds into a convolution, the layout plan applies per channel and the arena
// kernel runs.
#pragma once
#include <vector>

namespace tilebank::engine {

struct ChannelAffine {
  std::vector<double> scale, shift;
};

// scale = gamma / sqrt(var + epsilon), shift = beta - mean * scale; the four have one value per channel.
ChannelAffine BatchNormAsAffine(const std::vector<double>& gamma, const std::vector<double>& beta, const std::vector<double>& mean,
                                const std::vector<double>& var, double epsilon);

}  // namespace tilebank::engine
