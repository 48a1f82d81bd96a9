// A Halide kernel stored in the kernel disk cache with a run description runs in a later process
// (here: another cache object over the same folder) without its pipeline being defined, and
// computes what the compiled one computes, on the copying and the direct path, a constant input
// held by the kernel; a program that converts its input has no description.
#include "engine/backends/halide/prebuilt_kernel.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/backends/halide/builder.h"
#include "engine/backends/halide/kernel_disk_cache.h"
#include "engine/catalog/template_registry.h"
#include "engine/backends/op_template.h"
#include "tests/test_support.h"

namespace tilebank::engine {
namespace {

OpSpec AddOp() {  // y[7, 53] = x[7, 53] + b[53] (a shape no other test compiles: the builder's memory would skip the disk)
  auto op = ParseOpSpec(nlohmann::json{{"op", "Add"},
                                       {"input_desc", {{{"shape", {7, 53}}, {"type", "float32"}}, {{"shape", {53}}, {"type", "float32"}}}},
                                       {"output_desc", {{{"shape", {7, 53}}, {"type", "float32"}}}}},
                        0);
  REQUIRE(op.ok());
  return op.value();
}

std::vector<float> RunCopying(Kernel& k, const Tensor& x, const Tensor& b) {
  REQUIRE(k.Prepare({&x, &b}).ok());
  REQUIRE(k.Run().ok());
  Tensor y;
  REQUIRE(k.Fetch(&y).ok());
  return y.data;
}

std::vector<float> RunDirect(Kernel& k, const Tensor& x, const Tensor& b) {
  auto bound = k.BindDirect({{7, 53}, {53}}, {nullptr, &b});  // b a constant
  REQUIRE(bound.ok());
  REQUIRE(*bound);
  std::vector<float> y(7 * 53, -1.f);
  REQUIRE(k.RunDirect({x.data.data(), nullptr}, y.data()).ok());
  return y;
}

TEST_CASE("a cached Halide kernel with a run description runs in a later process without Halide") {
  testing::TempDir dir;
  const OpSpec op = AddOp();
  const OpTemplate* t = TemplateById("elementwise.generic");
  REQUIRE(t);
  Tensor x({7, 53}), b({53});
  for (int64_t i = 0; i < x.size(); ++i) x.data[i] = 0.25f * static_cast<float>(i) - 9.f;
  for (int64_t i = 0; i < b.size(); ++i) b.data[i] = static_cast<float>(i % 5) - 2.f;
  std::vector<float> want(x.data.size());
  for (size_t i = 0; i < want.size(); ++i) want[i] = x.data[i] + b.data[i % 53];

  KernelDiskCache first(dir.path() + "/kernels");
  const size_t prebuilt_before = SharedBuilder().stats().prebuilt;
  {
    KernelDiskCacheScope scope(&first);
    auto compiled = t->Build(op, t->DefaultPolicy(op));
    REQUIRE_MESSAGE(compiled.ok(), compiled.status().message());
    CHECK(first.stats().compiled + first.stats().loaded == 1);
    CHECK(RunCopying(**compiled, x, b) == want);
  }
  CHECK(SharedBuilder().stats().prebuilt == prebuilt_before);
  int descriptions = 0;
  for (const auto& e : std::filesystem::directory_iterator(first.dir())) descriptions += e.path().extension() == ".run";
  CHECK(descriptions == 1);

  KernelDiskCache second(dir.path() + "/kernels");
  KernelDiskCacheScope scope(&second);
  auto again = t->Build(op, t->DefaultPolicy(op));
  REQUIRE_MESSAGE(again.ok(), again.status().message());
  CHECK(SharedBuilder().stats().prebuilt == prebuilt_before + 1);
  CHECK(second.stats().loaded == 1);
  CHECK(second.stats().compiled == 0);
  CHECK(RunCopying(**again, x, b) == want);
  auto direct = t->Build(op, t->DefaultPolicy(op));
  REQUIRE(direct.ok());
  CHECK(RunDirect(**direct, x, b) == want);
}

TEST_CASE("a kernel run description: none for a converting program, and a malformed one is refused") {
  HalideProgram converting;
  converting.view_extents.push_back(std::nullopt);  // an input converted on each run
  CHECK(RunDescriptionOf(converting).empty());
  HalideProgram fetching;
  fetching.fetch = [](const Halide::Buffer<float>&, const std::vector<int64_t>&, Tensor*) {};
  CHECK(RunDescriptionOf(fetching).empty());
  const ArgvEntry entry = [](void**) { return 0; };
  CHECK(PrebuiltHalideKernel(entry, "output 1 4 1 4\ninput 0 0\n").ok());
  CHECK_FALSE(PrebuiltHalideKernel(entry, "output 1 4").ok());
  CHECK_FALSE(PrebuiltHalideKernel(entry, "output 1 4 1 4\ninput -1 0\n").ok());
  CHECK_FALSE(PrebuiltHalideKernel(entry, "garbage").ok());
}

}  // namespace
}  // namespace tilebank::engine
