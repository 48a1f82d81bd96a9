// The own 1-D convolution against one in double, on every target this CPU runs: dilated and padded
// on one side or both, strided (the window split into phases), grouped (blocks of 8, 4 and 1 in each
// group) and depthwise, one output channel and channels not a multiple of a block, rows split into
// column ranges at any column (a range shorter than a vector, one ending inside a vector), the window
// read in place and from its zero-bordered copy, and the epilogue (bias, a residual Add written over
// the residual, LeakyRelu). The input lies against an inaccessible page, after its end and before its
// start in turn: a read outside it faults.
#include "engine/backends/simd/direct_conv1d.h"

#include <doctest/doctest.h>
#include <hwy/highway.h>
#include <hwy/targets.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace tilebank::engine {
namespace {

Conv1dGeometry Geometry(int64_t n, int64_t c, int64_t oc, int64_t w, int64_t k, int64_t dilation, int64_t pad_left, int64_t pad_right, int64_t groups,
                        int64_t stride = 1) {
  Conv1dGeometry g;
  g.n = n, g.c = c, g.oc = oc, g.w = w, g.k = k, g.dilation = dilation, g.pad_left = pad_left, g.groups = groups, g.stride = stride;
  g.ow = (w + pad_left + pad_right - dilation * (k - 1) - 1) / stride + 1;
  return g;
}

// `values` in memory with an inaccessible page right after its last value (`at_end`) or right before
// its first: a read past that end faults.
class Fenced {
 public:
  Fenced(const std::vector<float>& values, bool at_end) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE)), bytes = values.size() * sizeof(float);
    const size_t data_pages = (bytes + page - 1) / page;
    size_ = (data_pages + 2) * page;
    base_ = static_cast<char*>(mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    REQUIRE(base_ != MAP_FAILED);
    REQUIRE(mprotect(base_, page, PROT_NONE) == 0);
    REQUIRE(mprotect(base_ + (data_pages + 1) * page, page, PROT_NONE) == 0);
    data_ = reinterpret_cast<float*>(at_end ? base_ + (data_pages + 1) * page - bytes : base_ + page);
    std::memcpy(data_, values.data(), bytes);
  }
  ~Fenced() { munmap(base_, size_); }
  Fenced(const Fenced&) = delete;
  Fenced& operator=(const Fenced&) = delete;
  const float* data() const { return data_; }

 private:
  char* base_ = nullptr;
  size_t size_ = 0;
  float* data_ = nullptr;
};

// The convolution in double, then + residual, then LeakyRelu(0.1).
std::vector<double> Reference(const Conv1dGeometry& g, const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& bias,
                              const std::vector<float>& residual) {
  std::vector<double> y(static_cast<size_t>(g.n * g.oc * g.ow));
  const int64_t cg = g.c_per_group(), ocg = g.oc_per_group();
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t o = 0; o < g.oc; ++o)
      for (int64_t j = 0; j < g.ow; ++j) {
        double s = bias[static_cast<size_t>(o)];
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t t = 0; t < g.k; ++t) {
            const int64_t i = j * g.stride - g.pad_left + t * g.dilation, ci = o / ocg * cg + c;
            if (i >= 0 && i < g.w) s += double{x[static_cast<size_t>((n * g.c + ci) * g.w + i)]} * w[static_cast<size_t>((o * cg + c) * g.k + t)];
          }
        const size_t at = static_cast<size_t>((n * g.oc + o) * g.ow + j);
        s += residual[at];
        y[at] = s < 0 ? 0.1 * s : s;
      }
  return y;
}

TEST_CASE("own 1-D convolution: dilated, padded, grouped, split into column ranges anywhere, on every target") {
  const std::vector<Conv1dGeometry> cases = {
      Geometry(1, 16, 24, 50, 3, 4, 8, 0, 1),     // causal, dilation 4 (a TCN's)
      Geometry(1, 7, 19, 37, 5, 1, 2, 2, 1),      // odd channels: blocks of 8, 4, 2 and 1
      Geometry(2, 8, 12, 40, 3, 2, 2, 2, 4),      // grouped, two images
      Geometry(1, 16, 16, 33, 7, 1, 3, 3, 16),    // depthwise
      Geometry(1, 5, 9, 1000, 2, 16, 16, 0, 1),   // a long row: windows in place and at both edges copied
      Geometry(1, 16, 1, 300, 7, 1, 3, 3, 1),     // one output channel
      Geometry(2, 3, 8, 20, 4, 3, 0, 0, 1),       // unpadded: fewer outputs than inputs
      Geometry(1, 33, 17, 70, 1, 1, 0, 0, 1),     // 1x1
      Geometry(1, 4, 8, 6, 3, 5, 6, 5, 1),        // padding wider than the row
      Geometry(1, 1, 16, 400, 16, 1, 0, 0, 1, 8),  // strided: a waveform's encoder (stride 8, filter 16)
      Geometry(2, 6, 10, 101, 5, 2, 3, 4, 2, 3),   // strided, dilated, grouped, two images
      Geometry(1, 8, 8, 64, 4, 1, 1, 1, 8, 2),     // strided depthwise
      Geometry(1, 6, 40, 50, 3, 2, 2, 2, 2)};      // 20 output channels a group: blocks of 8, 8 and 4
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    const std::string target_name = hwy::TargetName(target);
    CAPTURE(target_name);
    for (size_t k = 0; k < cases.size(); ++k) {
      CAPTURE(k);
      const Conv1dGeometry& g = cases[k];
      CHECK(g.ow > 0);
      std::vector<float> x(static_cast<size_t>(g.n * g.c * g.w)), w(static_cast<size_t>(g.oc * g.c_per_group() * g.k)), bias(static_cast<size_t>(g.oc));
      std::vector<float> residual(static_cast<size_t>(g.n * g.oc * g.ow));
      for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
      for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(std::cos(0.21 * static_cast<double>(i)));
      for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.1f * static_cast<float>(i) - 0.5f;
      for (size_t i = 0; i < residual.size(); ++i) residual[i] = static_cast<float>(std::sin(0.11 * static_cast<double>(i)));
      const std::vector<double> want = Reference(g, x, w, bias, residual);
      const std::vector<float> packed = PackConv1dWeights(g, w.data());
      ConvEpilogue e;
      e.bias = bias.data();
      e.steps = {{ConvEpilogueStep::Kind::kAddResidual}, {ConvEpilogueStep::Kind::kLeakyRelu, 0.1f}};
      const int64_t lanes = Conv1dVectorLanes();
      // Ranges of 1, a vector and a half, and whole rows; output channels in two pieces where a group has over 8.
      for (int64_t range : {int64_t{1}, lanes + lanes / 2, g.ow})
        for (bool fence_at_end : {true, false}) {
          CAPTURE(range);
          CAPTURE(fence_at_end);
          const Fenced input(x, fence_at_end);
          std::vector<float> out = residual;  // written over the residual it reads
          e.residual = out.data();
          const int64_t ocg = g.oc_per_group(), split = ocg > 8 ? 8 : ocg;
          for (int64_t n = 0; n < g.n; ++n)
            for (int64_t group = 0; group < g.groups; ++group)
              for (int64_t x0 = 0; x0 < g.ow; x0 += range) {
                const int64_t x1 = std::min(g.ow, x0 + range);
                DirectConv1dColumns(g, input.data(), packed.data(), e, out.data(), n, group, x0, x1, 0, split);
                if (split < ocg) DirectConv1dColumns(g, input.data(), packed.data(), e, out.data(), n, group, x0, x1, split, ocg);
              }
          double worst = 0;
          for (size_t i = 0; i < out.size(); ++i) worst = std::max(worst, std::abs(out[i] - want[i]));
          CHECK(worst < 1e-4);
        }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace
}  // namespace tilebank::engine
