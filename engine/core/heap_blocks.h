// Where glibc's malloc serves large blocks. By default, blocks above its mmap threshold get fresh
// pages from the kernel and return them on free, each page paid again by a fault (and zeroed by
// the kernel): a 3 MB activation of a registry kernel cost about 800 faults every run (a quarter of
// an int8 ResNet-50's time), and a model's weights, which pass through several large buffers while
// it loads (the proto's bytes as they are read, the graph's constants, the kernels' packed copies),
// paid for fresh pages at each: video R3D-18 (133 MB of weights) loaded in 0.31-0.82 s, with the
// blocks kept in the heap in 0.15-0.19 s. KeepLargeBlocksInTheHeap raises the mmap and trim
// thresholds so that freed blocks stay in the heap and serve the next ones. Set once per process;
// call before a model is read.
#pragma once

namespace tilebank::engine {

void KeepLargeBlocksInTheHeap();

}  // namespace tilebank::engine
