// Ops that move elements without computing on them: Transpose, Concat, Split, Slice, Tile, Pad,
// DepthToSpace, SpaceToDepth, Trilu and ReverseSequence, for every dtype.
#include <algorithm>

#include "engine/kernels/kernel_registry.h"
#include "engine/core/slice_walk.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

// A permutation of 0..rank-1 from a transposed tensor's perm: reversed when empty.
Result<std::unique_ptr<OpKernel>> MakeTranspose(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    const size_t rank = x.shape.size();
    std::vector<int64_t> perm = info.attrs.Ints("perm");
    if (perm.empty())
      for (size_t k = 0; k < rank; ++k) perm.push_back(static_cast<int64_t>(rank - 1 - k));
    std::vector<bool> seen(rank, false);
    if (perm.size() != rank) return info.Bad("perm does not name every dimension once");
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(rank) || seen[p]) return info.Bad("perm does not name every dimension once");
      seen[p] = true;
    }
    std::vector<int64_t> shape(rank);
    for (size_t k = 0; k < rank; ++k) shape[k] = x.shape[perm[k]];
    const std::vector<int64_t> in_strides = Strides(x.shape);
    TypedTensor y(x.dtype, shape);
    ForEachIndex(shape, [&](int64_t j, const std::vector<int64_t>& index) {
      int64_t from = 0;
      for (size_t k = 0; k < rank; ++k) from += index[k] * in_strides[perm[k]];
      CopyElement(x, from, &y, j);
    });
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeConcat(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor* first = nullptr;
    for (const auto* t : in)
      if (t) first = first ? first : t;
    if (!first) return info.Bad("takes at least one input");
    const int64_t rank = first->rank();
    auto axis = Axis(info.attrs.Int("axis", 0), rank);
    if (!axis) return info.Bad("axis outside the inputs' rank");
    std::vector<int64_t> shape = first->shape;
    shape[*axis] = 0;
    for (const auto* t : in) {
      if (!t) continue;
      if (t->dtype != first->dtype || t->rank() != rank) return info.Bad("inputs differ in type or rank");
      for (int64_t k = 0; k < rank; ++k)
        if (k != *axis && t->shape[k] != first->shape[k]) return info.Bad("inputs differ outside the axis");
      shape[*axis] += t->shape[*axis];
    }
    TypedTensor y(first->dtype, shape);
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < *axis; ++k) outer *= shape[k];
    for (int64_t k = *axis + 1; k < rank; ++k) inner *= shape[k];
    int64_t offset = 0;  // along the axis
    for (const auto* t : in) {
      if (!t) continue;
      const int64_t span = t->shape[*axis] * inner;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < span; ++i) CopyElement(*t, o * span + i, &y, o * shape[*axis] * inner + offset * inner + i);
      offset += t->shape[*axis];
    }
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeSplit(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    auto axis = Axis(info.attrs.Int("axis", 0), x.rank());
    if (!axis) return info.Bad("axis outside the input's rank");
    const int64_t n = static_cast<int64_t>(out->size()), dim = x.shape[*axis];
    std::vector<int64_t> sizes;
    if (in.size() > 1 && in[1]) sizes = IntValues(*in[1]);
    else if (info.attrs.Has("split")) sizes = info.attrs.Ints("split");
    if (sizes.empty()) {  // equal parts, the last smaller
      const int64_t part = (dim + n - 1) / std::max<int64_t>(n, 1);
      for (int64_t k = 0; k < n; ++k) sizes.push_back(std::clamp<int64_t>(dim - k * part, 0, part));
    }
    int64_t total = 0;
    for (int64_t s : sizes) total += s;
    if (static_cast<int64_t>(sizes.size()) != n || total != dim) return info.Bad("split sizes do not add up to the axis");
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < *axis; ++k) outer *= x.shape[k];
    for (int64_t k = *axis + 1; k < x.rank(); ++k) inner *= x.shape[k];
    int64_t offset = 0;
    for (int64_t p = 0; p < n; ++p) {
      std::vector<int64_t> shape = x.shape;
      shape[*axis] = sizes[p];
      TypedTensor y(x.dtype, shape);
      const int64_t span = sizes[p] * inner;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < span; ++i) CopyElement(x, o * dim * inner + offset * inner + i, &y, o * span + i);
      offset += sizes[p];
      (*out)[p] = std::move(y);
    }
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeSlice(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    const int64_t rank = x.rank();
    std::vector<int64_t> starts, ends, axes, steps;
    if (info.opset >= 10) {
      if (in.size() < 3 || !in[1] || !in[2]) return info.Bad("takes starts and ends");
      starts = IntValues(*in[1]);
      ends = IntValues(*in[2]);
      if (in.size() > 3 && in[3]) axes = IntValues(*in[3]);
      if (in.size() > 4 && in[4]) steps = IntValues(*in[4]);
    } else {
      starts = info.attrs.Ints("starts");
      ends = info.attrs.Ints("ends");
      axes = info.attrs.Ints("axes");
    }
    // Absent (or, before opset 10, empty) axes and steps: ONNX's defaults.
    auto walk = WalkOfSlice(x.shape, starts, ends, axes.empty() ? std::nullopt : std::optional(axes),
                            steps.empty() ? std::nullopt : std::optional(steps));
    if (!walk.ok()) return info.Bad(walk.status().message());
    const std::vector<int64_t>& begin = walk->first;
    const std::vector<int64_t>& step = walk->step;
    const std::vector<int64_t>& shape = walk->count;
    const std::vector<int64_t> strides = Strides(x.shape);
    TypedTensor y(x.dtype, shape);
    const size_t bytes = ElementBytes(x.dtype);
    if (rank == 0 || x.dtype == DType::kString || bytes == 0) {
      ForEachIndex(shape, [&](int64_t j, const std::vector<int64_t>& index) {
        int64_t from = 0;
        for (int64_t k = 0; k < rank; ++k) from += (begin[k] + index[k] * step[k]) * strides[k];
        CopyElement(x, from, &y, j);
      });
    } else if (y.size() > 0) {  // rows of the last axis, a run copied where its step is 1
      const int64_t last = rank - 1, inner = shape[last], rows = y.size() / inner, inner_step = step[last] * strides[last];
      std::vector<int64_t> index(static_cast<size_t>(last), 0);
      const std::byte* src = x.bytes.data();
      std::byte* dst = y.bytes.data();
      for (int64_t r = 0; r < rows; ++r, dst += inner * bytes) {
        int64_t from = begin[last] * strides[last];
        for (int64_t k = 0; k < last; ++k) from += (begin[k] + index[k] * step[k]) * strides[k];
        if (inner_step == 1) std::memcpy(dst, src + from * bytes, inner * bytes);
        else for (int64_t j = 0; j < inner; ++j) std::memcpy(dst + j * bytes, src + (from + j * inner_step) * bytes, bytes);
        for (int64_t k = last - 1; k >= 0 && ++index[k] == shape[k]; --k) index[k] = 0;
      }
    }
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeTile(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    if (in.size() < 2 || !in[1]) return info.Bad("takes repeats");
    const std::vector<int64_t> repeats = IntValues(*in[1]);
    if (static_cast<int64_t>(repeats.size()) != x.rank()) return info.Bad("repeats must have one value per dimension");
    std::vector<int64_t> shape = x.shape;
    for (size_t k = 0; k < shape.size(); ++k) {
      if (repeats[k] < 0) return info.Bad("a repeat is negative");
      shape[k] *= repeats[k];
    }
    const std::vector<int64_t> strides = Strides(x.shape);
    TypedTensor y(x.dtype, shape);
    ForEachIndex(shape, [&](int64_t j, const std::vector<int64_t>& index) {
      int64_t from = 0;
      for (size_t k = 0; k < shape.size(); ++k) from += (index[k] % x.shape[k]) * strides[k];
      CopyElement(x, from, &y, j);
    });
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakePad(const KernelInfo& info) {
  const std::string mode = info.attrs.String("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") return info.Bad("mode '" + mode + "' is not constant, reflect or edge");
  return FunctionKernel([info, mode](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    const int64_t rank = x.rank();
    std::vector<int64_t> pads = info.opset >= 11 ? (in.size() > 1 && in[1] ? IntValues(*in[1]) : std::vector<int64_t>{}) : info.attrs.Ints("pads");
    std::vector<int64_t> axes;
    if (in.size() > 3 && in[3]) axes = IntValues(*in[3]);
    else
      for (int64_t k = 0; k < rank; ++k) axes.push_back(k);
    if (pads.size() != 2 * axes.size()) return info.Bad("pads must hold a begin and an end per axis");
    std::vector<int64_t> before(rank, 0), after(rank, 0);
    for (size_t i = 0; i < axes.size(); ++i) {
      auto axis = Axis(axes[i], rank);
      if (!axis) return info.Bad("axis outside the input's rank");
      before[*axis] = pads[i];
      after[*axis] = pads[i + axes.size()];
    }
    std::vector<int64_t> shape(rank);
    for (int64_t k = 0; k < rank; ++k) {
      shape[k] = x.shape[k] + before[k] + after[k];
      if (shape[k] < 0) return info.Bad("pads remove more than the dimension");
      if (mode != "constant" && x.shape[k] == 0 && shape[k] > 0) return info.Bad(mode + " padding of an empty dimension");
    }
    TypedTensor fill(x.dtype, {1});
    if (info.opset >= 11 && in.size() > 2 && in[2] && in[2]->size() == 1) fill = *in[2];
    else if (info.opset < 11) fill.SetAt(0, info.attrs.Float("value", 0.f));
    const std::vector<int64_t> strides = Strides(x.shape);
    TypedTensor y(x.dtype, shape);
    ForEachIndex(shape, [&](int64_t j, const std::vector<int64_t>& index) {
      int64_t from = 0;
      for (int64_t k = 0; k < rank; ++k) {
        int64_t i = index[k] - before[k];
        const int64_t dim = x.shape[k];
        if (i < 0 || i >= dim) {
          if (mode == "constant") {
            CopyElement(fill, 0, &y, j);
            return;
          }
          if (mode == "edge") i = std::clamp<int64_t>(i, 0, dim - 1);
          else {  // reflect, without repeating the edge
            const int64_t period = 2 * (dim - 1);
            if (period == 0) i = 0;
            else {
              i = ((i % period) + period) % period;
              if (i >= dim) i = period - i;
            }
          }
        }
        from += i * strides[k];
      }
      CopyElement(x, from, &y, j);
    });
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

// DepthToSpace (DCR or CRD) and SpaceToDepth on NCHW.
Result<std::unique_ptr<OpKernel>> MakeDepthSpace(const KernelInfo& info, bool to_space) {
  const int64_t b = info.attrs.Int("blocksize", 0);
  if (b <= 0) return info.Bad("blocksize must be positive");
  const bool crd = info.attrs.String("mode", "DCR") == "CRD";
  return FunctionKernel([info, b, crd, to_space](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    if (x.rank() != 4) return info.Bad("takes a 4-D input");
    const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
    if (to_space && C % (b * b) != 0) return info.Bad("channels are not a multiple of blocksize^2");
    if (!to_space && (H % b != 0 || W % b != 0)) return info.Bad("height and width are not multiples of blocksize");
    const std::vector<int64_t> shape = to_space ? std::vector<int64_t>{N, C / (b * b), H * b, W * b} : std::vector<int64_t>{N, C * b * b, H / b, W / b};
    TypedTensor y(x.dtype, shape);
    ForEachIndex(shape, [&](int64_t j, const std::vector<int64_t>& i) {
      int64_t n = i[0], c, h, w;
      if (to_space) {
        const int64_t oc = i[1], bh = i[2] % b, bw = i[3] % b, oc_count = shape[1];
        c = crd ? oc * b * b + bh * b + bw : (bh * b + bw) * oc_count + oc;
        h = i[2] / b;
        w = i[3] / b;
      } else {
        const int64_t oc = i[1] % C, block = i[1] / C;
        c = oc;
        h = i[2] * b + block / b;
        w = i[3] * b + block % b;
      }
      CopyElement(x, ((n * C + c) * H + h) * W + w, &y, j);
    });
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeTrilu(const KernelInfo& info) {
  const bool upper = info.attrs.Int("upper", 1) != 0;
  return FunctionKernel([info, upper](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    if (x.rank() < 2) return info.Bad("takes at least a 2-D input");
    const int64_t k = in.size() > 1 && in[1] ? in[1]->IntAt(0) : 0;
    const int64_t rows = x.shape[x.rank() - 2], cols = x.shape[x.rank() - 1];
    TypedTensor y(x.dtype, x.shape);
    for (int64_t j = 0; j < x.size(); ++j) {
      const int64_t c = j % cols, r = (j / cols) % rows;
      if (upper ? c - r >= k : c - r <= k) CopyElement(x, j, &y, j);
    }
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeReverseSequence(const KernelInfo& info) {
  const int64_t batch_axis = info.attrs.Int("batch_axis", 1), time_axis = info.attrs.Int("time_axis", 0);
  return FunctionKernel([info, batch_axis, time_axis](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    if (x.rank() < 2 || in.size() < 2 || !in[1]) return info.Bad("takes an input of rank 2 or more and sequence lengths");
    auto b = Axis(batch_axis, x.rank()), t = Axis(time_axis, x.rank());
    if (!b || !t || *b == *t) return info.Bad("batch_axis and time_axis must be two dimensions");
    const std::vector<int64_t> lengths = IntValues(*in[1]);
    if (static_cast<int64_t>(lengths.size()) != x.shape[*b]) return info.Bad("one sequence length per batch element");
    const std::vector<int64_t> strides = Strides(x.shape);
    TypedTensor y(x.dtype, x.shape);
    ForEachIndex(x.shape, [&](int64_t j, const std::vector<int64_t>& index) {
      const int64_t len = std::clamp<int64_t>(lengths[index[*b]], 0, x.shape[*t]), time = index[*t];
      const int64_t from = time < len ? j + (len - 1 - 2 * time) * strides[*t] : j;
      CopyElement(x, from, &y, j);
    });
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

}  // namespace

void RegisterMovementKernels(KernelRegistry* r) {
  const auto& all = AllTypes();
  r->Add({"Transpose", 1, INT_MAX, all, 0, MakeTranspose});
  r->Add({"Concat", 4, INT_MAX, all, 0, MakeConcat});
  r->Add({"Split", 2, INT_MAX, all, 0, MakeSplit});
  r->Add({"Slice", 1, INT_MAX, all, 0, MakeSlice});
  r->Add({"Tile", 6, INT_MAX, all, 0, MakeTile});
  r->Add({"Pad", 2, INT_MAX, all, 0, MakePad});
  r->Add({"DepthToSpace", 1, INT_MAX, all, 0, [](const KernelInfo& info) { return MakeDepthSpace(info, true); }});
  r->Add({"SpaceToDepth", 1, INT_MAX, all, 0, [](const KernelInfo& info) { return MakeDepthSpace(info, false); }});
  r->Add({"Trilu", 14, INT_MAX, all, 0, MakeTrilu});
  r->Add({"ReverseSequence", 10, INT_MAX, all, 0, MakeReverseSequence});
}

}  // namespace tilebank::engine::kernels
