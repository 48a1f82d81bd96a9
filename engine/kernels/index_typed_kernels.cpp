// Typed implementations of the routing and detection ops: Gather, GatherElements, GatherND, ScatterElements,
// ScatterND, NonZero, TopK, OneHot, ArgMax, ArgMin, and the Transpose between them (NonZero's indices turned to rows), each
// last but the float32 arena kernels in its op's table ("typed"). Elements move as bytes (whole rows and slices at once) or are compared and reduced in
// their own type, where the reference reads and writes each element through a dtype switch; the
// results are the reference's. Anything else (strings, another reduction or dtype, an index
// outside its dimension, which the reference reports) runs the reference kernel.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <type_traits>

#include "engine/backends/simd/extreme_search_simd.h"
#include "engine/core/parallel_for.h"
#include "engine/kernels/gather_elements_rows.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/typed_kernel.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

int64_t IndexAt(const TypedTensor& idx, int64_t j) {
  return idx.dtype == DType::kInt64 ? idx.data<int64_t>()[j] : idx.dtype == DType::kInt32 ? idx.data<int32_t>()[j] : idx.IntAt(j);
}

Result<TypedFn> Gather(const KernelInfo& info) {
  const int64_t axis_attr = info.attrs.Int("axis", 0);
  return TypedFn([axis_attr](const KernelInputs& in, std::vector<TypedTensor>* out) {
    const TypedTensor &x = *in[0], &idx = *in[1];
    auto axis = Axis(axis_attr, x.rank());
    if (!axis) return false;
    const int64_t dim = x.shape[*axis], count = idx.size();
    std::vector<int64_t> rows(static_cast<size_t>(count));
    for (int64_t j = 0; j < count; ++j) {
      rows[j] = IndexAt(idx, j);
      if (!Wrap(&rows[j], dim)) return false;
    }
    std::vector<int64_t> shape(x.shape.begin(), x.shape.begin() + *axis);
    shape.insert(shape.end(), idx.shape.begin(), idx.shape.end());
    shape.insert(shape.end(), x.shape.begin() + *axis + 1, x.shape.end());
    int64_t inner = 1, outer = 1;
    for (int64_t k = *axis + 1; k < x.rank(); ++k) inner *= x.shape[k];
    for (int64_t k = 0; k < *axis; ++k) outer *= x.shape[k];
    TypedTensor& y = (*out)[0];
    ReshapeForOverwrite(&y, x.dtype, shape);
    const size_t row_bytes = static_cast<size_t>(inner) * ElementBytes(x.dtype);
    ParallelFor(outer * count, std::max<int64_t>(1, (int64_t{1} << 16) / std::max<size_t>(1, row_bytes)), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t o = r / count, which = r % count;
        std::memcpy(y.bytes.data() + r * row_bytes, x.bytes.data() + (o * dim + rows[which]) * row_bytes, row_bytes);
      }
    });
    return true;
  });
}

// GatherElements (torch.gather) in the data's own element width (gather_elements_rows.h); an index
// out of range is left to the reference, which reports it.
Result<TypedFn> GatherElements(const KernelInfo& info) {
  const int64_t axis_attr = info.attrs.Int("axis", 0);
  return TypedFn([axis_attr](const KernelInputs& in, std::vector<TypedTensor>* out) {
    const TypedTensor &x = *in[0], &idx = *in[1];
    auto axis = Axis(axis_attr, x.rank());
    if (!axis || x.rank() == 0 || idx.rank() != x.rank() || (idx.dtype != DType::kInt64 && idx.dtype != DType::kInt32)) return false;
    for (int64_t k = 0; k < x.rank(); ++k)
      if (k != *axis && idx.shape[k] > x.shape[k]) return false;  // the reference reports it
    const size_t bytes = ElementBytes(x.dtype);
    if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) return false;
    TypedTensor& y = (*out)[0];
    ReshapeForOverwrite(&y, x.dtype, idx.shape);
    const std::vector<int64_t> strides = Strides(x.shape);
    auto gather = [&](auto* dst, const auto* src) {
      return !GatherElementsRows(dst, src, idx.bytes.data(), idx.dtype == DType::kInt64, idx.shape, strides, *axis, x.shape[*axis]);
    };
    switch (bytes) {
      case 1: return gather(reinterpret_cast<uint8_t*>(y.bytes.data()), reinterpret_cast<const uint8_t*>(x.bytes.data()));
      case 2: return gather(reinterpret_cast<uint16_t*>(y.bytes.data()), reinterpret_cast<const uint16_t*>(x.bytes.data()));
      case 4: return gather(reinterpret_cast<uint32_t*>(y.bytes.data()), reinterpret_cast<const uint32_t*>(x.bytes.data()));
      default: return gather(reinterpret_cast<uint64_t*>(y.bytes.data()), reinterpret_cast<const uint64_t*>(x.bytes.data()));
    }
  });
}

// GatherND and ScatterND: the element offset in `x` of index tuple t's slice (the first
// `batch_dims` dims given by t's batch); false when an index is outside its dimension.
bool TupleOffset(const TypedTensor& x, const TypedTensor& idx, int64_t t, int64_t last, int64_t batch_dims, int64_t per_batch_tuples,
                 const std::vector<int64_t>& strides, int64_t* offset) {
  int64_t at = batch_dims ? (t / std::max<int64_t>(per_batch_tuples, 1)) * strides[batch_dims - 1] : 0;
  for (int64_t k = 0; k < last; ++k) {
    int64_t i = IndexAt(idx, t * last + k);
    if (!Wrap(&i, x.shape[batch_dims + k])) return false;
    at += i * strides[batch_dims + k];
  }
  *offset = at;
  return true;
}

Result<TypedFn> GatherND(const KernelInfo& info) {
  const int64_t batch_dims = info.attrs.Int("batch_dims", 0);
  return TypedFn([batch_dims](const KernelInputs& in, std::vector<TypedTensor>* out) {
    const TypedTensor &x = *in[0], &idx = *in[1];
    if (idx.rank() < 1 || batch_dims < 0 || batch_dims >= std::min(x.rank(), idx.rank())) return false;
    const int64_t last = idx.shape.back();
    if (last < 1 || last > x.rank() - batch_dims) return false;  // the reference reports an empty index tuple
    for (int64_t k = 0; k < batch_dims; ++k)
      if (idx.shape[k] != x.shape[k]) return false;  // batch dims that differ: the reference reports them
    std::vector<int64_t> shape(idx.shape.begin(), idx.shape.end() - 1);
    shape.insert(shape.end(), x.shape.begin() + batch_dims + last, x.shape.end());
    int64_t batch = 1, slice = 1;
    for (int64_t k = 0; k < batch_dims; ++k) batch *= x.shape[k];
    for (int64_t k = batch_dims + last; k < x.rank(); ++k) slice *= x.shape[k];
    const std::vector<int64_t> strides = Strides(x.shape);
    const int64_t tuples = last ? idx.size() / last : idx.size(), per_batch_tuples = tuples / std::max<int64_t>(batch, 1);
    const size_t bytes = ElementBytes(x.dtype), slice_bytes = static_cast<size_t>(slice) * bytes;
    TypedTensor& y = (*out)[0];
    ReshapeForOverwrite(&y, x.dtype, shape);
    if (batch_dims == 0 && last == 1 && slice == 1 && idx.dtype == DType::kInt64 && (bytes == 4 || bytes == 8)) {
      // Single elements by one index each (a score per selected box): a plain gather in the element's width.
      const int64_t* at = idx.data<int64_t>();
      auto gather = [&](auto* dst, const auto* src) {
        for (int64_t t = 0; t < tuples; ++t) {
          int64_t i = at[t];
          if (!Wrap(&i, x.shape[0])) return false;
          dst[t] = src[i];
        }
        return true;
      };
      return bytes == 4 ? gather(reinterpret_cast<uint32_t*>(y.bytes.data()), reinterpret_cast<const uint32_t*>(x.bytes.data()))
                        : gather(reinterpret_cast<uint64_t*>(y.bytes.data()), reinterpret_cast<const uint64_t*>(x.bytes.data()));
    }
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t from = 0;
      if (!TupleOffset(x, idx, t, last, batch_dims, per_batch_tuples, strides, &from)) return false;
      std::memcpy(y.bytes.data() + t * slice_bytes, x.bytes.data() + from * bytes, slice_bytes);
    }
    return true;
  });
}

// Transpose: each output element's bytes from the input offset the permuted strides give, walked
// with a counter over the output's index (no per-element index vector); perm as the reference
// takes it (absent: reversed), a bad one left to the reference to report.
Result<TypedFn> Transpose(const KernelInfo& info) {
  const std::vector<int64_t> given = info.attrs.Ints("perm");
  return TypedFn([given](const KernelInputs& in, std::vector<TypedTensor>* out) {
    const TypedTensor& x = *in[0];
    const int64_t rank = x.rank();
    std::vector<int64_t> perm = given;
    if (perm.empty())
      for (int64_t k = 0; k < rank; ++k) perm.push_back(rank - 1 - k);
    std::vector<int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    if (static_cast<int64_t>(sorted.size()) != rank) return false;
    for (int64_t k = 0; k < rank; ++k)
      if (sorted[k] != k) return false;
    std::vector<int64_t> shape(rank), stride(rank);
    const std::vector<int64_t> in_strides = Strides(x.shape);
    for (int64_t k = 0; k < rank; ++k) shape[k] = x.shape[perm[k]], stride[k] = in_strides[perm[k]];
    TypedTensor& y = (*out)[0];
    ReshapeForOverwrite(&y, x.dtype, shape);
    const int64_t n = y.size();
    if (n == 0) return true;
    const size_t bytes = ElementBytes(x.dtype);
    const std::byte* src = x.bytes.data();
    std::byte* dst = y.bytes.data();
    // Dims of extent 1 aside, a permutation that keeps the order moves nothing: one copy.
    int64_t previous = -1;
    bool ordered = true;
    for (int64_t k = 0; k < rank; ++k)
      if (shape[k] != 1) ordered = ordered && perm[k] > previous, previous = perm[k];
    if (ordered) {
      std::memcpy(dst, src, static_cast<size_t>(n) * bytes);
      return true;
    }
    std::vector<int64_t> index(rank, 0);
    int64_t from = 0;
    for (int64_t j = 0; j < n; ++j) {
      std::memcpy(dst + j * bytes, src + from * bytes, bytes);
      for (int64_t k = rank - 1; k >= 0; --k) {  // the next output index, its input offset kept in step
        from += stride[k];
        if (++index[k] < shape[k]) break;
        from -= stride[k] * shape[k];
        index[k] = 0;
      }
    }
    return true;
  });
}

// y as a copy of numeric x, in the memory y held (last run's output); returns y.
TypedTensor& CopyInto(const TypedTensor& x, TypedTensor* y) {
  ReshapeForOverwrite(y, x.dtype, x.shape);
  std::memcpy(y->bytes.data(), x.bytes.data(), x.bytes.size());
  return *y;
}

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

// ScatterElements' and ScatterND's reduction attribute; nullopt for one the typed kernels do not know.
std::optional<Reduction> ReductionOf(const std::string& r) {
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  return std::nullopt;
}

// dst[i] = reduce(dst[i], v[i]) for i < n, in T (integers wrap as the reference's int64 arithmetic
// stored back does); `r` is not kNone.
template <class T>
void ReduceInto(Reduction r, T* dst, const T* v, int64_t n) {
  using Wide = std::conditional_t<std::is_integral_v<T>, uint64_t, T>;  // two's complement wrapping, without signed overflow
  switch (r) {
    case Reduction::kAdd:
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(static_cast<Wide>(dst[i]) + static_cast<Wide>(v[i]));
      return;
    case Reduction::kMul:
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(static_cast<Wide>(dst[i]) * static_cast<Wide>(v[i]));
      return;
    case Reduction::kMax:
      for (int64_t i = 0; i < n; ++i) dst[i] = std::max(dst[i], v[i]);
      return;
    case Reduction::kMin:
      for (int64_t i = 0; i < n; ++i) dst[i] = std::min(dst[i], v[i]);
      return;
    case Reduction::kNone: return;
  }
}

// Places update j (`count` elements from j * count) at element target[j] of y, or reduces it there.
bool ScatterRuns(Reduction r, const TypedTensor& updates, const std::vector<int64_t>& target, int64_t count, TypedTensor* y) {
  const size_t bytes = ElementBytes(y->dtype);
  if (r == Reduction::kNone) {
    for (size_t j = 0; j < target.size(); ++j)
      std::memcpy(y->bytes.data() + target[j] * bytes, updates.bytes.data() + j * count * bytes, count * bytes);
    return true;
  }
  return VisitReducible(y->dtype, [&](auto tag) {
    using T = decltype(tag);
    for (size_t j = 0; j < target.size(); ++j) ReduceInto(r, y->data<T>() + target[j], updates.data<T>() + j * count, count);
  });
}

// Along axis 0 with whole rows (the index_add form, indices expanded over each row): the row each
// index row names, one per row of idx; nullopt when an index row holds two values or idx is no whole
// rows.
std::optional<std::vector<int64_t>> WholeRowTargets(const TypedTensor& x, const TypedTensor& idx, int64_t axis) {
  if (axis != 0 || x.rank() < 2 || !std::equal(idx.shape.begin() + 1, idx.shape.end(), x.shape.begin() + 1)) return std::nullopt;
  const int64_t rows = idx.shape[0], row = idx.size() / std::max<int64_t>(rows, 1);
  if (row == 0) return std::nullopt;  // empty rows: the element path (which writes nothing)
  std::vector<int64_t> target(static_cast<size_t>(rows));
  for (int64_t j = 0; j < rows; ++j) {
    int64_t c = IndexAt(idx, j * row);
    for (int64_t k = 1; k < row; ++k)
      if (IndexAt(idx, j * row + k) != c) return std::nullopt;
    if (!Wrap(&c, x.shape[0])) return std::nullopt;
    target[j] = c * row;
  }
  return target;
}

Result<TypedFn> ScatterElements(const KernelInfo& info) {
  const int64_t axis_attr = info.attrs.Int("axis", 0);
  const std::optional<Reduction> reduction = ReductionOf(info.attrs.String("reduction", "none"));
  return TypedFn([axis_attr, reduction](const KernelInputs& in, std::vector<TypedTensor>* out) {
    const TypedTensor &x = *in[0], &idx = *in[1], &updates = *in[2];
    auto axis = Axis(axis_attr, x.rank());
    if (!axis || idx.rank() != x.rank() || idx.shape != updates.shape || updates.dtype != x.dtype || !reduction) return false;
    for (int64_t k = 0; k < x.rank(); ++k)
      if (idx.shape[k] > x.shape[k] && k != *axis) return false;
    if (auto rows = WholeRowTargets(x, idx, *axis)) {
      TypedTensor& y = CopyInto(x, &(*out)[0]);
      return ScatterRuns(*reduction, updates, *rows, idx.rank() ? idx.size() / std::max<int64_t>(idx.shape[0], 1) : 1, &y);
      return true;
    }
    const std::vector<int64_t> strides = Strides(x.shape);
    // Each update's target offset, its axis coordinate from the index: checked before anything is
    // written. `base` is the offset of idx's coordinates but the axis, kept as they advance.
    std::vector<int64_t> target(static_cast<size_t>(idx.size()));
    std::vector<int64_t> coordinate(static_cast<size_t>(x.rank()), 0);
    int64_t base = 0;
    const int64_t axis_dim = x.shape[*axis], axis_stride = strides[*axis];
    for (int64_t j = 0; j < idx.size(); ++j) {
      int64_t c = IndexAt(idx, j);
      if (!Wrap(&c, axis_dim)) return false;
      target[j] = base + c * axis_stride;
      for (int64_t k = x.rank(); k-- > 0;) {  // the next element of idx, row-major
        const int64_t step = k == *axis ? 0 : strides[k];
        if (++coordinate[k] < idx.shape[k]) {
          base += step;
          break;
        }
        base -= step * (idx.shape[k] - 1);
        coordinate[k] = 0;
      }
    }
    TypedTensor& y = CopyInto(x, &(*out)[0]);
    if (!ScatterRuns(*reduction, updates, target, 1, &y)) return false;
    return true;
  });
}

Result<TypedFn> ScatterND(const KernelInfo& info) {
  const std::optional<Reduction> reduction = ReductionOf(info.attrs.String("reduction", "none"));
  return TypedFn([reduction](const KernelInputs& in, std::vector<TypedTensor>* out) {
    const TypedTensor &x = *in[0], &idx = *in[1], &updates = *in[2];
    if (idx.rank() < 1 || updates.dtype != x.dtype || !reduction) return false;
    const int64_t last = idx.shape.back();
    if (last > x.rank()) return false;
    int64_t slice = 1;
    for (int64_t k = last; k < x.rank(); ++k) slice *= x.shape[k];
    const int64_t tuples = last ? idx.size() / last : 0;
    if (updates.size() != tuples * slice) return false;
    const std::vector<int64_t> strides = Strides(x.shape);
    std::vector<int64_t> target(static_cast<size_t>(tuples));
    for (int64_t t = 0; t < tuples; ++t)
      if (!TupleOffset(x, idx, t, last, 0, 0, strides, &target[t])) return false;
    TypedTensor& y = CopyInto(x, &(*out)[0]);
    if (!ScatterRuns(*reduction, updates, target, slice, &y)) return false;
    return true;
  });
}

template <class T>
void NonZeroOf(const TypedTensor& x, std::vector<TypedTensor>* out) {
  const T* v = x.data<T>();
  const int64_t n = x.size();
  int64_t hits = 0;
  for (int64_t j = 0; j < n; ++j) hits += v[j] != T(0);
  const int64_t rank = std::max<int64_t>(x.rank(), 1);
  TypedTensor y(DType::kInt64, {rank, hits});
  int64_t* coordinates = y.data<int64_t>();
  std::vector<int64_t> at(static_cast<size_t>(rank), 0);
  const std::vector<int64_t> dims = x.rank() ? x.shape : std::vector<int64_t>{1};
  int64_t h = 0;
  for (int64_t j = 0; j < n; ++j) {
    if (v[j] != T(0)) {
      for (int64_t k = 0; k < rank; ++k) coordinates[k * hits + h] = x.rank() ? at[k] : 0;
      ++h;
    }
    for (int64_t k = rank; k-- > 0;) {
      if (++at[k] < dims[k]) break;
      at[k] = 0;
    }
  }
  (*out)[0] = std::move(y);
}

Result<TypedFn> NonZero(const KernelInfo&) {
  return TypedFn([](const KernelInputs& in, std::vector<TypedTensor>* out) {
    const TypedTensor& x = *in[0];
    switch (x.dtype) {
      case DType::kBool: NonZeroOf<bool>(x, out); return true;
      case DType::kUInt8: NonZeroOf<uint8_t>(x, out); return true;
      case DType::kInt8: NonZeroOf<int8_t>(x, out); return true;
      default: return VisitReducible(x.dtype, [&](auto tag) { NonZeroOf<decltype(tag)>(x, out); });
    }
  });
}

// TopK in T with the reference's order: larger (smaller) first, ties by the lower index.
Result<TypedFn> TopK(const KernelInfo& info) {
  const bool largest = info.attrs.Int("largest", 1) != 0, sorted = info.attrs.Int("sorted", 1) != 0;
  const int64_t axis_attr = info.attrs.Int("axis", -1);
  return TypedFn([largest, sorted, axis_attr](const KernelInputs& in, std::vector<TypedTensor>* out) {
    const TypedTensor& x = *in[0];
    if (in.size() < 2 || !in[1] || in[1]->size() != 1) return false;
    auto axis = Axis(axis_attr, x.rank());
    if (!axis) return false;
    const int64_t k = in[1]->IntAt(0), dim = x.shape[*axis];
    if (k < 0 || k > dim) return false;
    int64_t inner = 1;
    for (int64_t d = *axis + 1; d < x.rank(); ++d) inner *= x.shape[d];
    const int64_t outer = dim && inner ? x.size() / (dim * inner) : 0;
    std::vector<int64_t> shape = x.shape;
    shape[*axis] = k;
    TypedTensor values(x.dtype, shape), indices(DType::kInt64, shape);
    return VisitReducible(x.dtype, [&](auto tag) {
      using T = decltype(tag);
      const T* v = x.data<T>();
      ParallelFor(outer * inner, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, dim)), [&](int64_t begin, int64_t end) {
        std::vector<int64_t> order;  // a row's order, made only for rows the few-of-many pass cannot take
        for (int64_t row = begin; row < end; ++row) {
          const int64_t o = row / inner, i = row % inner;
          auto at = [&](int64_t a) { return (o * dim + a) * inner + i; };
          const float* contiguous = nullptr;
          if constexpr (std::is_same_v<T, float>) contiguous = inner == 1 ? v + o * dim : nullptr;
          if (order.size() < static_cast<size_t>(k)) order.resize(static_cast<size_t>(k));
          const bool few = contiguous && TakesFewOfMany(k, dim) &&
                           TopFewOfManyFloat(contiguous, dim, k, largest, sorted, order.data());
          if (!few) {
            order.resize(static_cast<size_t>(dim));
            TopKOrder(k, largest, sorted, [&](int64_t a) { return static_cast<double>(v[at(a)]); }, &order, contiguous);
          }
          for (int64_t j = 0; j < k; ++j) {
            const int64_t to = (o * k + j) * inner + i;
            values.data<T>()[to] = v[at(order[j])];
            indices.data<int64_t>()[to] = order[j];
          }
        }
      });
      (*out)[0] = std::move(values);
      if (out->size() > 1) (*out)[1] = std::move(indices);
    });
  });
}

// One block of `n` (at most kArgBlock) inner positions of ArgMax / ArgMin: row[a * inner + i] for
// a in [0, dim), the winner's a into at[i]. Compared as the reference compares (int64 as double).
constexpr int64_t kArgBlock = 256;
template <bool kMax, bool kLast, class T>
void ArgExtremeBlock(const T* __restrict row, int64_t dim, int64_t inner, int64_t n, int64_t* __restrict at) {
  using C = std::conditional_t<std::is_same_v<T, int64_t>, double, T>;
  C best[kArgBlock];
  int32_t which[kArgBlock];
  for (int64_t i = 0; i < n; ++i) best[i] = static_cast<C>(row[i]), which[i] = 0;
  for (int32_t a = 1; a < dim; ++a) {
    const T* __restrict r = row + a * inner;
    for (int64_t i = 0; i < n; ++i) {
      const C v = static_cast<C>(r[i]);
      const bool take = (kMax ? v > best[i] : v < best[i]) || (kLast && v == best[i]);
      best[i] = take ? v : best[i];
      which[i] = take ? a : which[i];
    }
  }
  for (int64_t i = 0; i < n; ++i) at[i] = which[i];
}

// ArgMax / ArgMin with the reference's rule: the first extreme (the last with select_last_index);
// nothing compares past a NaN, so one in front stays and a later one is never taken; blocks of the
// inner axes on the threads.
template <bool kMax>
Result<TypedFn> ArgExtreme(const KernelInfo& info) {
  const int64_t axis_attr = info.attrs.Int("axis", 0);
  const bool keepdims = info.attrs.Int("keepdims", 1) != 0, last = info.attrs.Int("select_last_index", 0) != 0;
  return TypedFn([axis_attr, keepdims, last](const KernelInputs& in, std::vector<TypedTensor>* out) {
    const TypedTensor& x = *in[0];
    auto axis = Axis(axis_attr, x.rank());
    if (!axis || x.size() == 0 || x.shape[*axis] > INT32_MAX) return false;
    const int64_t dim = x.shape[*axis];
    int64_t inner = 1;
    for (int64_t d = *axis + 1; d < x.rank(); ++d) inner *= x.shape[d];
    const int64_t outer = x.size() / (dim * inner), blocks = (inner + kArgBlock - 1) / kArgBlock;
    std::vector<int64_t> shape = x.shape;
    if (keepdims) shape[*axis] = 1;
    else shape.erase(shape.begin() + *axis);
    TypedTensor y(DType::kInt64, shape);
    return VisitReducible(x.dtype, [&](auto tag) {
      using T = decltype(tag);
      const T* v = x.data<T>();
      int64_t* winners = y.data<int64_t>();
      const auto block = last ? ArgExtremeBlock<kMax, true, T> : ArgExtremeBlock<kMax, false, T>;
      if constexpr (std::is_same_v<T, float>)
        if (inner == 1) {  // along contiguous rows (the last axis): a vector of each row's elements at a time
          ParallelFor(outer, std::max<int64_t>(1, 16384 / dim), [&](int64_t begin, int64_t end) {
            for (int64_t o = begin; o < end; ++o) winners[o] = ArgExtremeAlongRow(v + o * dim, dim, kMax, last);
          });
          (*out)[0] = std::move(y);
          return;
        }
      ParallelFor(outer * blocks, std::max<int64_t>(1, 16384 / (dim * std::min(inner, kArgBlock))), [&](int64_t begin, int64_t end) {
        for (int64_t item = begin; item < end; ++item) {
          const int64_t o = item / blocks, i0 = item % blocks * kArgBlock, n = std::min(kArgBlock, inner - i0);
          if constexpr (std::is_same_v<T, float>) ArgExtremeFloatRows(v + o * dim * inner + i0, dim, inner, n, kMax, last, winners + o * inner + i0);
          else block(v + o * dim * inner + i0, dim, inner, n, winners + o * inner + i0);
        }
      });
      (*out)[0] = std::move(y);
    });
  });
}

// OneHot: the off value everywhere, the on value at each index in range (a negative one counts
// from the end), the values moved as bytes.
Result<TypedFn> OneHot(const KernelInfo& info) {
  const int64_t axis_attr = info.attrs.Int("axis", -1);
  return TypedFn([axis_attr](const KernelInputs& in, std::vector<TypedTensor>* out) {
    if (in.size() < 3 || !in[0] || !in[1] || !in[2]) return false;
    const TypedTensor &indices = *in[0], &depth_t = *in[1], &values = *in[2];
    if (depth_t.size() != 1 || values.size() != 2 || !IsNumeric(indices.dtype)) return false;
    const int64_t depth = static_cast<int64_t>(depth_t.At(0));
    auto axis = Axis(axis_attr, indices.rank() + 1);
    if (depth <= 0 || !axis) return false;
    std::vector<int64_t> shape = indices.shape;
    shape.insert(shape.begin() + *axis, depth);
    int64_t inner = 1;
    for (int64_t k = *axis; k < indices.rank(); ++k) inner *= indices.shape[k];
    TypedTensor y(values.dtype, shape);
    const size_t bytes = ElementBytes(values.dtype);
    const std::byte *off = values.bytes.data(), *on = off + bytes;
    RepeatElement(off, bytes, y.size(), y.bytes.data());
    for (int64_t j = 0; j < indices.size(); ++j) {
      int64_t i = indices.dtype == DType::kInt64 ? indices.data<int64_t>()[j] : static_cast<int64_t>(indices.At(j));
      if (!Wrap(&i, depth)) continue;
      std::memcpy(y.bytes.data() + ((j / inner * depth + i) * inner + j % inner) * bytes, on, bytes);
    }
    (*out)[0] = std::move(y);
    return true;
  });
}

}  // namespace

void RegisterTypedIndexKernels(KernelRegistry* r) {
  std::vector<DType> movable = NumericTypes();
  movable.push_back(DType::kBool);
  auto add = [&](const char* op, int since, std::function<Result<TypedFn>(const KernelInfo&)> make, std::vector<DType> types) {
    r->Add({op, since, INT_MAX, std::move(types), 0, Typed(std::move(make)), false, "typed"});
  };
  add("Gather", 1, Gather, movable);
  add("GatherElements", 11, GatherElements, movable);
  add("GatherND", 11, GatherND, movable);
  add("ScatterElements", 11, ScatterElements, movable);
  add("ScatterND", 11, ScatterND, movable);
  add("NonZero", 9, NonZero, {DType::kBool, DType::kUInt8, DType::kInt8, DType::kInt32, DType::kInt64, DType::kFloat32, DType::kFloat64});
  add("TopK", 10, TopK, {DType::kInt32, DType::kInt64, DType::kFloat32, DType::kFloat64});
  add("Transpose", 1, Transpose, movable);
  const std::vector<DType> comparable = {DType::kFloat32, DType::kFloat64, DType::kInt64, DType::kInt32};
  add("ArgMax", 1, ArgExtreme<true>, comparable);
  add("ArgMin", 1, ArgExtreme<false>, comparable);
  r->Add({"OneHot", 9, INT_MAX, NumericTypes(), 1, Typed(OneHot), false, "typed"});
}

}  // namespace tilebank::engine::kernels
