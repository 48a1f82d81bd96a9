#include "engine/core/gemm_problem.h"

#include "engine/core/tensor.h"

namespace tilebank::engine {

namespace {
// "[d0,d1,...]", as the op descriptions write shapes.
std::string BracketedShape(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + std::to_string(s[i]);
  return t + "]";
}
}  // namespace

Result<GemmProblem> AnalyzeGemm(const OpSpec& op) {
  auto bad = [&](const std::string& why) { return Status::InvalidInput(op.name + " (" + op.op_type + "): " + why); };
  if (op.inputs.size() < 2) return bad("needs two inputs");
  const auto& a = op.inputs[0].shape;
  const auto& b = op.inputs[1].shape;
  const auto& out = op.outputs[0].shape;
  GemmProblem p;
  if (op.op_type == "Gemm") {
    if (a.size() != 2 || b.size() != 2) return bad("Gemm inputs must be 2-D");
    p.trans_a = op.Int("transA", 0) != 0;
    p.trans_b = op.Int("transB", 0) != 0;
    p.alpha = static_cast<float>(op.Real("alpha", 1.0));
    p.beta = static_cast<float>(op.Real("beta", 1.0));
  } else {
    if (a.size() < 2 || b.size() < 2) return bad("inputs of rank 1 are not supported; describe them as [1,K] or [K,1]");
    p.trans_a = op.Int("transpose_a", 0) != 0;
    p.trans_b = op.Int("transpose_b", 0) != 0;
  }
  p.M = p.trans_a ? a[a.size() - 1] : a[a.size() - 2];
  p.K = p.trans_a ? a[a.size() - 2] : a[a.size() - 1];
  int64_t kb = p.trans_b ? b[b.size() - 1] : b[b.size() - 2];
  p.N = p.trans_b ? b[b.size() - 2] : b[b.size() - 1];
  if (kb != p.K)
    return bad("inner dimensions differ: input_desc[0].shape " + BracketedShape(a) + " has K=" + std::to_string(p.K) +
               ", input_desc[1].shape " + BracketedShape(b) + " has K=" + std::to_string(kb));
  std::vector<int64_t> a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  std::vector<int64_t> batch_dims;
  if (!a_batch.empty() && !b_batch.empty()) {
    if (a_batch != b_batch) return bad("batch dimensions of input_desc[0] and input_desc[1], " + BracketedShape(a_batch) + " and " + BracketedShape(b_batch) + " differ (only equal or one-sided batches are supported)");
    batch_dims = a_batch;
  } else {
    batch_dims = a_batch.empty() ? b_batch : a_batch;
  }
  for (int64_t d : batch_dims) p.batch *= d;
  p.a_batched = !a_batch.empty();
  p.b_batched = !b_batch.empty();
  if (p.a_batched && !p.b_batched && !p.trans_a) {
    // A's batches are just more rows.
    p.M *= p.batch;
    p.batch = 1;
    p.a_batched = false;
  }
  std::vector<int64_t> expected = batch_dims;
  expected.push_back(p.trans_a ? a[a.size() - 1] : a[a.size() - 2]);
  expected.push_back(p.N);
  if (out != expected) return bad("output_desc[0].shape " + BracketedShape(out) + " should be " + BracketedShape(expected));
  if (op.op_type == "Gemm" && op.inputs.size() >= 3) {
    const auto& c = op.inputs[2].shape;
    int64_t numel = Tensor::NumElements(c);
    if (numel == 1) p.bias = BiasShape::kScalar;
    else if ((c.size() == 1 && c[0] == p.N) || (c.size() == 2 && c[0] == 1 && c[1] == p.N)) p.bias = BiasShape::kRow;
    else if (c.size() == 2 && c[0] == p.M && c[1] == 1) p.bias = BiasShape::kColumn;
    else if (c.size() == 2 && c[0] == p.M && c[1] == p.N) p.bias = BiasShape::kFull;
    else return bad("input_desc[2].shape " + BracketedShape(c) + " (bias C) does not broadcast to [M,N]");
  }
  return p;
}

}  // namespace tilebank::engine
