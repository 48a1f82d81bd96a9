// exp(x) for x <= 0 as a Halide expression, on the constants and with the contract of
// engine/backends/simd/exp_non_positive_constants.h.
#pragma once

#include <Halide.h>

#include "engine/backends/simd/exp_non_positive_constants.h"

namespace tilebank::engine {

Halide::Expr ExpNonPositive(Halide::Expr x);

}  // namespace tilebank::engine
