#include "engine/ir/constant_eval.h"

#include <algorithm>
#include <set>

#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine::model {

namespace {

// Constants larger than this stay nodes the executor runs (a model's shape arithmetic is far
// smaller; a malformed model must not make the importer allocate without bound).
constexpr int64_t kMaxFoldedElements = int64_t{1} << 24;

Status Bad(const Node& n, const std::string& what) { return Status::InvalidInput("node '" + n.name + "' (" + n.op_type + "): " + what); }

// Ops never folded, though their inputs are constant: the int8 path reads the QDQ structure around
// weights (engine/passes/qdq_fusion.h), as ONNX Runtime's constant folding keeps DequantizeLinear.
bool KeptUnfolded(const std::string& op_type) {
  static const std::set<std::string> kept = {"DequantizeLinear", "QuantizeLinear", "DynamicQuantizeLinear"};
  return kept.count(op_type) > 0;
}

// A kernel's output as a constant: numbers only (a string or a sequence stays a run-time value).
std::optional<ConstTensor> AsConstant(const TypedTensor& t) {
  if (!t.IsTensor() || t.dtype == DType::kString || t.dtype == DType::kUndefined || t.dtype == DType::kComplex64 || t.dtype == DType::kComplex128)
    return std::nullopt;
  const int64_t n = t.size();
  if (t.dtype == DType::kFloat32) return ConstTensor::Floats(t.shape, std::vector<float>(t.data<float>(), t.data<float>() + n));
  if (t.dtype == DType::kInt64) return ConstTensor::Ints(t.shape, std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + n));
  if (IsFloating(t.dtype)) {
    std::vector<float> values(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) values[i] = static_cast<float>(t.At(i));
    return ConstTensor::Floats(t.shape, std::move(values));
  }
  std::vector<int64_t> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[i] = t.IntAt(i);
  return ConstTensor::Ints(t.shape, std::move(values));
}

// Shape of a value whose shape is known, as its int64 constant.
void FoldShape(Graph* g, const Node& n, std::vector<bool>* shape_known) {
  const auto& shape = g->values[n.inputs[0]].shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t start = g->AttrInt(n, "start", 0), end = g->AttrInt(n, "end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  std::vector<int64_t> dims(shape.begin() + start, shape.begin() + std::max(start, end));
  Value& out = g->values[n.outputs[0]];
  out.constant = ConstTensor::Ints({static_cast<int64_t>(dims.size())}, dims);
  out.shape = out.constant->shape;
  out.dtype = "int64";
  (*shape_known)[n.outputs[0]] = true;
}

// Whether constant folding computes node `n`, a product of at most kFoldByReferenceMacs multiply-adds,
// with the op's reference: oneDNN's sgemm makes its code on its first call in a process (40-50 ms), more
// than a load's small folded products take in plain loops (a Set Transformer's inducing points
// through their projection, 2M multiply-adds: 50 ms of its 0.17 s load, then 3 ms).
constexpr int64_t kFoldByReferenceMacs = int64_t{4} << 20;
bool FoldsByReference(const Graph& g, const Node& n) {
  if ((n.op_type != "MatMul" && n.op_type != "Gemm") || n.inputs.size() < 2 || n.inputs[0] < 0 || n.inputs[1] < 0) return false;
  const auto& a_value = g.values[n.inputs[0]].constant;
  const auto& b_value = g.values[n.inputs[1]].constant;
  if (!a_value || !b_value) return false;
  const std::vector<int64_t>&a = a_value->shape, &b = b_value->shape;
  if (a.empty() || b.empty()) return false;
  // Each element of A meets a row of N columns of B, and each of B a column of M rows of A (the larger
  // bounds a broadcast batch).
  const bool b_transposed = n.op_type == "Gemm" && n.attrs.value("transB", 0) != 0 && b.size() == 2;
  const bool a_transposed = n.op_type == "Gemm" && n.attrs.value("transA", 0) != 0 && a.size() == 2;
  const int64_t columns = b.size() == 1 ? 1 : b_transposed ? b[0] : b.back();
  const int64_t rows = a.size() == 1 ? 1 : a_transposed ? a.back() : a[a.size() - 2];
  const int64_t a_count = a_value->size(), b_count = b_value->size();
  if (a_count < 0 || b_count < 0 || a_count > kFoldByReferenceMacs || b_count > kFoldByReferenceMacs) return false;
  return a_count * columns <= kFoldByReferenceMacs && b_count * rows <= kFoldByReferenceMacs;
}

// Node `n`'s outputs computed by the registry's kernel from its constant inputs; nullopt when it is
// left to run time (no kernel, a result too large, a random draw, an output no constant can hold).
struct FoldedValue {
  ConstTensor constant;
  DType dtype = DType::kUndefined;
};
Result<std::optional<std::vector<FoldedValue>>> Fold(const Graph& g, const Node& n) {
  using Folded = std::optional<std::vector<FoldedValue>>;
  // While folding, the graph's shapes are not settled (the caller tracks which are known): the
  // kernel sizes its outputs from the values, so the implementations made for static shapes (the
  // arena ones) do not apply; the op's reference computes it, or an implementation made for any
  // shape (float32 unary functions on Highway, within a few ULP of the reference).
  const kernels::KernelInfo info = KernelInfoOf(g, n);
  auto kernel = FoldsByReference(g, n) ? kernels::KernelRegistry::Default().Create(info, kernels::KernelDef::kReferenceImplementation)
                                       : kernels::KernelRegistry::Default().Create(info);
  if (!kernel.ok()) return Folded();  // the binder names what is missing
  std::vector<TypedTensor> inputs;
  inputs.reserve(n.inputs.size());
  kernels::KernelInputs in;
  for (int v : n.inputs) {
    if (v < 0) {
      in.push_back(nullptr);
      continue;
    }
    inputs.push_back(g.values[v].constant->AsTyped(ParseDType(g.values[v].dtype).value_or(DType::kFloat32)));
    in.push_back(&inputs.back());
  }
  std::vector<TypedTensor> results(n.outputs.size());
  const int64_t draws_before = kernels::RandomDraws();
  try {
    TensorSizeLimit limit(kMaxFoldedElements);
    TB_RETURN_IF_ERROR(kernel.value()->Compute(in, &results));
  } catch (const TensorTooLarge&) {
    return Folded();
  }
  if (kernels::RandomDraws() != draws_before) return Folded();  // a draw is made per run, not once
  std::vector<FoldedValue> constants(results.size());
  for (size_t k = 0; k < results.size(); ++k) {
    if (n.outputs[k] < 0) continue;
    auto c = AsConstant(results[k]);
    if (!c) return Folded();
    constants[k] = {std::move(*c), results[k].dtype};
  }
  return Folded(std::move(constants));
}

}  // namespace

Result<int> EvaluateConstantNodes(Graph* g, std::vector<bool>* shape_known, bool fold_quantization) {
  shape_known->resize(g->values.size(), true);
  int folded = 0;
  std::vector<Node> kept;
  for (Node& n : g->nodes) {
    const bool has_outputs = std::any_of(n.outputs.begin(), n.outputs.end(), [](int v) { return v >= 0; });
    if (n.op_type == "Shape" && n.outputs.size() == 1 && n.outputs[0] >= 0 && !n.inputs.empty() && n.inputs[0] >= 0 &&
        (*shape_known)[n.inputs[0]] && g->values[n.inputs[0]].kind == ValueKind::kTensor) {
      FoldShape(g, n, shape_known);
      ++folded;
      continue;
    }
    bool all_constant = has_outputs && !n.inputs.empty() && n.graphs.empty() && (fold_quantization || !KeptUnfolded(n.op_type)) &&
                        kernels::KernelRegistry::Default().Has(n.op_type);
    for (int v : n.inputs) all_constant = all_constant && (v < 0 || g->IsConstant(v));
    all_constant = all_constant && std::any_of(n.inputs.begin(), n.inputs.end(), [](int v) { return v >= 0; });
    if (all_constant) {
      auto constants = Fold(*g, n);
      if (!constants.ok()) return constants.status();
      if (constants->has_value()) {
        for (size_t k = 0; k < n.outputs.size(); ++k) {
          if (n.outputs[k] < 0) continue;
          Value& out = g->values[n.outputs[k]];
          FoldedValue& f = (**constants)[k];
          if ((*shape_known)[n.outputs[k]] && out.kind == ValueKind::kTensor && out.shape != f.constant.shape)
            return Bad(n, "the folded value's shape " + ShapeText(f.constant.shape) + " disagrees with its inferred shape " + ShapeText(out.shape));
          out.shape = f.constant.shape;
          out.dtype = DTypeName(f.dtype);
          out.constant = std::move(f.constant);
          (*shape_known)[n.outputs[k]] = true;
        }
        ++folded;
        continue;
      }
    }
    kept.push_back(std::move(n));
  }
  g->nodes = std::move(kept);
  return folded;
}

}  // namespace tilebank::engine::model
