// Sequences and optionals (engine/core/typed_tensor.h's ValueKind): SequenceEmpty, SequenceConstruct,
// SequenceInsert, SequenceAt, SequenceErase, SequenceLength, SplitToSequence, ConcatFromSequence,
// Optional, OptionalHasElement and OptionalGetElement, as ONNX defines them (SequenceMap, which runs
// a subgraph, is with the control-flow kernels). A position is a one-element integer tensor,
// negative counting from the end; out of range is kInvalidInput naming the node.

#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine::kernels {
namespace {

Status NeedSequence(const KernelInfo& info, const TypedTensor* t, size_t input) {
  if (!t || t->kind != ValueKind::kSequence)
    return info.Bad("input " + std::to_string(input) + " must be a sequence" + (t ? std::string(", not a ") + ValueKindName(t->kind) : std::string()));
  return Status::Ok();
}

Status NeedTensor(const KernelInfo& info, const TypedTensor* t, size_t input) {
  if (!t || !t->IsTensor())
    return info.Bad("input " + std::to_string(input) + " must be a tensor" + (t ? std::string(", not a ") + ValueKindName(t->kind) : std::string()));
  return Status::Ok();
}

// A position input (one integer) within [-count, count - 1], or [-count, count] when `end_allowed`
// (an insert may append), as an index from the front.
Result<size_t> Position(const KernelInfo& info, const TypedTensor& p, size_t count, bool end_allowed) {
  if (!p.IsTensor() || p.size() != 1 || !IsInteger(p.dtype)) return info.Bad("takes its position as one integer");
  const int64_t n = static_cast<int64_t>(count), at = p.IntAt(0);
  const int64_t last = end_allowed ? n : n - 1;
  if (at < -n || at > last)
    return info.Bad("position " + std::to_string(at) + " is outside [" + std::to_string(-n) + ", " + std::to_string(last) + "] of a sequence of " +
                    std::to_string(n));
  return static_cast<size_t>(at < 0 ? at + n : at);
}

// Whether `t` may join a sequence of `dtype` (kUndefined: any).
Status SameDtype(const KernelInfo& info, DType dtype, const TypedTensor& t) {
  if (dtype != DType::kUndefined && t.dtype != dtype)
    return info.Bad("a " + DTypeName(t.dtype) + " tensor cannot join a sequence of " + DTypeName(dtype));
  return Status::Ok();
}

// The product of shape[from, to).
int64_t Extent(const std::vector<int64_t>& shape, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t d = from; d < to; ++d) n *= shape[d];
  return n;
}

Status SplitToSequence(const KernelInfo& info, const KernelInputs& in, std::vector<TypedTensor>* out) {
  TB_RETURN_IF_ERROR(NeedTensor(info, in[0], 0));
  const TypedTensor& x = *in[0];
  if (x.rank() == 0) return info.Bad("cannot split a scalar");
  int64_t axis = info.attrs.Int("axis", 0);
  if (axis < -x.rank() || axis >= x.rank()) return info.Bad("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(x.rank()));
  if (axis < 0) axis += x.rank();
  const int64_t extent = x.shape[axis];
  std::vector<int64_t> lengths;
  bool squeeze = false;
  const TypedTensor* split = in.size() > 1 ? in[1] : nullptr;
  if (!split) {
    lengths.assign(static_cast<size_t>(extent), 1);
    squeeze = info.attrs.Int("keepdims", 1) == 0;
  } else {
    TB_RETURN_IF_ERROR(NeedTensor(info, split, 1));
    if (!IsInteger(split->dtype) || split->rank() > 1) return info.Bad("takes its split as an integer scalar or 1-D tensor");
    if (split->rank() == 0) {
      const int64_t chunk = split->IntAt(0);
      if (chunk <= 0) return info.Bad("a split of " + std::to_string(chunk) + " is not a positive length");
      for (int64_t at = 0; at < extent; at += chunk) lengths.push_back(std::min(chunk, extent - at));
    } else {
      int64_t sum = 0;
      for (int64_t i = 0; i < split->size(); ++i) {
        if (split->IntAt(i) < 0) return info.Bad("a split length is negative");
        lengths.push_back(split->IntAt(i));
        sum += split->IntAt(i);
      }
      if (sum != extent) return info.Bad("its split lengths add up to " + std::to_string(sum) + ", not the axis' " + std::to_string(extent));
    }
  }
  const int64_t outer = Extent(x.shape, 0, axis), inner = Extent(x.shape, axis + 1, x.shape.size());
  std::vector<TypedTensor> parts;
  int64_t start = 0;
  for (int64_t length : lengths) {
    std::vector<int64_t> shape = x.shape;
    shape[axis] = length;
    TypedTensor part(x.dtype, shape);
    for (int64_t o = 0; o < outer; ++o) CopyElements(x, (o * extent + start) * inner, &part, o * length * inner, length * inner);
    if (squeeze) part.shape.erase(part.shape.begin() + axis);
    parts.push_back(std::move(part));
    start += length;
  }
  (*out)[0] = TypedTensor::Sequence(x.dtype, std::move(parts));
  return Status::Ok();
}

Status ConcatFromSequence(const KernelInfo& info, const KernelInputs& in, std::vector<TypedTensor>* out) {
  TB_RETURN_IF_ERROR(NeedSequence(info, in[0], 0));
  const std::vector<TypedTensor>& parts = in[0]->elements;
  if (parts.empty()) return info.Bad("cannot concatenate an empty sequence");
  const bool new_axis = info.attrs.Int("new_axis", 0) != 0;
  const TypedTensor& first = parts.front();
  const int64_t rank = first.rank() + (new_axis ? 1 : 0);
  int64_t axis = info.attrs.Int("axis", 0);
  if (!info.attrs.Has("axis")) return info.Bad("needs its 'axis' attribute");
  if (axis < -rank || axis >= rank) return info.Bad("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  std::vector<int64_t> shape = first.shape;
  if (new_axis) shape.insert(shape.begin() + axis, 1);
  int64_t total = 0;
  for (const TypedTensor& p : parts) {
    if (p.dtype != first.dtype || p.rank() != first.rank()) return info.Bad("its sequence's tensors differ in dtype or rank");
    std::vector<int64_t> s = p.shape;
    if (new_axis) s.insert(s.begin() + axis, 1);
    for (size_t d = 0; d < s.size(); ++d)
      if (static_cast<int64_t>(d) != axis && s[d] != shape[d]) return info.Bad("its sequence's tensors differ in shape off the axis");
    total += s[axis];
  }
  const int64_t outer = Extent(shape, 0, axis), inner = Extent(shape, axis + 1, shape.size());
  shape[axis] = total;
  TypedTensor result(first.dtype, shape);
  int64_t at = 0;
  for (const TypedTensor& p : parts) {
    const int64_t length = new_axis ? 1 : p.shape[axis];
    for (int64_t o = 0; o < outer; ++o) CopyElements(p, o * length * inner, &result, (o * total + at) * inner, length * inner);
    at += length;
  }
  (*out)[0] = std::move(result);
  return Status::Ok();
}

// A kernel computed by `fn` with the node's KernelInfo.
KernelFactory With(Status (*fn)(const KernelInfo&, const KernelInputs&, std::vector<TypedTensor>*)) {
  return [fn](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    return FunctionKernel([info, fn](const KernelInputs& in, std::vector<TypedTensor>* out) { return fn(info, in, out); });
  };
}

}  // namespace

void RegisterSequenceKernels(KernelRegistry* r) {
  auto add = [r](const char* op, int since, KernelFactory make) { r->Add({op, since, INT_MAX, {}, 0, std::move(make), /*any_kind=*/true}); };
  add("SequenceEmpty", 11, With([](const KernelInfo& info, const KernelInputs&, std::vector<TypedTensor>* out) {
        const DType dtype = DTypeOfOnnx(static_cast<int>(info.attrs.Int("dtype", 1)));
        if (dtype == DType::kUndefined) return info.Bad("dtype " + std::to_string(info.attrs.Int("dtype", 1)) + " is no tensor element type");
        (*out)[0] = TypedTensor::Sequence(dtype, {});
        return Status::Ok();
      }));
  add("SequenceConstruct", 11, With([](const KernelInfo& info, const KernelInputs& in, std::vector<TypedTensor>* out) {
        std::vector<TypedTensor> elements;
        for (size_t k = 0; k < in.size(); ++k) {
          TB_RETURN_IF_ERROR(NeedTensor(info, in[k], k));
          if (k > 0) TB_RETURN_IF_ERROR(SameDtype(info, in[0]->dtype, *in[k]));
          elements.push_back(*in[k]);
        }
        if (elements.empty()) return info.Bad("needs at least one tensor");
        const DType dtype = elements[0].dtype;  // read before the move: argument order is unspecified (GCC moves first)
        (*out)[0] = TypedTensor::Sequence(dtype, std::move(elements));
        return Status::Ok();
      }));
  add("SequenceInsert", 11, With([](const KernelInfo& info, const KernelInputs& in, std::vector<TypedTensor>* out) {
        TB_RETURN_IF_ERROR(NeedSequence(info, in[0], 0));
        TB_RETURN_IF_ERROR(NeedTensor(info, in.size() > 1 ? in[1] : nullptr, 1));
        TB_RETURN_IF_ERROR(SameDtype(info, in[0]->elements.empty() ? in[0]->dtype : in[0]->elements[0].dtype, *in[1]));
        size_t at = in[0]->elements.size();
        if (in.size() > 2 && in[2]) {
          auto p = Position(info, *in[2], at, /*end_allowed=*/true);
          if (!p.ok()) return p.status();
          at = p.value();
        }
        std::vector<TypedTensor> elements = in[0]->elements;
        elements.insert(elements.begin() + at, *in[1]);
        (*out)[0] = TypedTensor::Sequence(in[1]->dtype, std::move(elements));
        return Status::Ok();
      }));
  add("SequenceAt", 11, With([](const KernelInfo& info, const KernelInputs& in, std::vector<TypedTensor>* out) {
        TB_RETURN_IF_ERROR(NeedSequence(info, in[0], 0));
        if (in.size() < 2 || !in[1]) return info.Bad("needs its position");
        auto p = Position(info, *in[1], in[0]->elements.size(), /*end_allowed=*/false);
        if (!p.ok()) return p.status();
        (*out)[0] = in[0]->elements[p.value()];
        return Status::Ok();
      }));
  add("SequenceErase", 11, With([](const KernelInfo& info, const KernelInputs& in, std::vector<TypedTensor>* out) {
        TB_RETURN_IF_ERROR(NeedSequence(info, in[0], 0));
        const size_t n = in[0]->elements.size();
        if (n == 0) return info.Bad("cannot erase from an empty sequence");
        size_t at = n - 1;
        if (in.size() > 1 && in[1]) {
          auto p = Position(info, *in[1], n, /*end_allowed=*/false);
          if (!p.ok()) return p.status();
          at = p.value();
        }
        std::vector<TypedTensor> elements = in[0]->elements;
        elements.erase(elements.begin() + at);
        (*out)[0] = TypedTensor::Sequence(in[0]->dtype, std::move(elements));
        return Status::Ok();
      }));
  add("SequenceLength", 11, With([](const KernelInfo& info, const KernelInputs& in, std::vector<TypedTensor>* out) {
        TB_RETURN_IF_ERROR(NeedSequence(info, in[0], 0));
        (*out)[0] = TypedTensor::Of<int64_t>({}, {static_cast<int64_t>(in[0]->elements.size())});
        return Status::Ok();
      }));
  add("SplitToSequence", 11, With(SplitToSequence));
  add("ConcatFromSequence", 11, With(ConcatFromSequence));
  add("Optional", 15, With([](const KernelInfo& info, const KernelInputs& in, std::vector<TypedTensor>* out) {
        if (!in.empty() && in[0]) {
          if (in[0]->kind == ValueKind::kOptional) return info.Bad("cannot hold an optional");
          (*out)[0] = TypedTensor::OptionalOf(*in[0]);
        } else {
          (*out)[0] = TypedTensor::EmptyOptional(DType::kUndefined);  // its 'type' attribute is not read: an empty one has no elements to type
        }
        return Status::Ok();
      }));
  // A tensor or sequence given where an optional is expected is one that holds it (opset 18 lets
  // either be passed; a Loop may carry an optional in its first iteration and its value after).
  add("OptionalHasElement", 15, With([](const KernelInfo&, const KernelInputs& in, std::vector<TypedTensor>* out) {
        const bool has = !in.empty() && in[0] && (in[0]->kind != ValueKind::kOptional || !in[0]->elements.empty());
        (*out)[0] = TypedTensor::Of<bool>({}, {has});
        return Status::Ok();
      }));
  add("OptionalGetElement", 15, With([](const KernelInfo& info, const KernelInputs& in, std::vector<TypedTensor>* out) {
        if (in.empty() || !in[0]) return info.Bad("needs its input");
        if (in[0]->kind != ValueKind::kOptional) {
          (*out)[0] = *in[0];
          return Status::Ok();
        }
        if (in[0]->elements.empty()) return info.Bad("its optional input is empty");
        (*out)[0] = in[0]->elements[0];
        return Status::Ok();
      }));
}

}  // namespace tilebank::engine::kernels
