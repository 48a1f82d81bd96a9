#include "engine/core/template_catalog.h"

#include <map>
#include <string>

namespace tilebank {

TemplateVersions EngineTemplateVersions() {
  static const std::map<std::string, uint32_t, std::less<>> versions = {
      {"matmul.tiled", 1},      {"gemm.tiled", 1},         {"batch_matmul.tiled", 1}, {"conv2d.direct", 1},
      {"conv2d.im2col", 1},     {"softmax.rowwise", 2},    {"softmax.simd", 1},       {"layernorm.rowwise", 1},  {"reduce.generic", 1},
      {"elementwise.generic", 2}, {"pool2d.generic", 1},   {"impl.onednn", 2},        {"impl.openblas", 1},
      {"int8.onednn", 1},  // QLinearConv and QLinearMatMul: which oneDNN int8 implementation runs them
      {"sgat.fused", 2},  // a subgraph: its anchor with the first `fuse` chain steps inside it, in oneDNN (post-ops) or Halide (2: impl and the anchor knobs)
      {"gdat.split", 1},  // gradients in ready order split into AllReduce segments (engine/gdat/gdat_policy.h)
  };
  return [](std::string_view id) -> std::optional<uint32_t> {
    auto it = versions.find(id);
    if (it == versions.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace tilebank
