// GEMMs whose rows are known only at run time (a mixture-of-experts' experts on the tokens routed to
// them, models exported with a dynamic batch or sequence): a Gemm (transA 0, alpha and beta 1) or a
// MatMul whose B is a constant matrix, with its bias (Gemm's C, or the Add of a constant row after a
// MatMul) and the activation after it (Relu, Sigmoid, Tanh, GELU in its erf or tanh form, SiLU), becomes
// one FusedGemm node: tilebank's own op, inputs A, B and the bias (optional), attributes transB and
// "activation" (Relu, Sigmoid, Tanh, Gelu, GeluTanh, Swish or none). Its kernel
// (engine/kernels/onednn_gemm_kernel.h) keeps B packed in the layout oneDNN's matmul wants and runs
// the activation as the primitive's post-op, where the registry ran sgemm on B as given and one kernel
// per activation node. Nodes of static output shape are left to SGAT's partition (the executor's
// fused subgraphs); only float32 nodes are fused.
#pragma once
#include <cstddef>

#include "engine/ir/graph.h"

namespace tilebank::engine::model {

// Rewrites `graph` in place (after constant folding); returns how many GEMMs it fused.
size_t FuseDynamicGemm(Graph* graph);

}  // namespace tilebank::engine::model
