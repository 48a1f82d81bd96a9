// Compiled with -O3 -march=native -ffp-contract=fast (CMakeLists.txt): the probes use the widest
// vectors the host has, the way the JIT-compiled kernels do.
#include "bench/machine_peaks.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "engine/backends/halide/huge_pages.h"

namespace tilebank::bench {
namespace {

#if defined(__AVX512F__)
constexpr int kLanes = 16;
#elif defined(__AVX__)
constexpr int kLanes = 8;
#else
constexpr int kLanes = 4;
#endif
typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));
// Enough independent chains to cover FMA latency x FMA ports on current x86 cores.
constexpr int kChains = kLanes == 16 ? 24 : 12;

double Seconds(const std::function<void()>& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs `work(thread_index)` on `threads` threads at once and returns the wall time.
double RunOnThreads(int threads, const std::function<void(int)>& work) {
  return Seconds([&] {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work, t);
    for (auto& th : pool) th.join();
  });
}

// 2 * kLanes * kChains flops per iteration; the result is returned so nothing is optimized away.
__attribute__((noinline)) float FmaChains(long iterations, float seed) {
  Vec acc[kChains];
  Vec mul, add;
  for (int l = 0; l < kLanes; ++l) {
    mul[l] = 0.9999f + 1e-7f * l;
    add[l] = 1e-6f * seed;
  }
  for (int c = 0; c < kChains; ++c)
    for (int l = 0; l < kLanes; ++l) acc[c][l] = seed + c + l;
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 32
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * mul + add;
    asm volatile("" : "+x"(mul));  // keeps the loop from being folded
  }
  float sum = 0;
  for (int c = 0; c < kChains; ++c)
    for (int l = 0; l < kLanes; ++l) sum += acc[c][l];
  return sum;
}

double FmaGflopsBest(int threads) {
  const long iterations = 20'000'000;
  double best = 0;
  std::vector<float> sink(threads);
  for (int rep = 0; rep < 3; ++rep) {
    double s = RunOnThreads(threads, [&](int t) { sink[t] = FmaChains(iterations, 1.0f + t); });
    best = std::max(best, 2.0 * kLanes * kChains * iterations * threads / s / 1e9);
  }
  return best;
}

// Bandwidth of `op` over per-thread slices of arrays of `elements` floats, `bytes_per_element`
// moved: the median of 7 passes, the statistic the runner times kernels with (a best-of would
// rate every kernel's median against the probe's luckiest pass on this VM's swinging memory).
double StreamGbs(int threads, size_t elements, double bytes_per_element, const std::function<void(float*, float*, size_t)>& op) {
  // Allocated as the kernels' buffers are (engine/backends/halide/huge_pages.h), so both see the same TLB.
  using Block = std::unique_ptr<float[], void (*)(void*)>;
  Block a(static_cast<float*>(engine::AllocateLarge(elements * sizeof(float))), engine::FreeLarge);
  Block b(static_cast<float*>(engine::AllocateLarge(elements * sizeof(float))), engine::FreeLarge);
  const size_t slice = elements / threads;
  // First touch from the thread that will use the slice.
  RunOnThreads(threads, [&](int t) {
    for (size_t i = t * slice; i < (t + 1) * slice; ++i) a[i] = 1.0f + (i & 7), b[i] = 0;
  });
  std::vector<double> gbs;
  for (int pass = 0; pass < 7; ++pass) {
    double s = RunOnThreads(threads, [&](int t) { op(a.get() + t * slice, b.get() + t * slice, slice); });
    gbs.push_back(bytes_per_element * slice * threads / s / 1e9);
  }
  std::nth_element(gbs.begin(), gbs.begin() + 3, gbs.end());
  return gbs[3];
}

}  // namespace

double FmaGflops(int threads) { return FmaGflopsBest(threads); }

double ScaleGbs(int threads, size_t elements) {
  return StreamGbs(threads, elements, 8, [](float* a, float* b, size_t n) {
    for (size_t i = 0; i < n; ++i) b[i] = 3.0f * a[i];
  });
}

MachinePeaks MeasureMachinePeaks(int threads) {
  MachinePeaks p;
  p.threads = threads;
  p.fma_gflops_core = FmaGflopsBest(1);
  p.fma_gflops = FmaGflopsBest(threads);
  const size_t elements = size_t{64} << 20;  // 256 MiB per array
  p.scale_gbs = ScaleGbs(threads, elements);
  volatile float sink = 0;
  p.read_gbs = StreamGbs(threads, elements, 4, [&](float* a, float*, size_t n) {
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t i = 0; i + 3 < n; i += 4) s0 += a[i], s1 += a[i + 1], s2 += a[i + 2], s3 += a[i + 3];
    sink = sink + s0 + s1 + s2 + s3;
  });
  return p;
}

}  // namespace tilebank::bench
