// Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceLogSum, ReduceLogSumExp, ReduceSumSquare (axes, keepdims, noop_with_empty_axes), ArgMax and
// ArgMin, and CumSum, over every numeric type. Floating sums accumulate in double, integer ones in
// their own type's arithmetic through int64.
#include <cmath>
#include <limits>

#include "engine/kernels/elementwise.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/reduction_plan.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

enum class Kind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// Calls visit(in_index, out_index) for every input element.
template <class F>
void Walk(const std::vector<int64_t>& shape, const Reduction& r, F visit) {
  const std::vector<int64_t> out_strides = Strides(r.out_shape);
  const int64_t n = Tensor::NumElements(shape);
  std::vector<int64_t> index(shape.size(), 0);
  int64_t out = 0;
  for (int64_t i = 0; i < n; ++i) {
    visit(i, out);
    for (size_t d = shape.size(); d-- > 0;) {
      const int64_t step = r.reduced[d] ? 0 : out_strides[d];
      if (++index[d] < shape[d]) {
        out += step;
        break;
      }
      out -= step * (shape[d] - 1);
      index[d] = 0;
    }
  }
}

KernelFactory Reduce(Kind kind) {
  return [kind](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    return FunctionKernel([kind, info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
      const TypedTensor& x = *in[0];
      std::vector<int64_t> axes = info.attrs.Ints("axes");
      if (in.size() > 1 && in[1]) axes = IntValues(*in[1]);
      std::string why;
      auto plan = PlanReduction(x.shape, axes, info.attrs.Int("keepdims", 1) != 0, info.attrs.Int("noop_with_empty_axes", 0) != 0, &why);
      if (!plan) return info.Bad(why);
      const int64_t outputs = Tensor::NumElements(plan->out_shape);
      const int64_t per_output = outputs ? x.size() / outputs : 0;
      Status status = Status::Ok();
      VisitNumeric(
          x.dtype,
          [&](auto tag) {
            using T = decltype(tag);
            const bool integral = std::is_integral_v<T>;
            std::vector<double> acc(outputs, kind == Kind::kProd ? 1.0 : kind == Kind::kMax ? -INFINITY : kind == Kind::kMin ? INFINITY : 0.0);
            std::vector<int64_t> iacc(outputs, kind == Kind::kProd ? 1 : kind == Kind::kMax ? std::numeric_limits<int64_t>::min()
                                                                   : kind == Kind::kMin  ? std::numeric_limits<int64_t>::max() : 0);
            std::vector<double> top(outputs, -INFINITY);  // LogSumExp's maxima
            if (kind == Kind::kLogSumExp) Walk(x.shape, *plan, [&](int64_t i, int64_t o) { top[o] = std::max(top[o], x.At(i)); });
            Walk(x.shape, *plan, [&](int64_t i, int64_t o) {
              if (integral) {
                const int64_t v = x.IntAt(i);
                switch (kind) {
                  case Kind::kMax: iacc[o] = std::max(iacc[o], v); break;
                  case Kind::kMin: iacc[o] = std::min(iacc[o], v); break;
                  case Kind::kProd: iacc[o] *= v; break;
                  case Kind::kL1: iacc[o] += v < 0 ? -v : v; break;
                  case Kind::kSumSquare: iacc[o] += v * v; break;
                  default: iacc[o] += v;
                }
                acc[o] += static_cast<double>(v) * (kind == Kind::kL2 ? static_cast<double>(v) : 1.0);
                return;
              }
              const double v = x.At(i);
              switch (kind) {
                case Kind::kMax: acc[o] = std::isnan(acc[o]) || std::isnan(v) ? NAN : std::max(acc[o], v); break;
                case Kind::kMin: acc[o] = std::isnan(acc[o]) || std::isnan(v) ? NAN : std::min(acc[o], v); break;
                case Kind::kProd: acc[o] *= v; break;
                case Kind::kL1: acc[o] += std::abs(v); break;
                case Kind::kL2: case Kind::kSumSquare: acc[o] += v * v; break;
                case Kind::kLogSumExp: acc[o] += std::exp(v - top[o]); break;
                default: acc[o] += v;
              }
            });
            TypedTensor y(x.dtype, plan->kept_shape);
            for (int64_t o = 0; o < outputs; ++o) {
              if (integral && kind != Kind::kMean && kind != Kind::kL2 && kind != Kind::kLogSum && kind != Kind::kLogSumExp) {
                y.SetIntAt(o, iacc[o]);
                continue;
              }
              double v = acc[o];
              if (kind == Kind::kMean) v = per_output ? v / static_cast<double>(per_output) : NAN;
              if (kind == Kind::kL2) v = std::sqrt(v);
              if (kind == Kind::kLogSum) v = std::log(v);
              if (kind == Kind::kLogSumExp) v = std::isinf(top[o]) ? top[o] : top[o] + std::log(v);
              y.SetAt(o, v);
            }
            (*out)[0] = std::move(y);
          },
          [&] { status = info.Bad(DTypeName(x.dtype) + " is not a numeric type"); });
      return status;
    });
  };
}

KernelFactory ArgExtreme(bool max) {
  return [max](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    return FunctionKernel([max, info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
      const TypedTensor& x = *in[0];
      std::string why;
      auto plan = PlanReduction(x.shape, {info.attrs.Int("axis", 0)}, info.attrs.Int("keepdims", 1) != 0, false, &why);
      if (!plan || x.rank() == 0) return info.Bad(why.empty() ? "takes an input of rank 1 or more" : why);
      const bool last = info.attrs.Int("select_last_index", 0) != 0;
      int64_t axis_dim = 1, inner = 1;
      for (int64_t k = 0; k < x.rank(); ++k)
        if (plan->reduced[k]) {
          axis_dim = x.shape[k];
          for (int64_t j = k + 1; j < x.rank(); ++j) inner *= x.shape[j];
        }
      const int64_t outputs = Tensor::NumElements(plan->out_shape);
      TypedTensor y(DType::kInt64, plan->kept_shape);
      for (int64_t o = 0; o < outputs; ++o) {
        const int64_t outer = o / inner, i = o % inner;
        int64_t best = 0;
        double best_value = x.size() ? x.At(outer * axis_dim * inner + i) : 0;
        for (int64_t a = 1; a < axis_dim; ++a) {
          const double v = x.At((outer * axis_dim + a) * inner + i);
          if (max ? (v > best_value || (last && v == best_value)) : (v < best_value || (last && v == best_value))) best = a, best_value = v;
        }
        y.data<int64_t>()[o] = best;
      }
      (*out)[0] = std::move(y);
      return Status::Ok();
    });
  };
}

Result<std::unique_ptr<OpKernel>> MakeCumSum(const KernelInfo& info) {
  const bool exclusive = info.attrs.Int("exclusive", 0) != 0, reverse = info.attrs.Int("reverse", 0) != 0;
  return FunctionKernel([info, exclusive, reverse](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    if (in.size() < 2 || !in[1] || in[1]->size() != 1) return info.Bad("takes a scalar axis");
    auto axis = Axis(in[1]->IntAt(0), x.rank());
    if (!axis) return info.Bad("axis outside the input's rank");
    int64_t inner = 1;
    for (int64_t k = *axis + 1; k < x.rank(); ++k) inner *= x.shape[k];
    const int64_t dim = x.shape[*axis], outer = dim ? x.size() / (dim * inner) : 0;
    TypedTensor y(x.dtype, x.shape);
    const bool integral = IsInteger(x.dtype);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double sum = 0;
        int64_t isum = 0;
        for (int64_t step = 0; step < dim; ++step) {
          const int64_t a = reverse ? dim - 1 - step : step, at = (o * dim + a) * inner + i;
          if (exclusive) integral ? y.SetIntAt(at, isum) : y.SetAt(at, sum);
          if (integral) isum += x.IntAt(at);
          else sum += x.At(at);
          if (!exclusive) integral ? y.SetIntAt(at, isum) : y.SetAt(at, sum);
        }
      }
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

}  // namespace

void RegisterReduceKernels(KernelRegistry* r) {
  const auto& numeric = NumericTypes();
  r->Add({"ReduceSum", 1, INT_MAX, numeric, 0, Reduce(Kind::kSum)});
  r->Add({"ReduceMean", 1, INT_MAX, numeric, 0, Reduce(Kind::kMean)});
  r->Add({"ReduceMax", 1, INT_MAX, numeric, 0, Reduce(Kind::kMax)});
  r->Add({"ReduceMin", 1, INT_MAX, numeric, 0, Reduce(Kind::kMin)});
  r->Add({"ReduceProd", 1, INT_MAX, numeric, 0, Reduce(Kind::kProd)});
  r->Add({"ReduceL1", 1, INT_MAX, numeric, 0, Reduce(Kind::kL1)});
  r->Add({"ReduceL2", 1, INT_MAX, numeric, 0, Reduce(Kind::kL2)});
  r->Add({"ReduceLogSum", 1, INT_MAX, numeric, 0, Reduce(Kind::kLogSum)});
  r->Add({"ReduceLogSumExp", 1, INT_MAX, numeric, 0, Reduce(Kind::kLogSumExp)});
  r->Add({"ReduceSumSquare", 1, INT_MAX, numeric, 0, Reduce(Kind::kSumSquare)});
  r->Add({"ArgMax", 1, INT_MAX, numeric, 0, ArgExtreme(true)});
  r->Add({"ArgMin", 1, INT_MAX, numeric, 0, ArgExtreme(false)});
  r->Add({"CumSum", 11, INT_MAX, numeric, 0, MakeCumSum});
}

}  // namespace tilebank::engine::kernels
