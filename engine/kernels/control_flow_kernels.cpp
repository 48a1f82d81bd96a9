// Control flow: If, Loop, Scan and SequenceMap, whose branches and bodies are subgraphs
// (engine/kernels/subgraph.h) run by the registry's kernels. A subgraph reads the enclosing scopes'
// values through the node's implicit inputs. Loop's scan outputs and Scan's are stacked along their
// axis; loop-carried values, branch results and implicit inputs may be sequences and optionals.

#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/subgraph.h"

namespace tilebank::engine::kernels {
namespace {

// The sub-tensor at `index` along `axis` (that dimension removed).
TypedTensor Take(const TypedTensor& t, int64_t axis, int64_t index) {
  std::vector<int64_t> shape = t.shape;
  const int64_t extent = shape[axis];
  shape.erase(shape.begin() + axis);
  TypedTensor out(t.dtype, shape);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= t.shape[d];
  for (size_t d = axis + 1; d < t.shape.size(); ++d) inner *= t.shape[d];
  for (int64_t o = 0; o < outer; ++o) CopyElements(t, (o * extent + index) * inner, &out, o * inner, inner);
  return out;
}

// `parts` (one shape, one dtype) stacked along a new dimension `axis`; `reverse` puts the last first.
Result<TypedTensor> Stack(const KernelInfo& info, const std::vector<TypedTensor>& parts, int64_t axis, bool reverse) {
  const TypedTensor& first = parts.front();
  for (const TypedTensor& p : parts)
    if (!p.IsTensor()) return info.Bad(std::string("a scan output is a ") + ValueKindName(p.kind) + "; scan outputs are stacked tensors");
  for (const TypedTensor& p : parts)
    if (p.shape != first.shape || p.dtype != first.dtype)
      return info.Bad("a scan output changes shape or dtype between iterations (" + ShapeText(first.shape) + " then " + ShapeText(p.shape) + ")");
  if (axis < 0) axis += first.rank() + 1;
  if (axis < 0 || axis > first.rank()) return info.Bad("scan output axis " + std::to_string(axis) + " is out of range");
  std::vector<int64_t> shape = first.shape;
  const int64_t count = static_cast<int64_t>(parts.size());
  shape.insert(shape.begin() + axis, count);
  TypedTensor out(first.dtype, shape);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= first.shape[d];
  for (size_t d = axis; d < first.shape.size(); ++d) inner *= first.shape[d];
  for (int64_t k = 0; k < count; ++k) {
    const TypedTensor& p = parts[reverse ? count - 1 - k : k];
    for (int64_t o = 0; o < outer; ++o) CopyElements(p, o * inner, &out, (o * count + k) * inner, inner);
  }
  return out;
}

bool Truth(const TypedTensor& t) { return t.size() > 0 && t.At(0) != 0; }

// Loop's and Scan's outputs: the final loop-carried (state) values, then each scan output's
// per-iteration values stacked along axes[k] (directions[k] != 0: the last iteration first). A scan
// output no iteration produced is an empty float32 stack (the body's dtype is unknown).
Status PutOutputs(const KernelInfo& info, std::vector<TypedTensor> state, const std::vector<std::vector<TypedTensor>>& scans,
                  const std::vector<int64_t>& axes, const std::vector<int64_t>& directions, std::vector<TypedTensor>* out) {
  for (size_t k = 0; k < state.size(); ++k) (*out)[k] = std::move(state[k]);
  for (size_t k = 0; k < scans.size(); ++k) {
    TypedTensor& slot = (*out)[state.size() + k];
    if (scans[k].empty()) {
      slot = TypedTensor(DType::kFloat32, {0});
      continue;
    }
    auto stacked = Stack(info, scans[k], axes[k], directions[k] != 0);
    if (!stacked.ok()) return stacked.status();
    slot = std::move(stacked.value());
  }
  return Status::Ok();
}

// The runners keep their kernels across runs; the executor runs one step at a time, so `mutable`
// state in a const Compute is not shared between threads.
class IfKernel : public OpKernel {
 public:
  explicit IfKernel(KernelInfo info) : info_(std::move(info)), then_(*info_.graphs.at("then_branch"), info_.opset), else_(*info_.graphs.at("else_branch"), info_.opset) {}
  Status Compute(const KernelInputs& in, std::vector<TypedTensor>* out) const override {
    if (in.empty() || !in[0] || !in[0]->IsTensor() || in[0]->size() != 1) return info_.Bad("takes its condition as one value");
    std::vector<TypedTensor> results;
    TB_RETURN_IF_ERROR((Truth(*in[0]) ? then_ : else_).Run({}, ImplicitScope(info_, in), &results));
    if (results.size() != out->size())
      return info_.Bad("its branch gives " + std::to_string(results.size()) + " outputs; the node has " + std::to_string(out->size()));
    *out = std::move(results);
    return Status::Ok();
  }

 private:
  KernelInfo info_;
  mutable SubgraphRunner then_, else_;
};

class LoopKernel : public OpKernel {
 public:
  explicit LoopKernel(KernelInfo info) : info_(std::move(info)), body_(*info_.graphs.at("body"), info_.opset) {}
  Status Compute(const KernelInputs& in, std::vector<TypedTensor>* out) const override {
    const size_t declared = info_.DeclaredInputs();
    if (declared < 2) return info_.Bad("takes a trip count and a condition (either may be left out) before its loop-carried values");
    const size_t carried = declared - 2;
    if (out->size() < carried) return info_.Bad("has fewer outputs than loop-carried values");
    const size_t scanned = out->size() - carried;
    for (size_t k = 0; k < 2; ++k)
      if (in[k] && (!in[k]->IsTensor() || in[k]->size() != 1)) return info_.Bad(k == 0 ? "takes its trip count as one value" : "takes its condition as one value");
    const int64_t trips = in[0] ? in[0]->IntAt(0) : INT64_MAX;
    bool condition = in[1] ? Truth(*in[1]) : true;
    std::vector<TypedTensor> state;
    for (size_t k = 0; k < carried; ++k) {
      if (!in[2 + k]) return info_.Bad("loop-carried value " + std::to_string(k) + " is missing");
      state.push_back(*in[2 + k]);
    }
    const Scope outer = ImplicitScope(info_, in);
    std::vector<std::vector<TypedTensor>> scans(scanned);
    std::vector<TypedTensor> results;
    for (int64_t i = 0; i < trips && condition; ++i) {
      const TypedTensor iteration = TypedTensor::Of<int64_t>({}, {i});
      const TypedTensor cond = TypedTensor::Of<bool>({}, {condition});
      std::vector<const TypedTensor*> body_in = {&iteration, &cond};
      for (const TypedTensor& s : state) body_in.push_back(&s);
      TB_RETURN_IF_ERROR(body_.Run(body_in, outer, &results));
      if (results.size() != 1 + carried + scanned)
        return info_.Bad("its body gives " + std::to_string(results.size()) + " outputs; it needs " + std::to_string(1 + carried + scanned));
      condition = Truth(results[0]);
      for (size_t k = 0; k < carried; ++k) state[k] = std::move(results[1 + k]);
      for (size_t k = 0; k < scanned; ++k) scans[k].push_back(std::move(results[1 + carried + k]));
    }
    return PutOutputs(info_, std::move(state), scans, std::vector<int64_t>(scanned, 0), std::vector<int64_t>(scanned, 0), out);
  }

 private:
  KernelInfo info_;
  mutable SubgraphRunner body_;
};

class ScanKernel : public OpKernel {
 public:
  explicit ScanKernel(KernelInfo info) : info_(std::move(info)), body_(*info_.graphs.at("body"), info_.opset) {}
  Status Compute(const KernelInputs& in, std::vector<TypedTensor>* out) const override {
    const size_t declared = info_.DeclaredInputs();
    const int64_t num_scan = info_.attrs.Int("num_scan_inputs", 0);
    if (num_scan < 1 || static_cast<size_t>(num_scan) > declared) return info_.Bad("num_scan_inputs must be between 1 and its inputs");
    const size_t states = declared - num_scan;
    if (out->size() < states) return info_.Bad("has fewer outputs than state values");
    const size_t scanned = out->size() - states;
    const auto in_axes = info_.attrs.Ints("scan_input_axes", std::vector<int64_t>(num_scan, 0));
    const auto in_dirs = info_.attrs.Ints("scan_input_directions", std::vector<int64_t>(num_scan, 0));
    const auto out_axes = info_.attrs.Ints("scan_output_axes", std::vector<int64_t>(scanned, 0));
    const auto out_dirs = info_.attrs.Ints("scan_output_directions", std::vector<int64_t>(scanned, 0));
    if (in_axes.size() != static_cast<size_t>(num_scan) || in_dirs.size() != static_cast<size_t>(num_scan) || out_axes.size() != scanned ||
        out_dirs.size() != scanned)
      return info_.Bad("its scan axes and directions must name each scan input and output once");
    std::vector<TypedTensor> state;
    for (size_t k = 0; k < states; ++k) {
      if (!in[k]) return info_.Bad("state value " + std::to_string(k) + " is missing");
      state.push_back(*in[k]);
    }
    std::vector<int64_t> axes;
    int64_t length = -1;
    for (int64_t s = 0; s < num_scan; ++s) {
      const TypedTensor* x = in[states + s];
      if (!x) return info_.Bad("scan input " + std::to_string(s) + " is missing");
      if (!x->IsTensor()) return info_.Bad("scan input " + std::to_string(s) + " is a " + ValueKindName(x->kind) + "; Scan scans tensors");
      const int64_t axis = in_axes[s] < 0 ? in_axes[s] + x->rank() : in_axes[s];
      if (axis < 0 || axis >= x->rank()) return info_.Bad("scan input axis " + std::to_string(in_axes[s]) + " is out of range");
      if (length >= 0 && x->shape[axis] != length) return info_.Bad("its scan inputs differ in length");
      length = x->shape[axis];
      axes.push_back(axis);
    }
    if (length == 0 && scanned > 0) return info_.Bad("its scan inputs are empty, so its scan outputs' shapes are unknown");
    const Scope outer = ImplicitScope(info_, in);
    std::vector<std::vector<TypedTensor>> scans(scanned);
    std::vector<TypedTensor> results;
    for (int64_t t = 0; t < length; ++t) {
      std::vector<TypedTensor> slices;
      for (int64_t s = 0; s < num_scan; ++s) slices.push_back(Take(*in[states + s], axes[s], in_dirs[s] ? length - 1 - t : t));
      std::vector<const TypedTensor*> body_in;
      for (const TypedTensor& v : state) body_in.push_back(&v);
      for (const TypedTensor& v : slices) body_in.push_back(&v);
      TB_RETURN_IF_ERROR(body_.Run(body_in, outer, &results));
      if (results.size() != states + scanned)
        return info_.Bad("its body gives " + std::to_string(results.size()) + " outputs; it needs " + std::to_string(states + scanned));
      for (size_t k = 0; k < states; ++k) state[k] = std::move(results[k]);
      for (size_t k = 0; k < scanned; ++k) scans[k].push_back(std::move(results[states + k]));
    }
    return PutOutputs(info_, std::move(state), scans, out_axes, out_dirs, out);
  }

 private:
  KernelInfo info_;
  mutable SubgraphRunner body_;
};

// SequenceMap: the body once per element of the input sequence, each further input given as its
// element of the same index (a sequence, as long as the first) or whole (a tensor); each body output
// collected into a sequence.
class SequenceMapKernel : public OpKernel {
 public:
  explicit SequenceMapKernel(KernelInfo info) : info_(std::move(info)), body_(*info_.graphs.at("body"), info_.opset) {}
  Status Compute(const KernelInputs& in, std::vector<TypedTensor>* out) const override {
    const size_t declared = info_.DeclaredInputs();
    if (declared < 1 || !in[0] || in[0]->kind != ValueKind::kSequence) return info_.Bad("takes a sequence as its first input");
    const size_t length = in[0]->elements.size();
    for (size_t k = 1; k < declared; ++k) {
      if (!in[k]) return info_.Bad("input " + std::to_string(k) + " is missing");
      if (in[k]->kind == ValueKind::kOptional) return info_.Bad("input " + std::to_string(k) + " is an optional; it takes sequences and tensors");
      if (in[k]->kind == ValueKind::kSequence && in[k]->elements.size() != length)
        return info_.Bad("its input sequences differ in length (" + std::to_string(length) + " and " + std::to_string(in[k]->elements.size()) + ")");
    }
    const Scope outer = ImplicitScope(info_, in);
    std::vector<std::vector<TypedTensor>> collected(out->size());
    std::vector<TypedTensor> results;
    for (size_t i = 0; i < length; ++i) {
      std::vector<const TypedTensor*> body_in;
      for (size_t k = 0; k < declared; ++k) body_in.push_back(in[k]->kind == ValueKind::kSequence ? &in[k]->elements[i] : in[k]);
      TB_RETURN_IF_ERROR(body_.Run(body_in, outer, &results));
      if (results.size() != out->size())
        return info_.Bad("its body gives " + std::to_string(results.size()) + " outputs; the node has " + std::to_string(out->size()));
      for (size_t k = 0; k < results.size(); ++k) {
        if (!results[k].IsTensor()) return info_.Bad("its body's output " + std::to_string(k) + " is not a tensor");
        collected[k].push_back(std::move(results[k]));
      }
    }
    for (size_t k = 0; k < out->size(); ++k) (*out)[k] = TypedTensor::Sequence(DType::kUndefined, std::move(collected[k]));
    return Status::Ok();
  }

 private:
  KernelInfo info_;
  mutable SubgraphRunner body_;
};

// A factory for a kernel whose subgraph attributes `names` must all be there.
template <class Kernel>
KernelFactory WithGraphs(std::vector<std::string> names) {
  return [names](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    for (const std::string& name : names)
      if (!info.graphs.count(name) || !info.graphs.at(name)) return info.Bad("has no '" + name + "' subgraph");
    return std::unique_ptr<OpKernel>(new Kernel(info));
  };
}

}  // namespace

void RegisterControlFlowKernels(KernelRegistry* r) {
  // any_kind: loop-carried values, scan states and implicit inputs may be sequences and optionals.
  r->Add({"If", 1, INT_MAX, {}, 0, WithGraphs<IfKernel>({"then_branch", "else_branch"}), true});
  r->Add({"Loop", 1, INT_MAX, {}, 0, WithGraphs<LoopKernel>({"body"}), true});
  r->Add({"Scan", 9, INT_MAX, {}, 0, WithGraphs<ScanKernel>({"body"}), true});
  r->Add({"SequenceMap", 17, INT_MAX, {}, 0, WithGraphs<SequenceMapKernel>({"body"}), true});
}

}  // namespace tilebank::engine::kernels
