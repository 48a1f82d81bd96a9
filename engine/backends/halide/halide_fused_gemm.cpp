#include "engine/backends/halide/halide_fused_gemm.h"

#include <map>
#include <memory>

#include "engine/backends/halide/builder.h"
#include "engine/backends/halide/halide_program.h"
#include "engine/backends/halide/halide_target.h"
#include "engine/backends/fused_policy.h"
#include "engine/backends/onednn/onednn_post_ops.h"
#include "engine/core/gemm_problem.h"
#include "engine/core/host_facts.h"
#include "engine/backends/halide/gemm_program.h"
#include "engine/backends/halide/halide_math.h"
#include "engine/backends/op_template.h"
#include "engine/backends/halide/templates.h"

namespace tilebank::engine {

using namespace Halide;

namespace {

std::string StepsText(const std::vector<ChainStep>& ops) {
  std::string text;
  for (const ChainStep& op : ops) {
    text += op.op_type + "(" + std::to_string(op.alpha) + "," + std::to_string(op.beta);
    for (int64_t d : op.operand_shape) text += "," + std::to_string(d);
    text += ")";
  }
  return text;
}

}  // namespace

const OpTemplate* HalideGemmTemplateFor(const OpSpec& anchor) {
  for (const OpTemplate* t : {&MatMulTemplate(), &BatchMatMulTemplate(), &GemmOpTemplate()})
    if (t->Supports(anchor).ok()) return t;
  return nullptr;
}

Result<std::unique_ptr<Kernel>> HalideFusedGemmKernel(const OpSpec& anchor, const Policy& anchor_policy, const std::vector<ChainStep>& post_ops) {
  const OpTemplate* t = HalideGemmTemplateFor(anchor);
  if (!t) return Status::InvalidInput("no Halide GEMM template runs " + anchor.name + " (" + anchor.op_type + ")");
  const std::vector<int64_t>& out = anchor.outputs[0].shape;
  // A product whose A alone has a batch takes that batch as more rows (gemm_problem.h): its program
  // runs M = batch x rows with a batch of 1, and an operand must be read the same way.
  const GemmProblem problem = AnalyzeGemm(anchor).value();
  const bool rows_folded = out.size() > 2 && problem.batch == 1 && problem.M != out[out.size() - 2];
  std::vector<std::vector<int>> extents(post_ops.size());
  for (size_t i = 0; i < post_ops.size(); ++i) {
    if (!IsOneDnnPostOp(post_ops[i].op_type)) return Status::InvalidInput("no fused epilogue step for " + post_ops[i].op_type);
    if (!post_ops[i].has_operand) continue;
    // Extents (n, m, batch) over the output's (N, M, batch): each is the output's or 1.
    const auto dims = OperandMatrixDims(post_ops[i].operand_shape, out);
    if (!dims) return Status::InvalidInput("a post-op operand has more axes than the output, or is broadcast over part of the batch");
    int64_t batch = (*dims)[0], rows = (*dims)[1];
    if (rows_folded) {  // one row for all, or every batch's every row one after the other as in memory
      if (batch > 1 && rows == out[out.size() - 2])
        rows = problem.M;
      else if (batch > 1 || rows > 1)
        return Status::InvalidInput("a post-op operand broadcast over part of the rows of a product that runs its batch as more rows");
      batch = 1;
    }
    extents[i] = {static_cast<int>((*dims)[2]), static_cast<int>(rows), static_cast<int>(batch)};
  }
  const uint64_t key = CompileKey(std::string(kFusedTemplateId) + ".halide", t->version(), anchor.canonical.text + StepsText(post_ops),
                                  PolicyText(anchor_policy), HostHalideTargetId());
  if (auto prebuilt = SharedBuilder().Prebuilt(key)) return std::move(prebuilt);
  auto program = SharedBuilder().Compile(key, [&] {
    // The operands' params, added the first time the epilogue is defined.
    auto params = std::make_shared<std::map<size_t, ImageParam>>();
    const GemmThen then = [&, params](HalideProgram& prog, Expr value, Var n, Var m, Var b) {
      int input = static_cast<int>(anchor.inputs.size());
      for (size_t i = 0; i < post_ops.size(); ++i) {
        const ChainStep& op = post_ops[i];
        if (!op.has_operand) {
          value = Activation(op.op_type, value, op.alpha, op.beta);
          continue;
        }
        const std::vector<int>& e = extents[i];
        if (!params->count(i)) params->emplace(i, prog.AddInputView(input, 3, "operand" + std::to_string(i), e));
        ImageParam& c = params->at(i);
        Expr x = c(e[0] == 1 ? Expr(0) : Expr(n), e[1] == 1 ? Expr(0) : Expr(m), e[2] == 1 ? Expr(0) : Expr(b));
        ++input;
        value = op.op_type == "Add" ? value + x : op.op_type == "Sub" ? value - x : op.op_type == "Mul" ? value * x : value / x;
      }
      return value;
    };
    return DefineGemmProgram(anchor, anchor_policy, then);
  });
  if (!program.ok()) return program.status();
  return std::unique_ptr<Kernel>(new HalideKernel(program.value()));
}

}  // namespace tilebank::engine
