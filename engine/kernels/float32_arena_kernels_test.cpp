// The float32 arena kernels (float32_arena_kernels.cpp) checked against ONNX's backend node tests whose
// size operands are runtime inputs there: here they become initializers (as in exported models), so
// the output shape is known at load and the arena kernel runs through `tilebank run --data`.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <onnx/onnx_pb.h>

#include "tests/test_support.h"
#include "tests/onnx_node_case.h"

namespace tilebank::engine::model {
namespace {

namespace fs = std::filesystem;
using testing::RunCli;
using testing::TempDir;

// Runs node test `dir` with every input after the first made an initializer; the CLI's result.
testing::CommandResult RunWithConstantOperands(const fs::path& dir, const TempDir& scratch) {
  onnx::ModelProto model;
  REQUIRE(testing::ReadProtoFile(dir / "model.onnx", &model));
  auto* g = model.mutable_graph();
  for (int i = 1; i < g->input_size(); ++i) {
    onnx::TensorProto t;
    REQUIRE(testing::ReadProtoFile(dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb"), &t));
    t.set_name(g->input(i).name());
    *g->add_initializer() = t;
  }
  const std::string name = dir.filename().string();
  const fs::path data = fs::path(scratch.path()) / name;
  fs::create_directories(data);
  fs::copy_file(dir / "test_data_set_0/input_0.pb", data / "input_0.pb");
  fs::copy_file(dir / "test_data_set_0/output_0.pb", data / "output_0.pb");
  std::ofstream(data / "model.onnx", std::ios::binary) << model.SerializeAsString();
  return RunCli("run -m " + (data / "model.onnx").string() + " --data " + data.string() + " --repeat 1 --warmup 0 --bank " + (scratch / "none"));
}

TEST_CASE("Resize matches ONNX's node tests in every mode with roi, scales and sizes as constants") {
  TempDir scratch;
  int matched = 0;
  for (const auto& e : fs::directory_iterator("/usr/share/libonnx-testdata/data/node")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("test_resize_", 0) != 0) continue;
    CAPTURE(name);
    auto r = RunWithConstantOperands(e.path(), scratch);
    CHECK_MESSAGE(r.exit_code == 0, r.err << r.out);
    matched += r.exit_code == 0;
  }
  CHECK(matched >= 22);  // nearest (four roundings), linear, cubic, tf_crop_and_resize, exclude_outside
}

}  // namespace
}  // namespace tilebank::engine::model
