#include "engine/fusion/halide_fused_gemm.h"

#include <map>
#include <memory>

#include "engine/builder/builder.h"
#include "engine/builder/halide_program.h"
#include "engine/fusion/fused_policy.h"
#include "engine/impl/onednn_post_ops.h"
#include "engine/ops/gemm_problem.h"
#include "engine/target/host_facts.h"
#include "engine/templates/gemm_program.h"
#include "engine/templates/halide_math.h"
#include "engine/templates/op_template.h"
#include "engine/templates/templates.h"

namespace tilebank::engine {

using namespace Halide;

namespace {

// An operand's extents (n, m, batch) over the output's (N, M, batch): each is the output's or 1.
Result<std::vector<int>> OperandExtents(const std::vector<int64_t>& operand, const std::vector<int64_t>& out) {
  if (operand.size() > out.size() || out.size() < 2) return Status::InvalidInput("a post-op operand has more axes than the output");
  std::vector<int64_t> d(out.size() - operand.size(), 1);
  d.insert(d.end(), operand.begin(), operand.end());
  int64_t batch = 1;
  bool all_one = true, all_match = true;
  for (size_t i = 0; i + 2 < d.size(); ++i) {
    batch *= d[i];
    all_one &= d[i] == 1;
    all_match &= d[i] == out[i];
  }
  if (!all_one && !all_match) return Status::InvalidInput("a post-op operand broadcast over part of the batch");
  return std::vector<int>{static_cast<int>(d.back()), static_cast<int>(d[d.size() - 2]), static_cast<int>(batch)};
}

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
  std::vector<std::vector<int>> extents(post_ops.size());
  for (size_t i = 0; i < post_ops.size(); ++i) {
    if (!IsOneDnnPostOp(post_ops[i].op_type)) return Status::InvalidInput("no fused epilogue step for " + post_ops[i].op_type);
    if (!post_ops[i].has_operand) continue;
    auto e = OperandExtents(post_ops[i].operand_shape, out);
    if (!e.ok()) return e.status();
    extents[i] = *e;
  }
  const uint64_t key = CompileKey(std::string(kFusedTemplateId) + ".halide", t->version(), anchor.canonical.text + StepsText(post_ops),
                                  PolicyText(anchor_policy), Host().target.to_string());
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
