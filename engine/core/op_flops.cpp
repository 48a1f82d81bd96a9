#include "engine/core/op_flops.h"

#include "engine/core/gemm_problem.h"
#include "engine/core/op_semantics.h"

namespace tilebank::engine {
namespace {

double Elements(const std::vector<int64_t>& shape) {
  double n = 1;
  for (int64_t d : shape) n *= static_cast<double>(d);
  return n;
}

// Conv, FusedConv and ConvTranspose of 1 to 3 spatial axes, grouped or not: each output element of
// a convolution is C/group x kernel multiply-adds (W [M, C/group, k...]); each input element of a
// transposed one spreads over M/group x kernel outputs (W [C, M/group, k...]). 0 where a shape is
// not known.
double ConvFlops(const OpSpec& op) {
  if (op.inputs.size() < 2 || op.outputs.empty()) return 0.0;
  const std::vector<int64_t>&x = op.inputs[0].shape, &w = op.inputs[1].shape, &y = op.outputs[0].shape;
  if (w.size() < 3 || x.size() != w.size() || y.size() != w.size()) return 0.0;
  for (const auto* shape : {&x, &w, &y})
    for (int64_t d : *shape)
      if (d < 0) return 0.0;
  double taps = 1;
  for (size_t d = 2; d < w.size(); ++d) taps *= static_cast<double>(w[d]);
  return 2.0 * (op.op_type == "ConvTranspose" ? Elements(x) : Elements(y)) * static_cast<double>(w[1]) * taps;
}

}  // namespace

double OpFlops(const OpSpec& op) {
  if (op.op_type == "Conv" || op.op_type == "FusedConv" || op.op_type == "ConvTranspose") return ConvFlops(op);
  if (IsCubeOp(op.op_type)) {
    auto p = AnalyzeGemm(op);
    return p.ok() ? p->Flops() : 0.0;
  }
  return 0.0;
}

}  // namespace tilebank::engine
