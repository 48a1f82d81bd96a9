// What the elementwise kernel families share: the type an element is computed in, numpy
// broadcasting, and loops that apply a function over broadcast operands.
#pragma once
#include <cstdint>
#include <type_traits>
#include <vector>

#include "engine/core/broadcast.h"
#include "engine/core/parallel_for.h"
#include "engine/kernels/op_kernel.h"

namespace tilebank::engine::kernels {

// The C++ type elements of T are computed in: float for float16 and bfloat16, T otherwise.
template <class T> struct CalcOf { using type = T; };
template <> struct CalcOf<Float16> { using type = float; };
template <> struct CalcOf<BFloat16> { using type = float; };
template <class T> using Calc = typename CalcOf<T>::type;

template <class T> constexpr bool kIsHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;
template <class T> constexpr bool kIsFloat = kIsHalf<T> || std::is_floating_point_v<T>;

// A computed value stored as T.
template <class T, class V>
T Store(V v) {
  if constexpr (kIsHalf<T>) return T(static_cast<float>(v));
  else return static_cast<T>(v);
}

// Walks a broadcast output in row-major order, keeping each operand's element offset.
class BroadcastWalk {
 public:
  BroadcastWalk(const std::vector<std::vector<int64_t>>& in_shapes, const std::vector<int64_t>& out_shape);
  int64_t offset(size_t operand) const { return offsets_[operand]; }
  void Next();  // to the next output element

 private:
  std::vector<int64_t> out_, index_;
  std::vector<std::vector<int64_t>> strides_;  // [operand][dim]; 0 where the operand broadcasts
  std::vector<int64_t> offsets_;
};

// A broadcast output as rows: its trailing dimensions over which every operand either runs with the
// output (step 1) or stays on one element (step 0), collapsed into one row of inner() elements.
// RowStart gives an operand's element offset at the start of any row, so rows can be taken in any
// order (and split among threads).
class BroadcastRows {
 public:
  BroadcastRows(const std::vector<std::vector<int64_t>>& in_shapes, const std::vector<int64_t>& out_shape);
  int64_t rows() const { return rows_; }
  int64_t inner() const { return inner_; }
  int64_t step(size_t operand) const { return steps_[operand]; }
  int64_t RowStart(size_t operand, int64_t row) const;

 private:
  std::vector<int64_t> outer_;                 // the output's dims before the row
  std::vector<std::vector<int64_t>> strides_;  // [operand][outer dim]; 0 where it broadcasts
  std::vector<int64_t> steps_;
  int64_t rows_ = 1, inner_ = 1;
};

// Output elements a thread takes at least in the elementwise loops.
inline constexpr int64_t kElementwiseGrain = int64_t{1} << 15;

// out[i] = f(a[.], b[.]) over the broadcast of a and b; `out` gets dtype R's and the broadcast
// shape. kInvalidInput (from `info`) when the shapes do not broadcast. A floating or bool result
// (a comparison's, a logical op's) is computed on the threads (ParallelFor): `f` must then be
// safe to call from several at once; an integer f may report an error, and runs on one.
template <class A, class B, class R, class F>
Status Map2(const KernelInfo& info, const TypedTensor& a, const TypedTensor& b, TypedTensor* out, F f) {
  std::vector<int64_t> shape;
  if (!BroadcastShapes({a.shape, b.shape}, &shape))
    return info.Bad("inputs of shapes " + ShapeText(a.shape) + " and " + ShapeText(b.shape) + " do not broadcast");
  ReshapeForOverwrite(out, DTypeOf<R>(), shape);  // last run's buffer, when it has one
  const A* x = a.data<A>();
  const B* y = b.data<B>();
  R* z = out->data<R>();
  const int64_t n = out->size();
  if (n == 0) return Status::Ok();
  const int64_t grain = kIsFloat<R> || std::is_same_v<R, bool> ? kElementwiseGrain : n;
  if (a.shape == b.shape) {
    ParallelFor(n, grain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) z[i] = f(x[i], y[i]);
    });
    return Status::Ok();
  }
  const BroadcastRows rows({a.shape, b.shape}, shape);
  const int64_t inner = rows.inner(), sa = rows.step(0), sb = rows.step(1);
  ParallelFor(rows.rows(), std::max<int64_t>(1, grain / inner), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const A* xr = x + rows.RowStart(0, r);
      const B* yr = y + rows.RowStart(1, r);
      R* zr = z + r * inner;
      if (sa && sb) {
        for (int64_t k = 0; k < inner; ++k) zr[k] = f(xr[k], yr[k]);
      } else if (sa) {
        const B yv = *yr;
        for (int64_t k = 0; k < inner; ++k) zr[k] = f(xr[k], yv);
      } else if (sb) {
        const A xv = *xr;
        for (int64_t k = 0; k < inner; ++k) zr[k] = f(xv, yr[k]);
      } else {
        const R v = f(*xr, *yr);
        for (int64_t k = 0; k < inner; ++k) zr[k] = v;
      }
    }
  });
  return Status::Ok();
}

}  // namespace tilebank::engine::kernels
