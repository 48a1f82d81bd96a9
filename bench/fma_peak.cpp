// Prints this machine's fp32 FMA peak on N threads as JSON, measured now: model_bench.py quotes
// each model's share of it, measured beside the model runs.
//   usage: fma_peak [THREADS]   (default: all cores)
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "bench/machine_peaks.h"

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : static_cast<int>(std::thread::hardware_concurrency());
  if (threads < 1) {
    std::fprintf(stderr, "fma_peak: THREADS must be a positive number\n");
    return 2;
  }
  std::printf("{\"threads\": %d, \"fma_gflops\": %.1f}\n", threads, tilebank::bench::FmaGflops(threads));
  return 0;
}
