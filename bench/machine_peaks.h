// The machine's anchors for the OPAT benchmark: fp32 FMA peak and memory bandwidth, measured
// here (not taken from a data sheet) with every core busy.
#pragma once
#include <cstddef>

namespace tilebank::bench {

struct MachinePeaks {
  double fma_gflops = 0;       // fp32, all cores, independent FMA chains in vector registers
  double fma_gflops_core = 0;  // one core
  double scale_gbs = 0;        // b[i] = s * a[i] over arrays far larger than the caches (read + write bytes)
  double read_gbs = 0;         // sum of a[i] (read bytes)
  int threads = 0;
};

// The FMA probe is the best of a few runs (a peak is the fastest the machine can go); the
// bandwidth probes are the median of 7 passes, as kernels are timed.
MachinePeaks MeasureMachinePeaks(int threads);

// The two probes alone, so an operator's anchor can be measured next to its kernels: FMA GFLOP/s on `threads` cores, and the scale probe (b[i] = s * a[i], read + write
// bytes counted) over arrays of `elements` floats.
double FmaGflops(int threads);
double ScaleGbs(int threads, size_t elements);

}  // namespace tilebank::bench
