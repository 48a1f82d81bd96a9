// A tensor [N, C, spatial...] in a dense layout family seen as rows of channels: channels-last
// ([N, spatial, C]: a row is one position's C channels) or channel-blocked ([N, C/b, spatial, b]: a
// row is one position's b channels of one block, the last block padded past C). The loops of the
// family kernels of our own (group norm, per-channel and per-position binary ops, pools, resize)
// walk these rows.
#pragma once
#include <cstdint>
#include <vector>

#include <dnnl.hpp>

#include "base/status.h"

namespace tilebank::engine {

struct ChannelRows {
  int64_t block = 0;  // channels per block; 0: channels-last
  int64_t images = 1, channels = 0, spatial = 1;
  int64_t padded = 0;  // channels rounded up to the block
  int64_t width = 0;   // floats per row: the block, or the channels
  int64_t rows = 0;    // rows per image
  int64_t image_size() const { return padded * spatial; }
  // The channel row r (of an image) starts at.
  int64_t FirstChannel(int64_t row) const { return block ? row / spatial * block : 0; }
  // The row after the last one of row r's run of channels (rows of one block, or of the image).
  int64_t RunEnd(int64_t row) const { return block ? (row / spatial + 1) * spatial : rows; }
};

// `md` (a descriptor of `shape`, rank 3 to 5) as rows; kInvalidInput when it is neither dense
// channels-last nor dense blocked over channels alone.
Result<ChannelRows> ChannelRowsOf(const dnnl::memory::desc& md, const std::vector<int64_t>& shape);

}  // namespace tilebank::engine
