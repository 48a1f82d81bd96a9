// The typed ScatterElements against the reference on index_add's form (axis 0, each index row one
// value repeated: whole rows moved or reduced at once) and on rows that mix targets (element by
// element), for every reduction, float32 and int64; and a kernel given last run's output buffer (the
// executor's) computes the same into it.
#include <doctest/doctest.h>

#include "engine/kernels/kernel_registry.h"

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

}  // namespace
}  // namespace tilebank::engine::kernels
