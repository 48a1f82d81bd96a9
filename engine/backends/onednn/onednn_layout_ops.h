// Data-movement operators that run in whatever layout family their neighbours hand over (the
// model executor's layout plan, engine/runtime/executor_layouts.cpp): channel Concat, channel Slice
// (what Split lowers to), a Gather of channels (a channel shuffle), MaxPool, AveragePool and the global pools, nearest and linear Resize of
// the spatial axes, the mean, sum or max over channels (written row-major: one channel), inference
// BatchNormalization (x * scale + shift per channel: DenseNet's norm
// before each convolution), Add, Sub, Mul, Div with a per-channel operand (a squeeze-and-excitation
// scale) or with one value per position (an attention gate's map), group normalization with SiLU
// after it, and the ConvTranspose whose kernel tiles the output. Each is a loop of our own where
// the family is dense over channels (per_channel_in_family.h, per_position_in_family.h,
// resize_in_family.h, group_norm_in_family.h, conv_transpose_in_family.h...) or a oneDNN
// primitive (concat, reorder of a sub-memory, pooling, resampling, binary), over memory
// descriptors of one family: the name HandoverLayoutOf gives, such as "nhwc" or "nChw16c", applied
// to each value's own shape. A convolution's blocked output can then flow through a YOLO neck, a
// DenseNet block or a UNet's decoder without a reorder back to NCHW at every Concat, Split, pool,
// gate and upsampling.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/kernel.h"
#include "engine/core/op_spec.h"
#include "engine/core/resize_taps.h"
#include "base/status.h"

namespace tilebank::engine {

// One such operator: its run-time inputs' shapes and its output's.
struct LayoutFamilyOp {
  enum class Kind {
    kConcat, kSlice, kChannelGather, kPool, kGlobalPool, kChannelReduce, kResize, kBinary, kPerPositionBinary, kAffine, kGroupNorm,
    kConvTransposeTiled
  } kind = Kind::kConcat;
  std::vector<std::vector<int64_t>> inputs;
  // Per input, read row-major whatever the family: kConcat's written so by a step that has no native
  // layout (a frame Gather before a recurrent convolution), kPerPositionBinary's map; empty: every
  // input in the family.
  std::vector<bool> row_major_inputs;
  // Whether input `i` is read row-major (see row_major_inputs).
  bool ReadsRowMajor(size_t i) const { return i < row_major_inputs.size() && row_major_inputs[i]; }
  // A Concat that reads at least one input row-major (oneDNN's concat, one reorder per input).
  bool ReadsRowMajorInputs() const {
    return kind == Kind::kConcat && std::find(row_major_inputs.begin(), row_major_inputs.end(), true) != row_major_inputs.end();
  }
  std::vector<int64_t> output;
  int64_t axis = 1;              // kConcat: the axis joined
  std::vector<int64_t> offsets;  // kSlice: where the output starts in the input, per axis
  std::vector<int64_t> channels; // kChannelGather: per output channel, the input channel it is
  OpSpec pool;                   // kPool: the MaxPool or AveragePool node as an op
  // Whether the output goes row-major whatever the family: kChannelReduce's one channel.
  bool WritesRowMajor() const { return kind == Kind::kChannelReduce; }
  std::string op_type;           // kGlobalPool: GlobalAveragePool or GlobalMaxPool; kChannelReduce: ReduceMean, ReduceSum
                                 // or ReduceMax over axis 1; kBinary: Add, Sub, Mul or Div
                                 // (kBinary: inputs[0] has the output's shape, inputs[1] is [N or 1, C, 1, ...];
                                 // kPerPositionBinary: the same, inputs[1] one value per position, [N or 1, 1, spatial...],
                                 // read row-major whatever the family)
  std::vector<float> scale, shift;  // kAffine, kGroupNorm: per channel; kConvTransposeTiled: W [C, M, k...] and the bias (or none)
  std::vector<int64_t> kernel;      // kConvTransposeTiled: its kernel (= its strides)
  bool relu = false;                // kAffine: Relu after it (FusedBatchNormalization)
  int64_t groups = 1;               // kGroupNorm: channel groups (the channels: InstanceNormalization)
  float epsilon = 1e-5f;            // kGroupNorm
  bool swish = false;               // kGroupNorm: SiLU after it
  // kResize: per spatial axis, each output coordinate's input taps (N and C unchanged). Nearest by
  // whole factors reading input o * in / out (PyTorch's nearest Upsample) runs on oneDNN's
  // resampling, every other resize on our loop (resize_in_family.h).
  std::vector<std::vector<ResizeTap>> taps;
  bool whole_factor_nearest = false;
};

// Whether every unpadded layout family lays `shape` out as row-major: every spatial axis 1 (a pooled
// [N, C, 1, 1]). Such values stay row-major and do not tie their neighbours' layouts.
bool LayoutFree(const std::vector<int64_t>& shape);

// The layout of family `family` over `shape` (row-major, an empty key, when the family is not one
// of the channels-last or channel-blocked formats of rank 3 to 5, or names row-major itself).
HandoverLayout LayoutInFamily(const std::string& family, const std::vector<int64_t>& shape);
// The kernel of `op` reading and writing every value in `family` (RunDirect only: the executor's
// direct path). kInvalidInput when oneDNN has no such primitive or the family does not fit.
Result<std::unique_ptr<Kernel>> LayoutFamilyKernel(const LayoutFamilyOp& op, const std::string& family);

}  // namespace tilebank::engine
