// Room for one kernel call's activations in oneDNN's own layouts (a convolution's blocked source and
// destination, reordered from and to the caller's), on the calling thread: grown to the largest call
// made there and shared by every kernel run there, rather than each kernel holding its own between
// runs (a 3-D ResNet-18's 17 convolutions held 33 MiB of them). A kernel may use it only within one
// call, and must not call another kernel that uses it meanwhile. Kept until the thread ends.
#pragma once
#include <cstddef>

#include <oneapi/dnnl/dnnl.hpp>

namespace tilebank::engine {

inline constexpr size_t kCallScratchAlign = 64;

// At least `bytes` of the calling thread's room, kCallScratchAlign-aligned; what it held is lost.
std::byte* CallScratch(size_t bytes);

// Places `first` and then `second` (either null: none) in the calling thread's room, each over as
// many bytes as its descriptor says: a kernel's reordered source and destination for one call.
void PlaceInCallScratch(dnnl::memory* first, dnnl::memory* second);

}  // namespace tilebank::engine
