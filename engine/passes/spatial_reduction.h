// Reductions over every spatial axis of [N, C, spatial...]: PointNet's max over its points, a torch
// `x.mean((2, 3))`. ReduceMax and ReduceMean of that form are global pools, which the layout plan
// (engine/runtime/layout_plan.h) runs in whatever layout family the producer writes, so that the
// convolution before one keeps its channels-last or blocked output. For that, a reduction reading a
// Reshape that regroups only the spatial axes (conv1d_lifting.h's way back to 1-D) is rewritten to
// read the Reshape's input, reducing its spatial axes instead.
#pragma once
#include <cstddef>

#include "engine/ir/graph.h"

namespace tilebank::engine::model {

// Whether node `n` is a Reduce* op over exactly the axes 2.. of a float32 input of static shape,
// rank 3 to 5, with some spatial element (its axes attribute or constant axes input).
bool ReducesEverySpatialAxis(const Graph& g, const Node& n);

// Whether node `n` is a Reduce* op over exactly the channel axis (1) of such an input: a CBAM
// spatial attention's mean and max over channels.
bool ReducesChannelAxis(const Graph& g, const Node& n);

// Rewrites `graph` in place (after conv1d_lifting.h); returns how many reductions now read past a
// Reshape. A reduction keeping its dims writes the Reshape input's rank, reshaped back after it.
size_t LiftSpatialReductions(Graph* graph);

}  // namespace tilebank::engine::model
