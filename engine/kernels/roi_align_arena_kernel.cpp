// RoiAlign on the float32 arena: X [N, C, H, W] and rois [R, 4] in the arena, batch_indices [R]
// (int64 or int32) read as their own elements, on the float32 loop of roi_align_float.h. A batch
// index outside X is the run's error (ArenaFunction::verdict).
#include <algorithm>
#include <cmath>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/roi_align_float.h"

namespace tilebank::engine::kernels {
namespace {

Result<std::unique_ptr<OpKernel>> RoiAlign(const KernelInfo& info) {
  const std::vector<int64_t>& x_shape = *info.InputShape(0);
  const std::vector<int64_t>& rois_shape = *info.InputShape(1);
  if (x_shape.size() != 4 || rois_shape.size() != 2 || rois_shape[1] != 4) return info.Bad("takes X [N, C, H, W], rois [R, 4] and batch_indices [R]");
  const int64_t N = x_shape[0], C = x_shape[1], H = x_shape[2], W = x_shape[3], R = rois_shape[0];
  const int64_t ph_n = info.attrs.Int("output_height", 1), pw_n = info.attrs.Int("output_width", 1), sampling = info.attrs.Int("sampling_ratio", 0);
  if (ph_n < 1 || pw_n < 1) return info.Bad("output_height and output_width must be positive");
  const double scale = info.attrs.Float("spatial_scale", 1.0f);
  const bool half_pixel = info.attrs.String("coordinate_transformation_mode", info.opset >= 16 ? "half_pixel" : "output_half_pixel") == "half_pixel";
  const bool use_max = info.attrs.String("mode", "avg") == "max";
  const bool wide = info.InputType(2) == DType::kInt64;
  const RoiAlignShape shape{H, W, ph_n, pw_n, sampling, scale, half_pixel};
  auto fault = std::make_shared<RunFault>();
  ArenaFunction f;
  f.runs_on_any_thread = true;
  f.run = [=](const std::vector<const float*>& in, float* out) {
    fault->Clear();
    RoiAlignFloat(shape, use_max, {in[0], N, C, in[1], R, in[2], wide}, out, fault.get());
  };
  f.verdict = RunFault::Verdict(fault, info, "batch index", "X's batch", N);
  return ArenaKernel(info, std::move(f));
}

// Static shapes; X and rois float32, batch_indices int64 or int32.
bool StaticRoiAlign(const KernelInfo& info) {
  if (info.num_outputs != 1 || !info.OutputShape(0) || !info.graphs.empty() || info.input_types.size() != 3) return false;
  return info.InputType(0) == DType::kFloat32 && info.InputType(1) == DType::kFloat32 &&
         (info.InputType(2) == DType::kInt64 || info.InputType(2) == DType::kInt32) && info.InputShape(0) && info.InputShape(1) && info.InputShape(2);
}

}  // namespace

void RegisterRoiAlignArenaKernel(KernelRegistry* r) {
  r->Add({"RoiAlign", 10, INT_MAX, {DType::kFloat32}, 0, RoiAlign, false, "float32", StaticRoiAlign});
}

}  // namespace tilebank::engine::kernels
