// impl.onednn's Softmax along an axis before the last: each slice's values as ONNX's reference
// computes them, and a slice holding a NaN, a +inf or only -infs NaN throughout (as the reference
// and ONNX Runtime answer), the other slices untouched by them. Along the last axis oneDNN's
// softmax writes such slices finite, and impl.onednn refuses it.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <utility>

#include "engine/backends/onednn/onednn_vector_ops.h"
#include "engine/core/op_spec.h"

namespace tilebank::engine {
namespace {

TEST_CASE("impl.onednn Softmax: slices with a NaN, a +inf or only -infs are NaN throughout, the rest as the reference, and the last axis refused") {
  const float inf = std::numeric_limits<float>::infinity();
  const int64_t slices = 5, len = 37;
  // [5, 3, 37] along 37 (refused); [5, 37, 3] along 37; [5, 37, 1] along 37 (refused: the last axis to oneDNN).
  for (const auto& axis_inner : {std::pair<int64_t, int64_t>{2, 3}, {1, 3}, {1, 1}}) {
    const int64_t axis = axis_inner.first, inner = axis_inner.second;  // not a binding: clang 14 lambdas cannot capture those
    CAPTURE(axis);
    CAPTURE(inner);
    const std::vector<int64_t> shape = axis == 2 ? std::vector<int64_t>{slices, inner, len} : std::vector<int64_t>{slices, len, inner};
    const int64_t count = slices * inner;
    auto at = [&](int64_t slice, int64_t a) {  // slice = outer * inner + i
      const int64_t outer = slice / inner, i = slice % inner;
      return axis == 2 ? (outer * inner + i) * len + a : (outer * len + a) * inner + i;
    };
    Tensor x(shape);
    for (int64_t s = 0; s < count; ++s)
      for (int64_t a = 0; a < len; ++a) x.data[at(s, a)] = static_cast<float>((a * 5 + s) % 11) - 5.f;
    x.data[at(1, 7)] = std::nanf("");
    x.data[at(2, 30)] = inf;
    for (int64_t a = 0; a < len; ++a) x.data[at(3, a)] = -inf;
    OpSpec op;
    op.op_type = "Softmax", op.name = "softmax";
    op.attrs["axis"] = axis;
    op.inputs = {{shape, "float32"}};
    op.outputs = {{shape, "float32"}};
    if (axis == 2 || inner == 1) {
      CHECK(!OneDnnSupportsVectorOp(op).ok());
      continue;
    }
    REQUIRE(OneDnnSupportsVectorOp(op).ok());
    auto kernel = OneDnnVectorKernel(op);
    REQUIRE(kernel->Prepare({&x}).ok());
    REQUIRE(kernel->Run().ok());
    Tensor y;
    REQUIRE(kernel->Fetch(&y).ok());
    for (int64_t s = 0; s < count; ++s) {
      CAPTURE(s);
      double top = -inf, sum = 0;
      for (int64_t a = 0; a < len; ++a) top = std::max(top, double(x.data[at(s, a)]));
      for (int64_t a = 0; a < len; ++a) sum += std::exp(x.data[at(s, a)] - top);
      for (int64_t a = 0; a < len; ++a) {
        const double want = std::exp(x.data[at(s, a)] - top) / sum;
        const float got = y.data[at(s, a)];
        if (s >= 1 && s <= 3)
          CHECK(std::isnan(got));
        else
          CHECK(std::fabs(got - want) < 1e-6);
      }
    }
  }
}

}  // namespace
}  // namespace tilebank::engine
