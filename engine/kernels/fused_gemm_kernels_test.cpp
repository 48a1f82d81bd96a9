// FusedGemm's oneDNN kernel against its reference (double): every activation, B transposed or not,
// with and without the bias, A of rank 1, 2 and 3, no rows at all, and one kernel called with two
// row counts in turn (a primitive per count, B packed once).
#include <doctest/doctest.h>

#include <cmath>

#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine::kernels {
namespace {

TypedTensor Values(std::vector<int64_t> shape, int seed) {
  TypedTensor t(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>(std::sin(0.7 * i + seed) * 1.5);
  return t;
}

TEST_CASE("FusedGemm: oneDNN's matmul with packed B and post-ops computes what the reference does") {
  const int64_t K = 12, N = 10;
  for (const char* activation : {"", "Relu", "Sigmoid", "Tanh", "Gelu", "GeluTanh", "Swish"}) {
    for (bool trans_b : {false, true}) {
      for (bool bias : {false, true}) {
        CAPTURE(activation);
        CAPTURE(trans_b);
        CAPTURE(bias);
        KernelInfo info;
        info.op_type = "FusedGemm";
        info.node_name = "fused";
        info.attrs = Attrs(nlohmann::json{{"transB", trans_b ? 1 : 0}, {"activation", activation}});
        info.input_types = {DType::kFloat32, DType::kFloat32};
        if (bias) info.input_types.push_back(DType::kFloat32);
        info.constant_input = {false, true, true};  // B and the bias as the graph holds them
        const TypedTensor b = Values(trans_b ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N}, 1), c = Values({N}, 2);
        auto fast = KernelRegistry::Default().Create(info, "onednn");
        auto reference = KernelRegistry::Default().Create(info, "reference");
        REQUIRE(fast.ok());
        REQUIRE(reference.ok());
        for (const std::vector<int64_t>& a_shape : {std::vector<int64_t>{K}, {5, K}, {2, 3, K}, {0, K}, {7, K}}) {
          CAPTURE(a_shape.size());
          const TypedTensor a = Values(a_shape, 3);
          KernelInputs in = {&a, &b};
          if (bias) in.push_back(&c);
          std::vector<TypedTensor> got(1), want(1);
          REQUIRE((*fast)->Compute(in, &got).ok());
          REQUIRE((*reference)->Compute(in, &want).ok());
          REQUIRE(got[0].shape == want[0].shape);
          double worst = 0;
          for (int64_t i = 0; i < got[0].size(); ++i) worst = std::max(worst, std::fabs(got[0].At(i) - want[0].At(i)));
          CHECK(worst < 1e-4);
        }
      }
    }
  }
}

}  // namespace
}  // namespace tilebank::engine::kernels
