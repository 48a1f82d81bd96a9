// Structural re-parameterization at load (RepVGG, ACNet, MobileOne, YOLOv6/v7 blocks as trained
// and exported): branches that convolve the same input and are summed become one convolution. An
// Add of two convolutions of x (constant weights, the same groups, strides and dilations, the
// smaller filter centred in the larger by the pads) becomes one whose filter is their sum; an Add of
// a convolution of x and an inference BatchNormalization of x (channels in = out, stride 1, an odd
// filter padded to keep the size) adds the BatchNormalization's per-channel scale at the filter's
// centre and its shift to the bias. (x + conv(x) stays: the convolution adds a residual as it writes.) Repeated until none is left, so a block's three
// branches become one convolution (which its Relu then fuses into).
#pragma once
#include <cstddef>

#include "engine/ir/graph.h"

namespace tilebank::engine::model {

// Returns how many Adds were folded away.
size_t MergeParallelConvs(Graph* g);

}  // namespace tilebank::engine::model
