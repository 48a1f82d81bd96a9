// ScatterND on the float32 arena for constant indices (torch.onnx's slice assignment, `o[:, 1:, :c] =
// x[:, :-1, :c]`, writes one, its indices folded to a constant): the destination of each updated
// slice is computed once, when the kernel is made, and runs of slices adjacent in both the output
// and the updates are merged into one copy. The output may be placed over the data (each element
// reads the same element of it, or an update), and then only the updates are written. Run-time
// indices, a reduction, an index outside its dimension or updates of another size (which the
// reference reports) leave the node to the typed kernel, and so do updates of the data's own shape:
// the layout plan takes a step that may write over its input, all of whose other inputs have its
// shape or one element, as elementwise, free to run in any layout, which a scatter is not.
#include <algorithm>
#include <cstring>
#include <memory>
#include <set>
#include <vector>

#include "engine/core/parallel_for.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

struct CopyRun {
  int64_t to, from, count;  // in elements: output offset, updates offset, length
};

Result<std::unique_ptr<OpKernel>> ScatterND(const KernelInfo& info) {
  const std::vector<int64_t>& data_shape = *info.InputShape(0);
  const TypedTensor& indices = *info.ConstantInput(1);
  const int64_t q = indices.rank() ? indices.shape.back() : 0, rank = static_cast<int64_t>(data_shape.size());
  if (indices.rank() == 0 || q > rank) return info.Bad("indices' last dimension exceeds the data's rank");
  if (info.attrs.String("reduction", "none") != "none") return info.Bad("a reduction runs on the typed kernel");
  int64_t slice = 1;
  for (int64_t d = q; d < rank; ++d) slice *= data_shape[d];
  const std::vector<int64_t> strides = Strides(data_shape);
  const int64_t tuples = indices.size() / std::max<int64_t>(q, 1);
  std::vector<CopyRun> runs;
  std::set<int64_t> seen;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t to = 0;
    for (int64_t k = 0; k < q; ++k) {
      int64_t i = indices.IntAt(t * q + k);
      if (!Wrap(&i, data_shape[k])) return info.Bad("an index outside its dimension runs on the typed kernel, which reports it");
      to += i * strides[k];
    }
    if (!seen.insert(to).second) return info.Bad("a slice written twice runs on the typed kernel, in order");
    if (!runs.empty() && runs.back().to + runs.back().count == to && runs.back().from + runs.back().count == t * slice) runs.back().count += slice;
    else runs.push_back({to, t * slice, slice});
  }
  const int64_t total = Tensor::NumElements(data_shape);
  if (Tensor::NumElements(*info.InputShape(2)) != tuples * slice) return info.Bad("updates do not match the indices: the typed kernel reports it");
  ArenaFunction f;
  f.runs_on_any_thread = true;
  const int64_t updated = tuples * slice;
  f.overwrites_input = true;
  f.run = [runs, total, updated](const std::vector<const float*>& in, float* out) {
    // The updates read from a copy where they share the output's memory (an alias of the data).
    std::vector<float> held;
    const float* updates = in[2];
    if (updates < out + total && out < updates + updated) updates = (held = std::vector<float>(updates, updates + updated)).data();
    if (in[0] != out) CopyOnThreads(out, in[0], total * sizeof(float));
    ParallelFor(static_cast<int64_t>(runs.size()), std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, runs[0].count)), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) std::memcpy(out + runs[r].to, updates + runs[r].from, runs[r].count * sizeof(float));
    });
  };
  return ArenaKernel(info, std::move(f));
}

// Data and updates float32 of static shapes, the updates not of the data's shape; the indices a
// constant the graph holds.
bool StaticScatterND(const KernelInfo& info) {
  if (info.num_outputs != 1 || !info.OutputShape(0) || !info.graphs.empty() || info.input_types.size() != 3) return false;
  return info.InputType(0) == DType::kFloat32 && info.InputType(2) == DType::kFloat32 && info.InputShape(0) && info.InputShape(2) &&
         *info.InputShape(2) != *info.InputShape(0) && info.InputType(1) == DType::kInt64 && info.ConstantInput(1) && info.ConstantInput(1)->size() > 0;
}

}  // namespace

void RegisterScatterNDArenaKernel(KernelRegistry* r) {
  r->Add({"ScatterND", 11, INT_MAX, {DType::kFloat32}, 0, ScatterND, false, "float32", StaticScatterND});
}

}  // namespace tilebank::engine::kernels
