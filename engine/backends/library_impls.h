// The library implementations, one function per implementation: oneDNN and OpenBLAS (their
// one policy is the library's own choice) and the hand-written Highway Softmax. Each is an
// OpTemplate (engine/backends/op_template.h), so the tuner measures them beside the templates.
#pragma once
#include "engine/backends/op_template.h"

namespace tilebank::engine {

const OpTemplate& SoftmaxSimdTemplate();   // softmax.simd (impl/softmax_simd_template.cpp)
const OpTemplate& OneDnnImpl();            // impl.onednn
const OpTemplate& OpenBlasImpl();          // impl.openblas

}  // namespace tilebank::engine
