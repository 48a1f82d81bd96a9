// The typed Transpose against the reference for every permutation and element size, and the typed ScatterElements against the reference on index_add's form (axis 0, each index row one
// value repeated: whole rows moved or reduced at once) and on rows that mix targets (element by
// element), for every reduction, float32 and int64; and a kernel given last run's output buffer (the
// executor's) computes the same into it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

std::vector<TypedTensor> Scatter(const std::string& implementation, const std::string& reduction, const TypedTensor& x, const TypedTensor& idx,
                                 const TypedTensor& updates, std::vector<TypedTensor> out = std::vector<TypedTensor>(1)) {
  KernelInfo info;
  info.op_type = "ScatterElements";
  info.node_name = "scatter";
  info.opset = 18;
  info.attrs = Attrs(nlohmann::json{{"axis", 0}, {"reduction", reduction}});
  info.input_types = {x.dtype, idx.dtype, updates.dtype};
  auto kernel = KernelRegistry::Default().Create(info, implementation);
  REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
  const Status s = (*kernel)->Compute({&x, &idx, &updates}, &out);
  REQUIRE_MESSAGE(s.ok(), s.message());
  return out;
}

TEST_CASE("typed ScatterElements: whole rows (index_add's form) and mixed rows compute what the reference does") {
  const int64_t rows = 7, cols = 5, updated = 4;
  for (DType dtype : {DType::kFloat32, DType::kInt64}) {
    TypedTensor x(dtype, {rows, cols}), updates(dtype, {updated, cols});
    for (int64_t i = 0; i < x.size(); ++i) x.SetAt(i, static_cast<double>(i % 9) - 3);
    for (int64_t i = 0; i < updates.size(); ++i) updates.SetAt(i, static_cast<double>(i % 7) - 2);
    TypedTensor whole(DType::kInt64, {updated, cols}), mixed(DType::kInt64, {updated, cols});
    const int64_t targets[updated] = {5, 1, -1, 1};  // a negative index, and row 1 twice
    for (int64_t r = 0; r < updated; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        whole.data<int64_t>()[r * cols + c] = targets[r];
        mixed.data<int64_t>()[r * cols + c] = (r + c) % rows;
      }
    for (const char* reduction : {"none", "add", "mul", "max", "min"}) {
      CAPTURE(reduction);
      CAPTURE(DTypeName(dtype));
      for (const TypedTensor* idx : {&whole, &mixed}) {
        const auto reference = Scatter("reference", reduction, x, *idx, updates);
        const auto typed = Scatter("typed", reduction, x, *idx, updates);
        CHECK(typed[0] == reference[0]);
        // Over last run's buffer of another shape and values: the same result.
        std::vector<TypedTensor> reused(1, TypedTensor(dtype, {rows + 3, cols}));
        for (int64_t i = 0; i < reused[0].size(); ++i) reused[0].SetAt(i, 99);
        CHECK(Scatter("typed", reduction, x, *idx, updates, std::move(reused))[0] == reference[0]);
      }
    }
  }
}

TEST_CASE("typed ScatterElements: rows of no elements change nothing") {
  const TypedTensor x(DType::kFloat32, {5, 0}), idx(DType::kInt64, {3, 0}), updates(DType::kFloat32, {3, 0});
  for (const char* reduction : {"none", "add"}) {
    CAPTURE(reduction);
    const auto typed = Scatter("typed", reduction, x, idx, updates);
    CHECK(typed[0].shape == std::vector<int64_t>{5, 0});
    CHECK(typed[0] == Scatter("reference", reduction, x, idx, updates)[0]);
  }
}

std::vector<TypedTensor> TransposeWith(const std::string& implementation, const TypedTensor& x, const std::vector<int64_t>& perm,
                                       std::vector<TypedTensor> out = std::vector<TypedTensor>(1)) {
  KernelInfo info;
  info.op_type = "Transpose";
  info.node_name = "transpose";
  info.opset = 13;
  info.attrs = perm.empty() ? Attrs(nlohmann::json::object()) : Attrs(nlohmann::json{{"perm", perm}});
  info.input_types = {x.dtype};
  auto kernel = KernelRegistry::Default().Create(info, implementation);
  REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
  const Status s = (*kernel)->Compute({&x}, &out);
  REQUIRE_MESSAGE(s.ok(), s.message());
  return out;
}

TEST_CASE("typed Transpose: every permutation of a 4-D tensor, NonZero's [rank, n] turned to rows, every element size, over last run's buffer") {
  for (DType dtype : {DType::kInt64, DType::kInt32, DType::kUInt8, DType::kBool, DType::kFloat16, DType::kFloat64}) {
    CAPTURE(DTypeName(dtype));
    TypedTensor x(dtype, {2, 3, 4, 5});
    for (int64_t i = 0; i < x.size(); ++i) x.SetAt(i, dtype == DType::kBool ? i % 2 : static_cast<double>(i % 97));
    std::vector<int64_t> perm = {0, 1, 2, 3};
    do {
      CAPTURE(perm[0] * 1000 + perm[1] * 100 + perm[2] * 10 + perm[3]);
      CHECK(TransposeWith("typed", x, perm)[0] == TransposeWith("reference", x, perm)[0]);
    } while (std::next_permutation(perm.begin(), perm.end()));
    CHECK(TransposeWith("typed", x, {})[0] == TransposeWith("reference", x, {})[0]);  // no perm: reversed
  }
  TypedTensor indices(DType::kInt64, {1, 7});
  for (int64_t i = 0; i < 7; ++i) indices.SetAt(i, 3 * i);
  std::vector<TypedTensor> reused(1, TypedTensor(DType::kInt64, {9, 9}));
  const auto rows = TransposeWith("typed", indices, {1, 0}, std::move(reused));
  CHECK(rows[0].shape == std::vector<int64_t>{7, 1});
  CHECK(rows[0] == TransposeWith("reference", indices, {1, 0})[0]);
  CHECK(TransposeWith("typed", TypedTensor(DType::kInt64, {0, 3}), {1, 0})[0].shape == std::vector<int64_t>{3, 0});
  std::string chosen;
  KernelInfo info;
  info.op_type = "Transpose", info.node_name = "t", info.opset = 13, info.input_types = {DType::kInt64};
  REQUIRE(KernelRegistry::Default().Create(info, &chosen).ok());
  CHECK(chosen == "typed");
}

// `info`'s typed kernel computes what the reference does on `inputs`, and refuses `outside` (an
// index out of range), which the reference reports.
void CheckTypedAgainstReference(const KernelInfo& info, const KernelInputs& inputs, const KernelInputs& outside) {
  auto typed = KernelRegistry::Default().Create(info, "typed");
  auto reference = KernelRegistry::Default().Create(info, "reference");
  REQUIRE((typed.ok() && reference.ok()));
  std::vector<TypedTensor> got(1), want(1);
  REQUIRE((*typed)->Compute(inputs, &got).ok());
  REQUIRE((*reference)->Compute(inputs, &want).ok());
  CHECK(got[0] == want[0]);
  std::vector<TypedTensor> refused(1);
  CHECK_FALSE((*typed)->Compute(outside, &refused).ok());
}

TEST_CASE("typed GatherElements: torch.gather along every axis as the reference gathers it, indices narrower than the input, negative, out of range refused") {
  for (DType dtype : {DType::kFloat32, DType::kInt64, DType::kUInt8}) {
    CAPTURE(DTypeName(dtype));
    TypedTensor x(dtype, {2, 5, 7, 3});
    for (int64_t i = 0; i < x.size(); ++i) x.SetAt(i, static_cast<double>(i % 251));
    for (int64_t axis = -1; axis < 4; ++axis) {
      CAPTURE(axis);
      const int64_t a = axis < 0 ? axis + 4 : axis;
      std::vector<int64_t> shape = {2, 4, 6, 3};  // narrower than x but along the axis, which it exceeds
      shape[a] = 9;
      TypedTensor idx(DType::kInt64, shape);
      for (int64_t i = 0; i < idx.size(); ++i) idx.data<int64_t>()[i] = (i * 7919) % (2 * x.shape[a]) - x.shape[a];  // [-dim, dim)
      KernelInfo info;
      info.op_type = "GatherElements", info.node_name = "g", info.opset = 13, info.input_types = {dtype, DType::kInt64};
      info.attrs = Attrs(nlohmann::json{{"axis", axis}});
      TypedTensor outside = idx;
      outside.data<int64_t>()[idx.size() / 2] = x.shape[a];
      CheckTypedAgainstReference(info, {&x, &idx}, {&x, &outside});
    }
  }
}

TEST_CASE("typed GatherND: one element per index (a score per selected box) as the reference gathers it, negative indices, out of range refused") {
  for (DType dtype : {DType::kFloat32, DType::kInt64, DType::kInt32, DType::kFloat64}) {
    CAPTURE(DTypeName(dtype));
    TypedTensor x(dtype, {10});
    for (int64_t i = 0; i < 10; ++i) x.SetAt(i, static_cast<double>(i * 3 - 7));
    const TypedTensor idx = TypedTensor::Of<int64_t>({6, 1}, {0, 9, -1, 4, 4, -10});
    KernelInfo info;
    info.op_type = "GatherND", info.node_name = "g", info.opset = 13, info.input_types = {dtype, DType::kInt64};
    const TypedTensor outside = TypedTensor::Of<int64_t>({2, 1}, {3, 10});
    CheckTypedAgainstReference(info, {&x, &idx}, {&x, &outside});
  }
}

// Both kernels' outputs on `inputs`, which both must take.
void CheckSameOutputs(const KernelInfo& info, const KernelInputs& inputs, size_t outputs = 1) {
  auto typed = KernelRegistry::Default().Create(info, "typed");
  auto reference = KernelRegistry::Default().Create(info, "reference");
  REQUIRE((typed.ok() && reference.ok()));
  std::vector<TypedTensor> got(outputs), want(outputs);
  REQUIRE((*typed)->Compute(inputs, &got).ok());
  REQUIRE((*reference)->Compute(inputs, &want).ok());
  for (size_t o = 0; o < outputs; ++o) CHECK(got[o] == want[o]);
}

TEST_CASE("typed ArgMax and ArgMin: every axis, ties first or last, NaN never taken, as the reference picks") {
  for (DType dtype : {DType::kFloat32, DType::kInt64, DType::kInt32, DType::kFloat64}) {
    CAPTURE(DTypeName(dtype));
    TypedTensor x(dtype, {2, 7, 5, 300});  // inner 1500: several blocks of 256
    for (int64_t i = 0; i < x.size(); ++i) x.SetAt(i, static_cast<double>((i * 7919) % 13));  // many ties
    if (dtype == DType::kFloat32) x.data<float>()[17] = std::nanf(""), x.data<float>()[5 * 300 + 17] = std::nanf("");
    for (const char* op : {"ArgMax", "ArgMin"})
      for (int64_t axis = -4; axis < 4; ++axis)
        for (int keepdims : {0, 1})
          for (int last : {0, 1}) {
            CAPTURE(op);
            CAPTURE(axis);
            CAPTURE(keepdims);
            CAPTURE(last);
            KernelInfo info;
            info.op_type = op, info.node_name = "a", info.opset = 13, info.input_types = {dtype};
            info.attrs = Attrs(nlohmann::json{{"axis", axis}, {"keepdims", keepdims}, {"select_last_index", last}});
            CheckSameOutputs(info, {&x});
          }
  }
}

TEST_CASE("typed ArgMax and ArgMin along contiguous rows (a vector of each row at a time): every row length, NaN first, in the first vector and later, infinities, all equal") {
  for (int64_t dim : {1, 2, 7, 15, 16, 17, 31, 32, 33, 47, 64, 65, 100, 513}) {
    CAPTURE(dim);
    const int64_t rows = 9;
    TypedTensor x(DType::kFloat32, {rows, dim});
    float* v = x.data<float>();
    for (int64_t i = 0; i < x.size(); ++i) v[i] = static_cast<float>((i * 7919) % 11) - 5.f;  // ties in every row
    auto at = [&](int64_t r, int64_t a) -> float* { return a < dim ? v + r * dim + a : nullptr; };
    if (float* p = at(1, 0)) *p = std::nanf("");
    if (float* p = at(2, 3)) *p = std::nanf("");
    if (float* p = at(3, dim - 1)) *p = std::nanf("");
    if (float* p = at(4, dim / 2)) *p = INFINITY;
    if (float* p = at(5, dim / 3)) *p = -INFINITY;
    for (int64_t a = 0; a < dim; ++a) *at(6, a) = 2.5f;  // all equal: the first, or the last
    for (int64_t a = 0; a < dim; ++a) *at(7, a) = a % 2 ? -0.f : 0.f;
    for (int64_t a = 0; a < dim; ++a) *at(8, a) = static_cast<float>(a % 17);  // the extreme at the end of a lane's run
    for (const char* op : {"ArgMax", "ArgMin"})
      for (int last : {0, 1}) {
        CAPTURE(op);
        CAPTURE(last);
        KernelInfo info;
        info.op_type = op, info.node_name = "a", info.opset = 13, info.input_types = {DType::kFloat32};
        info.attrs = Attrs(nlohmann::json{{"axis", -1}, {"keepdims", 1}, {"select_last_index", last}});
        CheckSameOutputs(info, {&x});
      }
  }
}

TEST_CASE("typed OneHot: every axis, negative and out-of-range indices, values of every width, as the reference writes it") {
  TypedTensor idx(DType::kInt64, {3, 4, 5});
  for (int64_t i = 0; i < idx.size(); ++i) idx.data<int64_t>()[i] = (i * 31) % 25 - 12;  // [-12, 12]: some outside depth 10
  const TypedTensor depth = TypedTensor::Of<int64_t>({}, {10});
  for (DType dtype : {DType::kFloat32, DType::kInt64, DType::kUInt8, DType::kFloat16, DType::kBool}) {
    TypedTensor values(dtype, {2});
    values.SetAt(0, 0), values.SetAt(1, 1);
    for (int64_t axis = -4; axis < 4; ++axis) {
      CAPTURE(DTypeName(dtype));
      CAPTURE(axis);
      KernelInfo info;
      info.op_type = "OneHot", info.node_name = "h", info.opset = 11, info.input_types = {DType::kInt64, DType::kInt64, dtype};
      info.attrs = Attrs(nlohmann::json{{"axis", axis}});
      CheckSameOutputs(info, {&idx, &depth, &values});
    }
  }
}

// TopK of every row of `x` through the registry's fast and reference kernels (the same outputs),
// then TopKOrder of the row at `v` (of `dim` values without NaN) against a stable full sort, with and
// without the values passed for skipping a vector at a time.
void CheckTopK(const TypedTensor& x, const float* v, int64_t dim, int64_t k, int largest, int sorted, bool without_values = false) {
  const TypedTensor kt = TypedTensor::Of<int64_t>({1}, {k});
  KernelInfo info;
  info.op_type = "TopK", info.node_name = "t", info.opset = 11, info.input_types = {DType::kFloat32, DType::kInt64};
  info.attrs = Attrs(nlohmann::json{{"largest", largest}, {"sorted", sorted}});
  CheckSameOutputs(info, {&x, &kt}, 2);
  std::vector<int64_t> want(dim), got(dim);
  std::iota(want.begin(), want.end(), 0);
  std::stable_sort(want.begin(), want.end(), [&](int64_t p, int64_t q) { return largest ? v[p] > v[q] : v[p] < v[q]; });
  if (!sorted) std::sort(want.begin(), want.begin() + k);
  auto value = [&](int64_t a) { return static_cast<double>(v[a]); };
  TopKOrder(k, largest, sorted, value, &got, v);
  CHECK(std::equal(want.begin(), want.begin() + k, got.begin()));
  if (without_values) {
    TopKOrder(k, largest, sorted, value, &got);
    CHECK(std::equal(want.begin(), want.begin() + k, got.begin()));
  }
}

TEST_CASE("typed TopK: a few of many (one pass), some of many (candidates past a bar, or nth_element of pairs) and many of many (radix) as the full sort orders them, ties, -0 and +0, infinities, NaN rows, largest and smallest, sorted or not") {
  TypedTensor x(DType::kFloat32, {3, 2000});
  for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = static_cast<float>((i * 7919) % 97) - 48.f;
  x.data<float>()[2000 + 500] = std::nanf("");  // row 1 falls back to the sort
  for (int64_t row : {0, 2}) {  // zeros of both signs (equal: their index decides) and infinities
    float* v = x.data<float>() + row * 2000;
    v[10] = -0.f, v[11] = 0.f, v[12] = -0.f, v[1990] = -0.f;
    v[20] = INFINITY, v[21] = -INFINITY, v[1500] = INFINITY;
  }
  for (int64_t k : {1, 5, 64, 65, 100, 125, 200, 250, 1000, 1999, 2000})  // 65 to 125 (a sixteenth): past a bar; on: the pairs; 250 (an eighth) on: radix (an argsort: 2000)
    for (int largest : {0, 1})
      for (int sorted : {0, 1}) {
        CAPTURE(k);
        CAPTURE(largest);
        CAPTURE(sorted);
        for (int64_t row : {0, 2}) CheckTopK(x, x.data<float>() + row * 2000, 2000, k, largest, sorted, /*without_values=*/true);
      }
}

TEST_CASE("typed TopK: short rows (at most 128) ordered by counting, as the full sort orders them, ties, -0 and +0, infinities, padding lanes, NaN rows") {
  for (int64_t dim : {1, 7, 16, 17, 54, 128}) {
    TypedTensor x(DType::kFloat32, {2, dim});
    float* v = x.data<float>();
    for (int64_t i = 0; i < dim; ++i) v[i] = static_cast<float>((i * 31) % 11) - 5.f;  // ties throughout
    if (dim > 4) v[1] = -0.f, v[2] = 0.f, v[3] = -INFINITY, v[dim - 1] = INFINITY;
    for (int64_t i = 0; i < dim; ++i) v[dim + i] = v[i];
    v[dim + dim / 2] = std::nanf("");  // row 1: the sort's NaN order
    for (int64_t k : {int64_t{0}, int64_t{1}, dim / 3, dim - 1, dim})
      for (int largest : {0, 1})
        for (int sorted : {0, 1}) {
          if (k < 0) continue;
          CAPTURE(dim);
          CAPTURE(k);
          CAPTURE(largest);
          CAPTURE(sorted);
          CheckTopK(x, v, dim, k, largest, sorted);
        }
  }
}

}  // namespace
}  // namespace tilebank::engine::kernels
