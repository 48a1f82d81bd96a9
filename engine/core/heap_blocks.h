// Where glibc's malloc serves large blocks. By default, blocks above its mmap threshold get fresh
// pages from the kernel and return them on free, each page paid again by a fault (and zeroed by
// the kernel): a 3 MB activation of a registry kernel cost about 800 faults every run (a quarter of
// an int8 ResNet-50's time), and a model's weights, which pass through several large buffers while
// it loads (the proto's bytes as they are read, the graph's constants, the kernels' packed copies),
// paid for fresh pages at each: video R3D-18 (133 MB of weights) loaded in 0.31-0.82 s, with the
// blocks kept in the heap in 0.15-0.19 s. KeepLargeBlocksInTheHeap raises the mmap and trim
// thresholds so that freed blocks stay in the heap and serve the next ones.
//
// But blocks kept in the heap stay resident, and a load's buffers, of every size, fragment it: a
// large model peaked at its weights about twice over (video R3D-18 290 MiB, ResNet-50 265, Swin-T
// 291). Where malloc maps its memory in transparent huge pages (engine/core/startup_environment.h:
// the command line's large models), a fresh page costs a fault per 2 MiB, not per 4 KiB, so there
// the load leaves the blocks to glibc's default, each returned as it is freed (226, 227 and 252 MiB),
// and the heap keeps them from the end of the load on, for the runs.
#pragma once

namespace tilebank::engine {

// Whether malloc maps its memory in huge pages (glibc.malloc.hugetlb was set as the process started:
// PrepareStartupEnvironment says so). False until told.
void SetMallocUsesHugePages(bool huge);
bool MallocUsesHugePages();

// Call before a model is read: KeepLargeBlocksInTheHeap, unless malloc uses huge pages.
void PrepareHeapForLoading();
// Call at the end of a load, before the runs (and by PrepareHeapForLoading). Set once per process.
void KeepLargeBlocksInTheHeap();
// Gives the kernel back the whole pages of the heap's free blocks (malloc_trim): what a load's
// phase freed stops counting in the resident memory, and the next phase faults in only what it uses.
// Called between a load's phases (the import's proto freed; the graph's weights freed): peak RSS
// GoogLeNet 115 -> 103 MiB, EfficientNet-B0 116 -> 101, MobileNetV2 74 -> 64, for 0-0.03 s of load.
void ReturnFreeHeapPages();

}  // namespace tilebank::engine
