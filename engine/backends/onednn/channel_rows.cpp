#include "engine/backends/onednn/channel_rows.h"

namespace tilebank::engine {

Result<ChannelRows> ChannelRowsOf(const dnnl::memory::desc& md, const std::vector<int64_t>& shape) {
  if (md.data.format_kind != dnnl_blocked || shape.size() < 3 || md.data.ndims != static_cast<int>(shape.size()))
    return Status::InvalidInput("a per-channel loop in a layout family takes a blocked descriptor of rank 3 to 5");
  const dnnl_blocking_desc_t& blocking = md.data.format_desc.blocking;
  ChannelRows r;
  if (blocking.inner_nblks == 1 && blocking.inner_idxs[0] == 1) {
    r.block = blocking.inner_blks[0];
  } else if (blocking.inner_nblks != 0 || blocking.strides[1] != 1) {
    return Status::InvalidInput("a per-channel loop in a layout family takes channels-last or channel-blocked layouts");
  }
  // The outer order must be N, channel blocks (blocked), spatial axes, channels (channels-last): dense.
  int64_t expect = r.block ? r.block : shape[1];
  for (int d = md.data.ndims - 1; d >= 2; --d) {  // an axis of one: any stride (a row-major [N, C, 1, 1])
    if (shape[d] != 1 && blocking.strides[d] != expect) return Status::InvalidInput("a per-channel loop in a layout family takes dense layouts");
    expect *= md.data.padded_dims[d];
  }
  if (r.block && blocking.strides[1] != expect) return Status::InvalidInput("a per-channel loop in a layout family takes dense layouts");
  if (r.block) expect *= md.data.padded_dims[1] / r.block;
  if (md.data.offset0 != 0 || (shape[0] > 1 && blocking.strides[0] != expect))
    return Status::InvalidInput("a per-channel loop in a layout family takes dense layouts");
  r.images = shape[0], r.channels = shape[1];
  for (size_t d = 2; d < shape.size(); ++d) r.spatial *= shape[d];
  r.padded = r.block ? (r.channels + r.block - 1) / r.block * r.block : r.channels;
  r.width = r.block ? r.block : r.channels;
  r.rows = r.block ? r.padded / r.block * r.spatial : r.spatial;
  return r;
}

}  // namespace tilebank::engine
