// A tensor read or written in place inside another value's row-major memory: element c of a view is
// at offset + sum(c[d] * strides[d]). The head Transpose, Reshape and Slice around attention become
// views, so that the fused attention kernel (engine/backends/onednn/attention_kernel.h) reads and writes the
// projections' memory directly and those nodes copy nothing.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

namespace tilebank::engine {

struct StridedView {
  std::vector<int64_t> shape, strides;
  int64_t offset = 0;
};

// The whole of a row-major tensor of `shape`.
StridedView RowMajorView(const std::vector<int64_t>& shape);
// Output dimension d is input dimension perm[d] (ONNX Transpose); nullopt for a bad perm.
std::optional<StridedView> TransposeView(const StridedView& v, const std::vector<int64_t>& perm);
// The view of the tensor Transpose(perm) turns into `v`; nullopt for a bad perm.
std::optional<StridedView> UntransposeView(const StridedView& v, const std::vector<int64_t>& perm);
// Elements [start, start + extent) of dimension `axis`.
std::optional<StridedView> SliceView(const StridedView& v, int64_t axis, int64_t start, int64_t extent);
// The same elements in row-major order as a tensor of `shape`, when that needs no copy (numpy's
// rule: dimensions merged or split only where the view is contiguous across them); nullopt else.
std::optional<StridedView> ReshapeView(const StridedView& v, const std::vector<int64_t>& shape);

}  // namespace tilebank::engine
