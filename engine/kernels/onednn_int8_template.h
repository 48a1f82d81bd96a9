// int8.onednn: the tuned form of the registry's QLinearConv and QLinearMatMul kernels. Its one knob,
// `impl`, names the oneDNN implementation (among those this host's oneDNN offers for the instance).
#pragma once
#include "engine/backends/op_template.h"

namespace tilebank::engine {

const OpTemplate& OneDnnInt8Template();

}  // namespace tilebank::engine
