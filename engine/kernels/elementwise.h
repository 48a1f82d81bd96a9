// What the elementwise kernel families share: the type an element is computed in, numpy
// broadcasting, and loops that apply a function over broadcast operands.
#pragma once
#include <cstdint>
#include <type_traits>
#include <vector>

#include "engine/core/broadcast.h"
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

// out[i] = f(a[.], b[.]) over the broadcast of a and b; `out` gets dtype R's and the broadcast
// shape. kInvalidInput (from `info`) when the shapes do not broadcast.
template <class A, class B, class R, class F>
Status Map2(const KernelInfo& info, const TypedTensor& a, const TypedTensor& b, TypedTensor* out, F f) {
  std::vector<int64_t> shape;
  if (!BroadcastShapes({a.shape, b.shape}, &shape))
    return info.Bad("inputs of shapes " + ShapeText(a.shape) + " and " + ShapeText(b.shape) + " do not broadcast");
  *out = TypedTensor(DTypeOf<R>(), shape);
  const A* x = a.data<A>();
  const B* y = b.data<B>();
  R* z = out->data<R>();
  const int64_t n = out->size();
  if (a.shape == b.shape) {
    for (int64_t i = 0; i < n; ++i) z[i] = f(x[i], y[i]);
    return Status::Ok();
  }
  BroadcastWalk walk({a.shape, b.shape}, shape);
  for (int64_t i = 0; i < n; ++i, walk.Next()) z[i] = f(x[walk.offset(0)], y[walk.offset(1)]);
  return Status::Ok();
}

}  // namespace tilebank::engine::kernels
