// Typed reductions (the "typed" line of ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd,
// ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum and ReduceLogSumExp): where the reduced axes are
// one block of the shape (outer, reduced, inner), each output accumulates its elements in the
// reference's order and arithmetic (floating values in double, integers in int64), read in their
// own type a block of inner positions at a time, on the threads. Shapes known only at run time (a
// Loop's body: torch.onnx's EmbeddingBag) land here rather than on the per-element reference.
// Axes that are not one block, other integer reductions and other dtypes run the reference.
#include <cmath>
#include <limits>
#include <type_traits>

#include "engine/core/parallel_for.h"
#include "engine/kernels/reduction_plan.h"
#include "engine/kernels/typed_kernel.h"

namespace tilebank::engine::kernels {
namespace {

enum class Op { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

// acc[i] over row[r * inner + i], r in [0, reduced), for i in [0, n): the reference's step for a
// floating element, in double.
template <Op kOp, class T>
void AccumulateFloating(const T* row, int64_t reduced, int64_t inner, int64_t n, const double* top, double* acc) {
  for (int64_t r = 0; r < reduced; ++r) {
    const T* in = row + r * inner;
    for (int64_t i = 0; i < n; ++i) {
      const double v = static_cast<double>(in[i]);
      double& a = acc[i];
      if constexpr (kOp == Op::kMax) a = std::isnan(a) || std::isnan(v) ? NAN : std::max(a, v);
      else if constexpr (kOp == Op::kMin) a = std::isnan(a) || std::isnan(v) ? NAN : std::min(a, v);
      else if constexpr (kOp == Op::kProd) a *= v;
      else if constexpr (kOp == Op::kL1) a += std::abs(v);
      else if constexpr (kOp == Op::kL2 || kOp == Op::kSumSquare) a += v * v;
      else if constexpr (kOp == Op::kLogSumExp) a += std::exp(v - top[i]);
      else a += v;
    }
  }
}

template <Op kOp>
Result<TypedFn> Reduce(const KernelInfo& info) {
  const std::vector<int64_t> attr_axes = info.attrs.Ints("axes");
  const bool keepdims = info.attrs.Int("keepdims", 1) != 0, noop = info.attrs.Int("noop_with_empty_axes", 0) != 0;
  return TypedFn([attr_axes, keepdims, noop](const KernelInputs& in, std::vector<TypedTensor>* out) {
    const TypedTensor& x = *in[0];
    std::vector<int64_t> axes = attr_axes;
    if (in.size() > 1 && in[1]) axes = IntValues(*in[1]);
    std::string why;
    auto plan = PlanReduction(x.shape, axes, keepdims, noop, &why);
    if (!plan || x.size() == 0) return false;
    // The reduced axes as one block [first, last]; a dimension of one inside it may be either.
    const int64_t rank = x.rank();
    int64_t first = rank, last = -1;
    for (int64_t d = 0; d < rank; ++d)
      if (plan->reduced[d]) first = std::min(first, d), last = d;
    int64_t outer = 1, reduced = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (d >= first && d <= last && !plan->reduced[d] && x.shape[d] != 1) return false;
      (d < first ? outer : d <= last ? reduced : inner) *= x.shape[d];
    }
    const bool integral = IsInteger(x.dtype);
    if (integral && kOp != Op::kSum && kOp != Op::kMean && kOp != Op::kMax && kOp != Op::kMin) return false;
    TypedTensor y(x.dtype, plan->kept_shape);
    return VisitReducible(x.dtype, [&](auto tag) {
      using T = decltype(tag);
      const T* v = x.data<T>();
      constexpr int64_t kBlock = 256;
      const int64_t blocks = (inner + kBlock - 1) / kBlock;
      ParallelFor(outer * blocks, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, reduced * std::min(inner, kBlock))), [&](int64_t begin, int64_t end) {
        double acc[kBlock], top[kBlock];
        int64_t iacc[kBlock];
        for (int64_t item = begin; item < end; ++item) {
          const int64_t o = item / blocks, i0 = item % blocks * kBlock, n = std::min(kBlock, inner - i0);
          const T* row = v + o * reduced * inner + i0;
          const int64_t at = o * inner + i0;
          if constexpr (std::is_integral_v<T>) {
            // The reference's integer reductions: in int64 (Mean's sum in double).
            for (int64_t i = 0; i < n; ++i)
              acc[i] = 0, iacc[i] = kOp == Op::kMax ? std::numeric_limits<int64_t>::min() : kOp == Op::kMin ? std::numeric_limits<int64_t>::max() : 0;
            for (int64_t r = 0; r < reduced; ++r)
              for (int64_t i = 0; i < n; ++i) {
                const int64_t e = row[r * inner + i];
                if constexpr (kOp == Op::kMax) iacc[i] = std::max(iacc[i], e);
                else if constexpr (kOp == Op::kMin) iacc[i] = std::min(iacc[i], e);
                else iacc[i] += e, acc[i] += static_cast<double>(e);
              }
            for (int64_t i = 0; i < n; ++i)
              if (kOp == Op::kMean) y.SetAt(at + i, acc[i] / static_cast<double>(reduced));
              else y.data<T>()[at + i] = static_cast<T>(iacc[i]);
          } else {
            for (int64_t i = 0; i < n; ++i) acc[i] = kOp == Op::kProd ? 1.0 : kOp == Op::kMax ? -INFINITY : kOp == Op::kMin ? INFINITY : 0.0;
            if constexpr (kOp == Op::kLogSumExp) {
              for (int64_t i = 0; i < n; ++i) top[i] = -INFINITY;
              for (int64_t r = 0; r < reduced; ++r)
                for (int64_t i = 0; i < n; ++i) top[i] = std::max(top[i], static_cast<double>(row[r * inner + i]));
            }
            AccumulateFloating<kOp>(row, reduced, inner, n, top, acc);
            for (int64_t i = 0; i < n; ++i) {
              double r = acc[i];
              if constexpr (kOp == Op::kMean) r = r / static_cast<double>(reduced);
              if constexpr (kOp == Op::kL2) r = std::sqrt(r);
              if constexpr (kOp == Op::kLogSum) r = std::log(r);
              if constexpr (kOp == Op::kLogSumExp) r = std::isinf(top[i]) ? top[i] : top[i] + std::log(r);
              y.data<T>()[at + i] = static_cast<T>(r);
            }
          }
        }
      });
      (*out)[0] = std::move(y);
    });
  });
}

}  // namespace

void RegisterTypedReduceKernels(KernelRegistry* r) {
  const std::vector<DType> types = {DType::kFloat32, DType::kFloat64, DType::kInt64, DType::kInt32};
  auto add = [&](const char* op, std::function<Result<TypedFn>(const KernelInfo&)> make) {
    r->Add({op, 1, INT_MAX, types, 0, Typed(std::move(make)), false, "typed"});
  };
  add("ReduceSum", Reduce<Op::kSum>);
  add("ReduceMean", Reduce<Op::kMean>);
  add("ReduceMax", Reduce<Op::kMax>);
  add("ReduceMin", Reduce<Op::kMin>);
  add("ReduceProd", Reduce<Op::kProd>);
  add("ReduceL1", Reduce<Op::kL1>);
  add("ReduceL2", Reduce<Op::kL2>);
  add("ReduceSumSquare", Reduce<Op::kSumSquare>);
  add("ReduceLogSum", Reduce<Op::kLogSum>);
  add("ReduceLogSumExp", Reduce<Op::kLogSumExp>);
}

}  // namespace tilebank::engine::kernels
