// The part the own convolutions of impl.onednn (Winograd: winograd_conv_kernel.h, depthwise:
// depthwise_conv_kernel.h) share: their activations in one layout of oneDNN's inside (a tag:
// nChw16c, nChw8c or NHWC), handed over by neighbours that keep it, else reordered from and to
// NCHW here (layout "plain": always; an inside layout of NCHW: never); an optional residual input
// in the output's layout; the measured path of a tuning job; run buffers in one per-thread
// scratch. A subclass packs its weights and computes in the inside layout.
#pragma once
#include <dnnl.hpp>

#include <cstddef>
#include <cstdlib>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/backends/simd/conv_epilogue.h"
#include "engine/core/chain_step.h"
#include "engine/core/conv_problem.h"
#include "engine/core/kernel.h"

namespace tilebank::engine {

// The activations an own kernel's epilogue runs, for messages.
inline constexpr char kOwnEpilogueActivations[] = "Relu, LeakyRelu, Clip, Sigmoid, Swish, HardSwish, Tanh, Gelu, GeluTanh";

// The epilogue step of a chain's activation, nullopt for a binary step or an activation it lacks.
std::optional<ConvEpilogueStep> OwnEpilogueActivation(const ChainStep& op);

// The epilogue steps of the chain SGAT fused after `p` (the activations above but Gelu, and one Add of a tensor of the output's shape, whose input index goes
// to residual_input, else -1); kInvalidInput naming `who` and the step it does not run.
Status OwnConvEpilogueOf(const ConvProblem& p, const std::vector<ChainStep>& post_ops, const std::vector<int64_t>& out_shape, const std::string& who,
                         std::vector<ConvEpilogueStep>* steps, int* residual_input);

// 64-byte aligned storage, as a model's arena gives: vector loads that straddle cache lines cost
// the own kernels a third of their speed.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(size_t n) {
    void* p = std::aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64);
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { std::free(p); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const CacheLineAllocator<U>&) const { return false; }
};
using AlignedFloats = std::vector<float, CacheLineAllocator<float>>;

class OwnConvKernel : public Kernel {
 public:
  // `inside`: the activations' layout inside (and handed over); `plain`: NCHW outside, always.
  // `residual_input`: the input index of a residual in the output's shape, or -1.
  OwnConvKernel(const ConvProblem& p, std::vector<int64_t> shape, int residual_input, dnnl::memory::format_tag inside, bool plain);

  // The output may be placed over the residual: the subclass reads each output value's residual
  // before writing it, and the executor places it so only where their layouts are equal.
  int InPlaceInput() const override { return residual_input_; }
  Status Prepare(const std::vector<const Tensor*>& in) override;
  Status Run() override;
  Status Fetch(Tensor* out) override;
  // Weights and bias must be constants: the subclass packs them here, once.
  Result<bool> BindDirect(const std::vector<std::vector<int64_t>>& shapes, const std::vector<const Tensor*>& constants) override;
  HandoverLayout NativeLayout(int input) const override;
  Status UseNativeLayouts(const std::vector<bool>& inputs, bool output) override;
  Status RunDirect(const std::vector<const float*>& in, float* out) override;
  // The subclass's Algorithm(), the inside layout, NCHW outside or not, and what is handed over.
  std::string Identity() const override;

 protected:
  // The algorithm and its knobs ("winograd_f4", "depthwise_nhwc by_channel").
  virtual std::string Algorithm() const = 0;
  // Packs the weights (OIHW) and bias (or null) for Compute.
  virtual Status PackWeights(const Tensor& weights, const Tensor* bias) = 0;
  // The convolution in the inside layout, `residual` (or null) too, into dst.
  virtual Status Compute(const float* src, const float* residual, float* dst) = 0;
  // The subclass's run buffers (memories whose handles are placed in the scratch before each run).
  virtual std::vector<dnnl::memory*> RunBuffers() { return {}; }

  const ConvProblem& problem() const { return p_; }
  int residual_input() const { return residual_input_; }
  const dnnl::memory::desc& src_md() const { return src_md_; }
  const dnnl::memory::desc& dst_md() const { return dst_md_; }
  dnnl::stream& stream() { return stream_; }

 private:
  Status Setup(const Tensor& weights, const Tensor* bias);
  void BindScratch();
  const float* Reordered(dnnl::memory& plain, const float* data, dnnl::reorder& reorder, dnnl::memory& blocked);

  ConvProblem p_;
  std::vector<int64_t> shape_;
  int residual_input_ = -1;
  bool plain_ = false;
  bool inside_plain_ = false;  // the inside layout is NCHW: nothing is reordered (a subclass passes `plain` too)
  dnnl::stream stream_;
  dnnl::memory::desc src_md_, dst_md_;  // the layouts inside
  dnnl::memory plain_src_, plain_dst_, plain_residual_, blocked_src_, blocked_dst_, blocked_residual_;
  dnnl::reorder src_reorder_, dst_reorder_, residual_reorder_;
  bool handed_src_ = false, handed_dst_ = false, handed_residual_ = false;
  std::vector<float> residual_constant_;  // a residual that is a constant
  AlignedFloats measured_src_, measured_residual_, measured_dst_;  // the measured path (Prepare, Run, Fetch)
};

}  // namespace tilebank::engine
