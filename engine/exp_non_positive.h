// exp(x) for x <= 0 (Softmax's exp(x - max)) in fewer vector operations than Halide's general
// exp: no overflow handling, a degree-6 polynomial on [-ln2/2, ln2/2]. Contract: for
// -87.3 <= x <= 0 the relative error is below 1e-6; below -87.3 (and for -inf) the result is 0.
#pragma once

#include <Halide.h>

namespace tilebank::engine {

Halide::Expr ExpNonPositive(Halide::Expr x);

}  // namespace tilebank::engine
