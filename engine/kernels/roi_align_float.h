// RoiAlign over float32 on the threads, shared by the arena kernel (static shapes) and the registry
// kernel (rois counted at run time: a detector's proposals after NonMaxSuppression): each roi's
// bilinear samples found once, in double as the reference finds them (roi_align_samples.h), then
// every channel of its image sums (or takes the max of) them in float32, the rois on the threads.
#pragma once
#include <cstdint>

#include "engine/kernels/op_kernel.h"
#include "engine/kernels/roi_align_samples.h"

namespace tilebank::engine::kernels {

struct RoiAlignFloatInput {
  const float* x = nullptr;     // [N, C, H, W] (H and W as the shape says)
  int64_t N = 0, C = 0;
  const float* rois = nullptr;  // [R, 4]
  int64_t R = 0;
  const void* batches = nullptr;  // [R] batch indices: int64 where `wide`, else int32
  bool wide = true;
};

// out [R, C, ph_n, pw_n] = RoiAlign of `in`; a roi whose batch index is outside [0, N) is recorded
// in `fault` and its output is zeros.
void RoiAlignFloat(const RoiAlignShape& shape, bool use_max, const RoiAlignFloatInput& in, float* out, RunFault* fault);

}  // namespace tilebank::engine::kernels
