// libFuzzer target: the ONNX importer on arbitrary model bytes, and whatever it accepts through
// the steps that follow it at load before any kernel is compiled: constant folding, each node's
// operator description, the partition into subgraphs, and the subgraph file as `run --dump`
// writes it. Every failure must be a Status; an exception, a crash or a sanitizer report is a bug.
// A file weights.bin (4 KiB) sits beside the model, so models that keep tensors in external data
// read real bytes.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/passes/constant_fold.h"
#include "engine/ir/node_op_spec.h"
#include "engine/ir/onnx_import.h"
#include "engine/passes/subgraph_file.h"
#include "base/json_text.h"

namespace {

// A directory of this process's own, holding weights.bin; the model is written to model.onnx.
// Removed at exit.
struct WorkDirectory {
  std::string path = (std::filesystem::temp_directory_path() / ("onnx_import_fuzz." + std::to_string(getpid()))).string();
  WorkDirectory() {
    std::filesystem::create_directories(path);
    std::ofstream weights(path + "/weights.bin", std::ios::binary);
    for (int i = 0; i < 4096; ++i) weights.put(static_cast<char>(i * 37));
  }
  ~WorkDirectory() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

const std::string& WorkDir() {
  static const WorkDirectory dir;
  return dir.path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tilebank::engine::model;
  const std::string path = WorkDir() + "/model.onnx";
  {
    std::ofstream model(path, std::ios::binary | std::ios::trunc);
    model.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  auto graph = ImportOnnx(path, {});
  if (!graph.ok()) return 0;
  if (!FoldConstants(&graph.value()).ok()) return 0;
  for (const Node& node : graph->nodes) {
    if (auto op = NodeOpSpec(*graph, node); op.ok()) (void)tilebank::DumpJson(NodeDescription(*graph, node, op->input_values));
  }
  const auto subgraphs = DistinctSubgraphs(*graph);
  (void)tilebank::DumpJson(SubgraphFileJson(subgraphs, "fuzz", "x86_64-fuzz-1c"));
  return 0;
}
