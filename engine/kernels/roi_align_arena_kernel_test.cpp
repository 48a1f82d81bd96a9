// RoiAlign's arena kernel (roi_align_arena_kernel.cpp): ONNX's node tests through `tilebank run`,
// and against the reference on rois inside, across and outside the map, avg and max, a fixed and an
// adaptive sampling ratio, both coordinate modes; a batch index outside X is named.
#include <doctest/doctest.h>

#include "engine/kernels/kernel_registry.h"
#include "engine/runtime/model_session.h"
#include "tests/test_support.h"

namespace tilebank::engine::kernels {
namespace {

TEST_CASE("RoiAlign in the arena: ONNX's node tests, and the reference's values for avg and max, any sampling, rois past the map") {
  for (const char* name : {"test_roialign_aligned_false", "test_roialign_aligned_true"}) {
    CAPTURE(name);
    const std::string dir = std::string("/usr/share/libonnx-testdata/data/node/") + name;
    auto r = testing::RunCli("run -m " + dir + "/model.onnx --data " + dir + "/test_data_set_0 --repeat 1 --warmup 0 --json --profile");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err << r.out);
    const auto report = nlohmann::json::parse(r.out);
    CHECK(report["check"]["ok"] == true);
    CHECK(report["profile"][0]["source"] == "float32");
  }
  TypedTensor x(DType::kFloat32, {2, 3, 17, 23});
  for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = static_cast<float>((i * 7919) % 211 - 105) * 0.013f;
  const TypedTensor rois = TypedTensor::Of<float>({4, 4}, {1.5f, 2.f, 40.f, 30.f, -8.f, -3.f, 12.f, 9.f, 60.f, 50.f, 90.f, 70.f, 3.f, 3.f, 3.5f, 3.2f});
  const TypedTensor batches = TypedTensor::Of<int64_t>({4}, {1, 0, 1, 0});
  for (const char* mode : {"avg", "max"})
    for (int64_t sampling : {0, 2})
      for (const char* transform : {"half_pixel", "output_half_pixel"}) {
        CAPTURE(mode);
        CAPTURE(sampling);
        CAPTURE(transform);
        KernelInfo info;
        info.op_type = info.node_name = "RoiAlign";
        info.opset = 16;
        info.num_outputs = 1;
        info.attrs = Attrs(nlohmann::json{{"mode", mode}, {"sampling_ratio", sampling}, {"coordinate_transformation_mode", transform},
                                          {"output_height", 3}, {"output_width", 4}, {"spatial_scale", 0.5f}});
        info.input_types = {DType::kFloat32, DType::kFloat32, DType::kInt64};
        info.input_shapes = {x.shape, rois.shape, batches.shape};
        info.output_shapes = {std::vector<int64_t>{4, 3, 3, 4}};
        auto arena = KernelRegistry::Default().Create(info, "float32");
        auto reference = KernelRegistry::Default().Create(info, "reference");
        REQUIRE((arena.ok() && reference.ok()));
        REQUIRE((*arena)->Arena() != nullptr);
        std::vector<TypedTensor> fast(1), slow(1);
        REQUIRE((*arena)->Compute({&x, &rois, &batches}, &fast).ok());
        REQUIRE((*reference)->Compute({&x, &rois, &batches}, &slow).ok());
        const model::Comparison c = model::CompareTypedTensors(fast, slow);
        CHECK_MESSAGE(c.ok, c.worst);
        const TypedTensor outside = TypedTensor::Of<int64_t>({4}, {1, 0, 2, 0});
        const Status refused = (*arena)->Compute({&x, &rois, &outside}, &fast);
        CHECK_MESSAGE(refused.message().find("batch index 2 is outside X's batch") != std::string::npos, refused.message());
      }
}

}  // namespace
}  // namespace tilebank::engine::kernels
