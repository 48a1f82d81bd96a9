// What the tests of the own convolutions (winograd_conv_kernel_test.cpp,
// depthwise_conv_kernel_test.cpp) share: inputs, a grouped, strided, dilated convolution in double
// with the epilogues they fuse, the chains that stand for those epilogues, the error measure, and
// reorders into the layouts neighbours hand over.
#pragma once
#include <dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/backends/onednn/onednn_common.h"
#include "engine/core/chain_step.h"
#include "engine/core/conv_problem.h"
#include "engine/core/kernel.h"

namespace tilebank::engine::own_conv_test {

inline std::vector<float> Values(size_t n, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(std::sin(0.37 * i + seed) * 1.5);
  return v;
}

// The convolution (NCHW, weights OIHW of C / G channels), then + residual, then the activation
// named (Clip(-0.5, 0.8), LeakyRelu(0.1)).
inline std::vector<double> Reference(const ConvProblem& p, const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b,
                                     const std::vector<float>& residual, const std::string& activation) {
  std::vector<double> y(static_cast<size_t>(p.N) * p.OC * p.OH * p.OW);
  const int cg = p.C / p.G, ocg = p.OC / p.G;
  for (int n = 0; n < p.N; ++n)
    for (int o = 0; o < p.OC; ++o)
      for (int i = 0; i < p.OH; ++i)
        for (int j = 0; j < p.OW; ++j) {
          double s = p.bias ? b[o] : 0.0;
          for (int c = 0; c < cg; ++c)
            for (int u = 0; u < p.KH; ++u)
              for (int v = 0; v < p.KW; ++v) {
                const int r = i * p.sh + u * p.dh - p.ph, q = j * p.sw + v * p.dw - p.pw, ci = o / ocg * cg + c;
                if (r >= 0 && r < p.H && q >= 0 && q < p.W)
                  s += static_cast<double>(x[((n * p.C + ci) * p.H + r) * p.W + q]) * w[((o * cg + c) * p.KH + u) * p.KW + v];
              }
          const size_t at = ((static_cast<size_t>(n) * p.OC + o) * p.OH + i) * p.OW + j;
          if (!residual.empty()) s += residual[at];
          if (activation == "Relu") s = std::max(s, 0.0);
          if (activation == "Clip") s = std::min(std::max(s, -0.5), 0.8);
          if (activation == "LeakyRelu" && s < 0) s *= 0.1;
          if (activation == "Sigmoid") s = 1 / (1 + std::exp(-s));
          if (activation == "Swish") s = s / (1 + std::exp(-s));
          if (activation == "HardSwish") s = s * std::min(std::max(s / 6 + 0.5, 0.0), 1.0);
          if (activation == "Tanh") s = std::tanh(s);
          if (activation == "GeluTanh") s = 0.5 * s * (1 + std::tanh(0.7978845608028654 * (s + 0.044715 * s * s * s)));
          y[at] = s;
        }
  return y;
}

// The chain SGAT fuses for a residual Add (optional) and then `activation` ("" for none).
inline std::vector<ChainStep> Epilogue(bool residual, const std::string& activation, const std::vector<int64_t>& out) {
  std::vector<ChainStep> steps;
  if (residual) steps.push_back({"Add", 0, 0, true, out});
  if (activation == "Relu") steps.push_back({"Relu", 0, 0, false, {}});
  if (activation == "Clip") steps.push_back({"Clip", -0.5f, 0.8f, false, {}});
  if (activation == "LeakyRelu") steps.push_back({"LeakyRelu", 0.1f, 0, false, {}});
  if (activation != "" && activation != "Relu" && activation != "Clip" && activation != "LeakyRelu") steps.push_back({activation, 0, 0, false, {}});
  return steps;
}

inline double WorstError(const std::vector<float>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return HUGE_VAL;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]) / (1.0 + std::fabs(want[i])));
  return worst;
}

// `data` (NCHW) in the layout `layout` stands for, or back.
inline std::vector<float> Reorder(const std::vector<float>& data, const std::vector<int64_t>& shape, const HandoverLayout& layout, bool to_layout) {
  const dnnl::memory::desc plain = RowMajorDesc(shape), blocked = *DescOfHandover(layout, shape);
  const dnnl::memory::desc& from_md = to_layout ? plain : blocked;
  const dnnl::memory::desc& to_md = to_layout ? blocked : plain;
  dnnl::memory from(from_md, OneDnnCpuEngine()), to(to_md, OneDnnCpuEngine());
  std::memcpy(from.get_data_handle(), data.data(), from_md.get_size());
  dnnl::stream stream(OneDnnCpuEngine());
  dnnl::reorder(from, to).execute(stream, from, to);
  stream.wait();
  std::vector<float> out(to_md.get_size() / sizeof(float));
  std::memcpy(out.data(), to.get_data_handle(), to_md.get_size());
  return out;
}

}  // namespace tilebank::engine::own_conv_test
