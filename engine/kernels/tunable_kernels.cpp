// The tunable implementations in the ops' tables: every op type each template is written for, in
// the order the built-in choice and the tuner consider them (the first Halide or SIMD template that
// takes an instance is its primary: the one Schedule mode tunes). One line per template.
#include "engine/backends/halide/templates.h"
#include "engine/backends/library_impls.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/onednn_int8_template.h"

namespace tilebank::engine::kernels {

void RegisterTunableKernels(KernelRegistry* r) {
  for (const OpTemplate* t : {&MatMulTemplate(), &BatchMatMulTemplate(), &GemmOpTemplate(), &ConvDirectTemplate(), &ConvIm2colTemplate(),
                              &SoftmaxTemplate(), &SoftmaxSimdTemplate(), &LayerNormTemplate(), &ReduceTemplate(), &ElementwiseTemplate(),
                              &PoolTemplate(), &OneDnnImpl(), &OpenBlasImpl(), &OneDnnInt8Template()})
    for (const std::string& op_type : t->OpTypes()) r->AddTunable(op_type, t);
}

}  // namespace tilebank::engine::kernels
