// Ops driven by index tensors: Gather, GatherElements, GatherND, ScatterElements, ScatterND,
// OneHot, NonZero, Compress and Unique. An index outside its dimension is kInvalidInput naming the node.
#include <algorithm>
#include <numeric>
#include <optional>

#include "engine/kernels/elementwise.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

// Whether `idx` fits `x` for GatherElements and ScatterElements: of x's rank, and no larger than x
// in any dimension but `axis` (its coordinates there are x's).
bool IndicesFit(const TypedTensor& x, const TypedTensor& idx, int64_t axis) {
  if (idx.rank() != x.rank()) return false;
  for (int64_t k = 0; k < x.rank(); ++k)
    if (k != axis && idx.shape[k] > x.shape[k]) return false;
  return true;
}

// GatherElements' and ScatterElements' element of `x` for element j of `idx`: j's coordinates,
// with idx[j] along `axis`; nullopt when idx[j] is outside that dimension.
std::optional<int64_t> ElementAt(const TypedTensor& x, const TypedTensor& idx, int64_t j, int64_t axis, const std::vector<int64_t>& x_strides,
                                 const std::vector<int64_t>& i_strides) {
  int64_t at = 0, rest = j;
  for (int64_t k = 0; k < x.rank(); ++k) {
    int64_t coordinate = rest / i_strides[k];
    rest %= i_strides[k];
    if (k == axis) {
      coordinate = idx.IntAt(j);
      if (!Wrap(&coordinate, x.shape[k])) return std::nullopt;
    }
    at += coordinate * x_strides[k];
  }
  return at;
}

Result<std::unique_ptr<OpKernel>> MakeGather(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    auto axis = Axis(info.attrs.Int("axis", 0), x.rank());
    if (!axis) return info.Bad("axis outside the input's rank");
    std::vector<int64_t> indices = IntValues(*in[1]);
    const int64_t dim = x.shape[*axis];
    for (int64_t& i : indices)
      if (!Wrap(&i, dim)) return info.Bad("index " + std::to_string(i) + " is outside a dimension of " + std::to_string(dim));
    std::vector<int64_t> shape(x.shape.begin(), x.shape.begin() + *axis);
    shape.insert(shape.end(), in[1]->shape.begin(), in[1]->shape.end());
    shape.insert(shape.end(), x.shape.begin() + *axis + 1, x.shape.end());
    int64_t inner = 1;
    for (int64_t k = *axis + 1; k < x.rank(); ++k) inner *= x.shape[k];
    const int64_t count = static_cast<int64_t>(indices.size());
    (*out)[0] = Gathered(x, shape, [&](int64_t j) {
      const int64_t i = j % inner, rest = j / inner, which = rest % count, o = rest / count;
      return (o * dim + indices[which]) * inner + i;
    });
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeGatherElements(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor &x = *in[0], &idx = *in[1];
    auto axis = Axis(info.attrs.Int("axis", 0), x.rank());
    if (!axis || !IndicesFit(x, idx, *axis)) return info.Bad("indices must have the input's rank and fit its shape but along axis, and axis be inside it");
    const std::vector<int64_t> x_strides = Strides(x.shape), i_strides = Strides(idx.shape);
    TypedTensor y(x.dtype, idx.shape);
    for (int64_t j = 0; j < idx.size(); ++j) {
      const std::optional<int64_t> from = ElementAt(x, idx, j, *axis, x_strides, i_strides);
      if (!from) return info.Bad("index " + std::to_string(idx.IntAt(j)) + " is outside its dimension");
      CopyElement(x, *from, &y, j);
    }
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeGatherND(const KernelInfo& info) {
  const int64_t batch_dims = info.attrs.Int("batch_dims", 0);
  return FunctionKernel([info, batch_dims](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor &x = *in[0], &idx = *in[1];
    if (idx.rank() < 1 || batch_dims < 0 || batch_dims >= std::min(x.rank(), idx.rank())) return info.Bad("batch_dims outside the ranks");
    const int64_t last = idx.shape.back();
    if (last > x.rank() - batch_dims) return info.Bad("indices index more dimensions than the input has");
    for (int64_t k = 0; k < batch_dims; ++k)
      if (idx.shape[k] != x.shape[k]) return info.Bad("indices' batch dimensions " + ShapeText(idx.shape) + " differ from the input's " + ShapeText(x.shape));
    std::vector<int64_t> shape(idx.shape.begin(), idx.shape.end() - 1);
    shape.insert(shape.end(), x.shape.begin() + batch_dims + last, x.shape.end());
    int64_t batch = 1, slice = 1;
    for (int64_t k = 0; k < batch_dims; ++k) batch *= x.shape[k];
    for (int64_t k = batch_dims + last; k < x.rank(); ++k) slice *= x.shape[k];
    const std::vector<int64_t> strides = Strides(x.shape);
    const int64_t per_batch_x = batch_dims ? strides[batch_dims - 1] : x.size();
    const int64_t tuples = last ? idx.size() / last : idx.size();
    const int64_t per_batch_tuples = tuples / std::max<int64_t>(batch, 1);
    TypedTensor y(x.dtype, shape);
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t from = (t / std::max<int64_t>(per_batch_tuples, 1)) * per_batch_x;
      for (int64_t k = 0; k < last; ++k) {
        int64_t i = idx.IntAt(t * last + k);
        if (!Wrap(&i, x.shape[batch_dims + k])) return info.Bad("index " + std::to_string(idx.IntAt(t * last + k)) + " is outside its dimension");
        from += i * strides[batch_dims + k];
      }
      for (int64_t s = 0; s < slice; ++s) CopyElement(x, from + s, &y, t * slice + s);
    }
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

// out[at] = reduce(out[at], updates[u]) for ScatterElements and ScatterND.
Status Reduce(const std::string& reduction, const TypedTensor& updates, int64_t u, TypedTensor* y, int64_t at) {
  if (reduction == "none") {
    CopyElement(updates, u, y, at);
    return Status::Ok();
  }
  const double a = y->At(at), b = updates.At(u);
  double r = a;
  if (reduction == "add") r = a + b;
  else if (reduction == "mul") r = a * b;
  else if (reduction == "max") r = std::max(a, b);
  else if (reduction == "min") r = std::min(a, b);
  else return Status::InvalidInput("reduction '" + reduction + "' is not none, add, mul, max or min");
  if (IsInteger(y->dtype) && (reduction == "add" || reduction == "mul")) {
    const int64_t ia = y->IntAt(at), ib = updates.IntAt(u);
    y->SetIntAt(at, reduction == "add" ? ia + ib : ia * ib);
  } else {
    y->SetAt(at, r);
  }
  return Status::Ok();
}

Result<std::unique_ptr<OpKernel>> MakeScatterElements(const KernelInfo& info) {
  const std::string reduction = info.attrs.String("reduction", "none");
  return FunctionKernel([info, reduction](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor &x = *in[0], &idx = *in[1], &updates = *in[2];
    auto axis = Axis(info.attrs.Int("axis", 0), x.rank());
    if (!axis || !IndicesFit(x, idx, *axis) || idx.shape != updates.shape || updates.dtype != x.dtype)
      return info.Bad("indices and updates must share a shape of the input's rank that fits it but along axis");
    const std::vector<int64_t> x_strides = Strides(x.shape), i_strides = Strides(idx.shape);
    TypedTensor y = x;
    for (int64_t j = 0; j < idx.size(); ++j) {
      const std::optional<int64_t> to = ElementAt(x, idx, j, *axis, x_strides, i_strides);
      if (!to) return info.Bad("index " + std::to_string(idx.IntAt(j)) + " is outside its dimension");
      if (Status s = Reduce(reduction, updates, j, &y, *to); !s.ok()) return info.Bad(s.message());
    }
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeScatterND(const KernelInfo& info) {
  const std::string reduction = info.attrs.String("reduction", "none");
  return FunctionKernel([info, reduction](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor &x = *in[0], &idx = *in[1], &updates = *in[2];
    if (idx.rank() < 1 || updates.dtype != x.dtype) return info.Bad("takes indices of rank 1 or more and updates of the input's type");
    const int64_t last = idx.shape.back();
    if (last > x.rank()) return info.Bad("indices index more dimensions than the input has");
    int64_t slice = 1;
    for (int64_t k = last; k < x.rank(); ++k) slice *= x.shape[k];
    const int64_t tuples = last ? idx.size() / last : 0;
    if (updates.size() != tuples * slice) return info.Bad("updates do not match the indices");
    const std::vector<int64_t> strides = Strides(x.shape);
    TypedTensor y = x;
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t to = 0;
      for (int64_t k = 0; k < last; ++k) {
        int64_t i = idx.IntAt(t * last + k);
        if (!Wrap(&i, x.shape[k])) return info.Bad("index " + std::to_string(idx.IntAt(t * last + k)) + " is outside its dimension");
        to += i * strides[k];
      }
      for (int64_t s = 0; s < slice; ++s)
        if (Status st = Reduce(reduction, updates, t * slice + s, &y, to + s); !st.ok()) return info.Bad(st.message());
    }
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeOneHot(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor &indices = *in[0], &depth_t = *in[1], &values = *in[2];
    if (depth_t.size() != 1 || values.size() != 2) return info.Bad("takes a scalar depth and two values");
    const int64_t depth = static_cast<int64_t>(depth_t.At(0));
    if (depth <= 0) return info.Bad("depth must be positive");
    const int64_t rank = indices.rank() + 1;
    auto axis = Axis(info.attrs.Int("axis", -1), rank);
    if (!axis) return info.Bad("axis outside the output's rank");
    std::vector<int64_t> shape = indices.shape;
    shape.insert(shape.begin() + *axis, depth);
    int64_t inner = 1;
    for (int64_t k = *axis; k < indices.rank(); ++k) inner *= indices.shape[k];
    TypedTensor y = Gathered(values, shape, [](int64_t) { return int64_t{0}; });
    for (int64_t j = 0; j < indices.size(); ++j) {
      int64_t i = static_cast<int64_t>(indices.At(j));
      if (i < -depth || i >= depth) continue;  // outside: all off
      if (i < 0) i += depth;
      const int64_t o = j / inner, r = j % inner;
      CopyElement(values, 1, &y, (o * depth + i) * inner + r);
    }
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeNonZero(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    std::vector<int64_t> hits;
    for (int64_t j = 0; j < x.size(); ++j)
      if (x.At(j) != 0) hits.push_back(j);
    const int64_t rank = std::max(x.rank(), 1), n = static_cast<int64_t>(hits.size());
    const std::vector<int64_t> strides = x.rank() ? Strides(x.shape) : std::vector<int64_t>{1};
    TypedTensor y(DType::kInt64, {rank, n});
    for (int64_t h = 0; h < n; ++h) {
      int64_t rest = hits[h];
      for (int64_t k = 0; k < rank; ++k) {
        y.data<int64_t>()[k * n + h] = x.rank() ? rest / strides[k] : 0;
        if (x.rank()) rest %= strides[k];
      }
    }
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeCompress(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor &x = *in[0], &condition = *in[1];
    if (!info.attrs.Has("axis")) {  // over the flattened input
      std::vector<int64_t> picked;
      for (int64_t j = 0; j < std::min(condition.size(), x.size()); ++j)
        if (condition.IntAt(j)) picked.push_back(j);
      (*out)[0] = Gathered(x, {static_cast<int64_t>(picked.size())}, [&](int64_t j) { return picked[j]; });
      return Status::Ok();
    }
    auto axis = Axis(info.attrs.Int("axis", 0), x.rank());
    if (!axis) return info.Bad("axis outside the input's rank");
    std::vector<int64_t> picked;
    for (int64_t j = 0; j < std::min(condition.size(), x.shape[*axis]); ++j)
      if (condition.IntAt(j)) picked.push_back(j);
    std::vector<int64_t> shape = x.shape;
    shape[*axis] = static_cast<int64_t>(picked.size());
    int64_t inner = 1;
    for (int64_t k = *axis + 1; k < x.rank(); ++k) inner *= x.shape[k];
    const int64_t count = shape[*axis], dim = x.shape[*axis];
    (*out)[0] = Gathered(x, shape, [&](int64_t j) {
      const int64_t i = j % inner, rest = j / inner, which = rest % count, o = rest / count;
      return (o * dim + picked[which]) * inner + i;
    });
    return Status::Ok();
  });
}

// Unique: the distinct elements (or slices along `axis`), sorted or in order of first occurrence,
// with each one's first index, every input's index into them, and their counts.
Result<std::unique_ptr<OpKernel>> MakeUnique(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    const bool sorted = info.attrs.Int("sorted", 1) != 0, by_axis = info.attrs.Has("axis");
    std::optional<int64_t> axis = by_axis ? Axis(info.attrs.Int("axis", 0), x.rank()) : std::optional<int64_t>(0);
    if (!axis) return info.Bad("axis outside the input's rank");
    // The input as `count` slices of `width` elements, `inner` apart (a flat input: width 1).
    const int64_t count = by_axis ? x.shape[*axis] : x.size();
    int64_t inner = 1;
    for (int64_t d = *axis + 1; by_axis && d < x.rank(); ++d) inner *= x.shape[d];
    const int64_t width = count ? x.size() / count : 0;
    auto element = [&](int64_t slice, int64_t k) { return by_axis ? ((k / inner) * count + slice) * inner + k % inner : slice; };
    auto less = [&](int64_t p, int64_t q) {
      for (int64_t k = 0; k < width; ++k) {
        const int64_t i = element(p, k), j = element(q, k);
        if (x.dtype == DType::kString) {
          if (x.strings[i] != x.strings[j]) return x.strings[i] < x.strings[j];
        } else if (x.At(i) != x.At(j)) {
          return x.At(i) < x.At(j);
        }
      }
      return false;
    };
    std::vector<int64_t> order(count);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), less);
    // Groups of equal slices, each named by its first occurrence.
    std::vector<int64_t> group_of(count), firsts;
    for (size_t i = 0; i < order.size(); ++i) {
      if (i == 0 || less(order[i - 1], order[i])) firsts.push_back(order[i]);
      group_of[order[i]] = static_cast<int64_t>(firsts.size()) - 1;
    }
    std::vector<int64_t> rank_of(firsts.size());
    std::iota(rank_of.begin(), rank_of.end(), 0);
    if (!sorted) {  // renumber groups by first occurrence
      std::vector<int64_t> by_first(firsts.size());
      std::iota(by_first.begin(), by_first.end(), 0);
      std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) { return firsts[a] < firsts[b]; });
      for (size_t r = 0; r < by_first.size(); ++r) rank_of[by_first[r]] = static_cast<int64_t>(r);
    }
    const int64_t n = static_cast<int64_t>(firsts.size());
    std::vector<int64_t> first_index(n), inverse(count), counts(n, 0);
    for (int64_t g = 0; g < n; ++g) first_index[rank_of[g]] = firsts[g];
    for (int64_t i = 0; i < count; ++i) inverse[i] = rank_of[group_of[i]], counts[inverse[i]]++;
    std::vector<int64_t> shape = by_axis ? x.shape : std::vector<int64_t>{n};
    if (by_axis) shape[*axis] = n;
    (*out)[0] = Gathered(x, shape, [&](int64_t j) {
      if (!by_axis) return first_index[j];
      const int64_t slice = (j / inner) % n, k = (j / inner / n) * inner + j % inner;
      return element(first_index[slice], k);
    });
    if (out->size() > 1) (*out)[1] = TypedTensor::Of<int64_t>({n}, first_index);
    if (out->size() > 2) (*out)[2] = TypedTensor::Of<int64_t>({count}, inverse);
    if (out->size() > 3) (*out)[3] = TypedTensor::Of<int64_t>({n}, counts);
    return Status::Ok();
  });
}

}  // namespace

void RegisterIndexKernels(KernelRegistry* r) {
  const auto& all = AllTypes();
  r->Add({"Gather", 1, INT_MAX, all, 0, MakeGather});
  r->Add({"GatherElements", 11, INT_MAX, all, 0, MakeGatherElements});
  r->Add({"GatherND", 11, INT_MAX, all, 0, MakeGatherND});
  r->Add({"ScatterElements", 11, INT_MAX, all, 0, MakeScatterElements});
  r->Add({"ScatterND", 11, INT_MAX, all, 0, MakeScatterND});
  r->Add({"OneHot", 9, INT_MAX, NumericTypes(), 1, MakeOneHot});
  r->Add({"NonZero", 9, INT_MAX, all, 0, MakeNonZero});
  r->Add({"Compress", 9, INT_MAX, all, 0, MakeCompress});
  r->Add({"Unique", 11, INT_MAX, all, 0, MakeUnique});
  r->Add({"Scatter", 9, 10, all, 0, MakeScatterElements});
}

}  // namespace tilebank::engine::kernels
