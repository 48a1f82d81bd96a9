// Weights reordered into a primitive's layout once for every kernel that places the same values in
// the same layout: a model that reads one weight tensor from several nodes (RAFT's update block
// unrolled 4 times, tied weights) held a copy per node (optical_flow: 14.9 MB of placed weights for
// 4.4 MB of its own). The memory lives while a kernel holds it.
#pragma once
#include <memory>

#include <oneapi/dnnl/dnnl.hpp>

namespace tilebank::engine {

// `from` (the op's weights, row-major) reordered into `layout`: the memory an earlier call made from
// the same values into the same layout while some kernel still holds it, else a new one. `*holder`
// keeps it alive (the kernel keeps it as long as it uses the memory). Only layouts oneDNN describes
// as blocked are shared; another (Winograd's, opaque) is reordered for this call alone.
dnnl::memory PlaceWeights(const dnnl::memory& from, const dnnl::memory::desc& layout, dnnl::stream& stream, std::shared_ptr<const void>* holder);

}  // namespace tilebank::engine
