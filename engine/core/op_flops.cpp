#include "engine/core/op_flops.h"

#include "engine/core/conv_problem.h"
#include "engine/core/gemm_problem.h"
#include "engine/core/op_semantics.h"

namespace tilebank::engine {

double OpFlops(const OpSpec& op) {
  if (op.op_type == "Conv") {
    auto p = AnalyzeConv(op);
    return p.ok() ? p->Flops() : 0.0;
  }
  if (IsCubeOp(op.op_type)) {
    auto p = AnalyzeGemm(op);
    return p.ok() ? p->Flops() : 0.0;
  }
  return 0.0;
}

}  // namespace tilebank::engine
