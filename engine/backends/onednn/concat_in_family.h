// A Concat in a dense layout family on a copy loop of our own: each output seen as `outer` runs of
// one chunk per input (channels-last along C: a chunk is one position's channels of an input), the
// floats split evenly between the threads. oneDNN 2.6's concat primitive moved 30-45 GB/s on
// DenseNet-121's channels-last concats and ran slower on two threads than on one for GoogLeNet's.
// A Slice along one axis is the same runs read the other way: each output run one chunk of an input
// run (oneDNN's reorder of a sub-memory took 15-40 us for a ConvLSTM gate's 64 of 256 channels in
// NHWC at 32x32).
#pragma once
#include <memory>
#include <vector>

#include <dnnl.hpp>

#include "engine/backends/onednn/onednn_layout_ops.h"

namespace tilebank::engine {

// Each output run of a concat: `chunks[i]` floats of input i, in order, `outer` times.
struct ConcatRuns {
  int64_t outer = 0;
  std::vector<int64_t> chunks;
  int64_t out_chunk = 0;  // the sum of chunks
};

// The runs of a concat along `axis` of `srcs` into `dst` (descriptors of one dense format: the
// same order of axes, blocked on channels or not). kInvalidInput when a descriptor is not dense,
// or the concat splits a block (channel counts that are not whole blocks).
Result<ConcatRuns> ConcatRunsOf(const std::vector<dnnl::memory::desc>& srcs, const dnnl::memory::desc& dst, int64_t axis);

// The kernel of `op` (kConcat) over `srcs` and `dst` as ConcatRunsOf takes them.
Result<std::unique_ptr<Kernel>> ConcatInFamily(const LayoutFamilyOp& op, const std::vector<dnnl::memory::desc>& srcs, const dnnl::memory::desc& dst);

// The kernel of `op` (kSlice of one axis, or of none) reading `src` and writing `dst`, both of one
// dense format; kInvalidInput when a descriptor is not dense, the slice starts inside a block, or
// more than one axis is sliced.
Result<std::unique_ptr<Kernel>> SliceInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& src, const dnnl::memory::desc& dst);

}  // namespace tilebank::engine
