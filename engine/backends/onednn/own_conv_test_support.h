// What the tests of the own convolutions (winograd_conv_kernel_test.cpp,
// depthwise_conv_kernel_test.cpp) share: inputs, a grouped, strided, dilated convolution in double
// with the epilogues they fuse, the chains that stand for those epilogues, the error measure, and
// reorders into the layouts neighbours hand over.
#pragma once
#include <dnnl.hpp>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/backends/onednn/onednn_common.h"
#include "engine/core/chain_step.h"
#include "engine/core/conv_problem.h"
#include "engine/core/kernel.h"
#include "engine/core/threads.h"

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

// One convolution's data (from Values), with or without a residual, and what a kernel of it must
// compute with `activation` after it: the three ways a model or a tuning job runs the kernel.
class OwnConvCheck {
 public:
  OwnConvCheck(const ConvProblem& p, bool with_residual, const std::string& activation)
      : p_(p), with_residual_(with_residual), residual_input_(p.bias ? 3 : 2) {
    in_shape_ = {p.N, p.C, p.H, p.W}, out_shape_ = {p.N, p.OC, p.OH, p.OW};
    x_ = Values(static_cast<size_t>(p.N) * p.C * p.H * p.W, 1), w_ = Values(static_cast<size_t>(p.OC) * (p.C / p.G) * p.KH * p.KW, 2);
    b_ = Values(p.OC, 3), z_ = Values(static_cast<size_t>(p.N) * p.OC * p.OH * p.OW, 4);
    input_ = Tensor(in_shape_), weights_ = Tensor({p.OC, p.C / p.G, p.KH, p.KW}), bias_ = Tensor({p.OC}), residual_ = Tensor(out_shape_);
    input_.data = x_, weights_.data = w_, bias_.data = b_, residual_.data = z_;
    want_ = Reference(p, x_, w_, b_, with_residual ? z_ : std::vector<float>{}, activation);
    steps_ = Epilogue(with_residual, activation, out_shape_);
  }
  const std::vector<ChainStep>& steps() const { return steps_; }
  const std::vector<int64_t>& out_shape() const { return out_shape_; }
  int residual_input() const { return residual_input_; }

  // The measured path (Prepare, Run, Fetch): the worst error.
  double Measured(Kernel& kernel) const {
    std::vector<const Tensor*> all = {&input_, &weights_, p_.bias ? &bias_ : nullptr};
    if (with_residual_) all.resize(residual_input_ + 1, nullptr), all[residual_input_] = &residual_;
    if (!kernel.Prepare(all).ok() || !kernel.Run().ok()) return HUGE_VAL;
    Tensor got;
    if (!kernel.Fetch(&got).ok()) return HUGE_VAL;
    return WorstError(got.data, want_);
  }
  // The direct path, NCHW on both sides: the worst error.
  double Nchw(Kernel& kernel) const {
    auto bound = kernel.BindDirect({}, Constants());
    if (!bound.ok() || !*bound) return HUGE_VAL;
    std::vector<const float*> in(Constants().size(), nullptr);
    in[0] = x_.data();
    if (with_residual_) in[residual_input_] = z_.data();
    std::vector<float> y(want_.size());
    if (!kernel.RunDirect(in, y.data()).ok()) return HUGE_VAL;
    return WorstError(y, want_);
  }
  // The kernel's native layouts handed over on every side (the source's must not be row-major), the
  // output written over the residual: the worst error; the output as written, and its layout.
  double HandedOver(Kernel& kernel, std::vector<float>* output, HandoverLayout* dst_layout) const {
    if (!kernel.BindDirect({}, Constants()).ok()) return HUGE_VAL;
    const HandoverLayout src_layout = kernel.NativeLayout(0);
    *dst_layout = kernel.NativeLayout(-1);
    if (src_layout.row_major()) return HUGE_VAL;
    if (with_residual_ && kernel.NativeLayout(residual_input_).key != dst_layout->key) return HUGE_VAL;
    std::vector<bool> handed(Constants().size(), false);
    handed[0] = true;
    if (with_residual_) handed[residual_input_] = true;
    if (!kernel.UseNativeLayouts(handed, true).ok()) return HUGE_VAL;
    const std::vector<float> xh = Reorder(x_, in_shape_, src_layout, true);
    *output = with_residual_ ? Reorder(z_, out_shape_, *dst_layout, true) : std::vector<float>(std::max<size_t>(dst_layout->floats, want_.size()));
    std::vector<const float*> in(Constants().size(), nullptr);
    in[0] = xh.data();
    if (with_residual_) in[residual_input_] = output->data();
    if (!kernel.RunDirect(in, output->data()).ok()) return HUGE_VAL;
    return WorstError(Reorder(*output, out_shape_, *dst_layout, false), want_);
  }

 private:
  std::vector<const Tensor*> Constants() const {
    std::vector<const Tensor*> constants = {nullptr, &weights_, p_.bias ? &bias_ : nullptr};
    if (with_residual_) constants.resize(residual_input_ + 1, nullptr);
    return constants;
  }

  ConvProblem p_;
  bool with_residual_;
  int residual_input_;
  std::vector<int64_t> in_shape_, out_shape_;
  std::vector<float> x_, w_, b_, z_;
  Tensor input_, weights_, bias_, residual_;
  std::vector<double> want_;
  std::vector<ChainStep> steps_;
};

// Calls check_case(k, check) for each problems[k], without and with a residual Add, each of
// `activations` ("" for none) after it, on one thread and on three (the library's threads set back
// to one after).
template <class F>
void ForEachOwnConvCase(const std::vector<ConvProblem>& problems, const std::vector<std::string>& activations, F&& check_case) {
  for (int threads : {1, 3}) {
    SetLibraryThreads(threads);
    for (size_t k = 0; k < problems.size(); ++k)
      for (bool with_residual : {false, true})
        for (const std::string& activation : activations) {
          CAPTURE(threads);
          CAPTURE(k);
          CAPTURE(with_residual);
          CAPTURE(activation);
          const OwnConvCheck check(problems[k], with_residual, activation);
          check_case(k, check);
        }
  }
  SetLibraryThreads(1);
}

}  // namespace tilebank::engine::own_conv_test
