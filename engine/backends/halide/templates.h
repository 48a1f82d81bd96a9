// The Halide template instances, one function per template (defined in engine/backends/halide/*_template.cpp);
// the library implementations are in engine/backends/library_impls.h.
#pragma once
#include "engine/backends/op_template.h"

namespace tilebank::engine {

const OpTemplate& MatMulTemplate();        // matmul.tiled
const OpTemplate& BatchMatMulTemplate();   // batch_matmul.tiled
const OpTemplate& GemmOpTemplate();        // gemm.tiled
const OpTemplate& ConvDirectTemplate();    // conv2d.direct
const OpTemplate& ConvIm2colTemplate();    // conv2d.im2col
const OpTemplate& SoftmaxTemplate();       // softmax.rowwise
const OpTemplate& LayerNormTemplate();     // layernorm.rowwise
const OpTemplate& ReduceTemplate();        // reduce.generic
const OpTemplate& ElementwiseTemplate();   // elementwise.generic
const OpTemplate& PoolTemplate();          // pool2d.generic

}  // namespace tilebank::engine
