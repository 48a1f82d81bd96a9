// ScatterND's arena kernel (scatter_nd_arena_kernel.cpp) against the reference: torch.onnx's slice
// assignment (whole planes, merged into runs), single elements, negative indices; written over the
// data in place; duplicate slices, an index outside its dimension, updates of another size or of
// the data's own shape, and a reduction left to the others.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine::kernels {
namespace {

KernelInfo ScatterInfo(const TypedTensor& data, const TypedTensor& indices, const TypedTensor& updates, const char* reduction = "none") {
  KernelInfo info;
  info.op_type = info.node_name = "ScatterND";
  info.opset = 16;
  info.num_outputs = 1;
  info.attrs = Attrs(nlohmann::json{{"reduction", reduction}});
  info.input_types = {DType::kFloat32, DType::kInt64, DType::kFloat32};
  info.input_shapes = {data.shape, indices.shape, updates.shape};
  info.output_shapes = {data.shape};
  info.constant_inputs = {nullptr, std::make_shared<const TypedTensor>(indices), nullptr};
  info.constant_input = {false, true, false};
  return info;
}

TypedTensor Counting(const std::vector<int64_t>& shape, float scale) {
  TypedTensor t(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>(i % 997) * scale;
  return t;
}

TEST_CASE("ScatterND in the arena: slice assignment, elements and negative indices as the reference writes them, also over its data") {
  const TypedTensor data = Counting({2, 8, 4, 5, 6}, 0.5f);
  // o[:, :-1, :2] = x[:, 1:, :2]: indices [2, 7, 2, 3] of (batch, frame, channel), planes of 5x6.
  TypedTensor planes(DType::kInt64, {2, 7, 2, 3});
  for (int64_t b = 0, t = 0; b < 2; ++b)
    for (int64_t f = 0; f < 7; ++f)
      for (int64_t c = 0; c < 2; ++c, ++t) {
        int64_t* at = planes.data<int64_t>() + t * 3;
        at[0] = b, at[1] = f, at[2] = c - (c == 1 ? 4 : 0);  // channel 1 written as -3: counted from the end
      }
  TypedTensor elements(DType::kInt64, {3, 5});
  const int64_t picks[15] = {0, 0, 0, 0, 0, 1, 7, 3, 4, 5, -1, -1, -1, -1, -2};
  std::memcpy(elements.data<int64_t>(), picks, sizeof picks);
  for (const TypedTensor* indices : {&planes, &elements}) {
    std::vector<int64_t> update_shape(indices->shape.begin(), indices->shape.end() - 1);
    for (size_t d = indices->shape.back(); d < data.shape.size(); ++d) update_shape.push_back(data.shape[d]);
    const TypedTensor updates = Counting(update_shape, -1.0f);
    const KernelInfo info = ScatterInfo(data, *indices, updates);
    auto arena = KernelRegistry::Default().Create(info, "float32");
    auto reference = KernelRegistry::Default().Create(info, "reference");
    REQUIRE((arena.ok() && reference.ok()));
    REQUIRE((*arena)->Arena() != nullptr);
    std::vector<TypedTensor> fast(1), slow(1);
    REQUIRE((*arena)->Compute({&data, indices, &updates}, &fast).ok());
    REQUIRE((*reference)->Compute({&data, indices, &updates}, &slow).ok());
    CHECK(fast[0] == slow[0]);
    CHECK_FALSE(fast[0] == data);
    // In place: the output placed over the data, as the memory plan may place it.
    REQUIRE((*arena)->Arena()->overwrites_input);
    TypedTensor over = data;
    (*arena)->Arena()->run({over.data<float>(), nullptr, updates.data<float>()}, over.data<float>());
    CHECK(over == slow[0]);
  }
}

TEST_CASE("ScatterND in the arena: a slice written twice, an index outside its dimension, short updates, updates of the data's shape and a reduction run elsewhere") {
  const TypedTensor data = Counting({4, 3}, 1.0f), updates = Counting({2, 3}, 2.0f);
  const TypedTensor twice = TypedTensor::Of<int64_t>({2, 1}, {1, 1}), outside = TypedTensor::Of<int64_t>({2, 1}, {0, 4}),
                    fine = TypedTensor::Of<int64_t>({2, 1}, {0, 2});
  CHECK_FALSE(KernelRegistry::Default().Create(ScatterInfo(data, twice, updates), "float32").ok());
  CHECK_FALSE(KernelRegistry::Default().Create(ScatterInfo(data, outside, updates), "float32").ok());
  CHECK_FALSE(KernelRegistry::Default().Create(ScatterInfo(data, fine, updates, "add"), "float32").ok());
  CHECK_FALSE(KernelRegistry::Default().Create(ScatterInfo(data, fine, Counting({1, 3}, 2.0f)), "float32").ok());
  // [1, 3] data, indices [[0]], updates [1, 3]: elementwise in shape, which the layout plan would move.
  const TypedTensor row = Counting({1, 3}, 1.0f), first = TypedTensor::Of<int64_t>({1, 1}, {0});
  std::string whole;
  REQUIRE(KernelRegistry::Default().Create(ScatterInfo(row, first, Counting({1, 3}, 2.0f)), &whole).ok());
  CHECK(whole != "float32");
  CHECK(KernelRegistry::Default().Create(ScatterInfo(data, fine, updates), "float32").ok());
  // The table's choice for the duplicate still writes in order, as the reference does.
  std::string chosen;
  auto kernel = KernelRegistry::Default().Create(ScatterInfo(data, twice, updates), &chosen);
  REQUIRE(kernel.ok());
  CHECK(chosen != "float32");
}

}  // namespace
}  // namespace tilebank::engine::kernels
