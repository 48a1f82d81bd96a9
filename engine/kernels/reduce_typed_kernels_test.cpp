// The typed reductions (reduce_typed_kernels.cpp) against the reference, bit for bit: every kind,
// every block of axes (and axes that are not one block, which the reference takes), keepdims, axes
// as an input, NaN, every dtype the typed line takes.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine::kernels {
namespace {

TEST_CASE("typed reductions: every kind and block of axes as the reference reduces them, NaN, integers, axes as an input") {
  const std::vector<std::vector<int64_t>> axis_sets = {{}, {0}, {1}, {3}, {-1}, {1, 2}, {2, 3}, {0, 1, 2, 3}, {0, 2}, {1, 3}};
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt64, DType::kInt32}) {
    TypedTensor x(dtype, {3, 5, 1, 300});  // inner 300 and 1500: more than one block of 256
    for (int64_t i = 0; i < x.size(); ++i) x.SetAt(i, static_cast<double>((i * 7919) % 23) * (dtype == DType::kFloat32 ? 0.37 : 1.0) - 9.0);
    if (dtype == DType::kFloat32) x.data<float>()[301] = std::nanf("");
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum",
                           "ReduceLogSumExp"})
      for (const auto& axes : axis_sets)
        for (int keepdims : {0, 1}) {
          CAPTURE(DTypeName(dtype));
          CAPTURE(op);
          CAPTURE(axes.size());
          CAPTURE(keepdims);
          KernelInfo info;
          info.op_type = op, info.node_name = "r", info.opset = 18, info.input_types = {dtype, DType::kInt64};
          info.attrs = Attrs(nlohmann::json{{"keepdims", keepdims}});
          const TypedTensor axes_input = TypedTensor::Of<int64_t>({static_cast<int64_t>(axes.size())}, std::vector<int64_t>(axes));
          auto typed = KernelRegistry::Default().Create(info, "typed");
          auto reference = KernelRegistry::Default().Create(info, "reference");
          REQUIRE((typed.ok() && reference.ok()));
          std::vector<TypedTensor> got(1), want(1);
          REQUIRE((*typed)->Compute({&x, &axes_input}, &got).ok());
          REQUIRE((*reference)->Compute({&x, &axes_input}, &want).ok());
          CHECK(got[0].shape == want[0].shape);
          const bool same_bits = got[0] == want[0];
          bool both_nan = true;  // NaN != NaN: compare those element by element
          for (int64_t i = 0; i < got[0].size() && !same_bits; ++i)
            both_nan &= got[0].At(i) == want[0].At(i) || (std::isnan(got[0].At(i)) && std::isnan(want[0].At(i)));
          CHECK((same_bits || both_nan));
        }
  }
}

}  // namespace
}  // namespace tilebank::engine::kernels
