#include "engine/backends/onednn/depthwise_conv_kernel.h"

#include <algorithm>

#include "engine/backends/onednn/onednn_common.h"
#include "engine/backends/onednn/own_conv_kernel.h"
#include "engine/backends/simd/depthwise_conv_nhwc.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {

namespace {

class OwnDepthwiseKernel : public OwnConvKernel {
 public:
  OwnDepthwiseKernel(const ConvProblem& p, std::vector<int64_t> shape, std::vector<ConvEpilogueStep> steps, int residual_input, bool plain,
                     bool channels_outer)
      : OwnConvKernel(p, std::move(shape), residual_input, dnnl::memory::format_tag::nhwc, plain) {
    epilogue_.steps = std::move(steps);
    epilogue_.channels = p.C;
    g_.n = p.N, g_.c = p.C, g_.h = p.H, g_.w = p.W, g_.oh = p.OH, g_.ow = p.OW;
    g_.kh = p.KH, g_.kw = p.KW, g_.sh = p.sh, g_.sw = p.sw, g_.dh = p.dh, g_.dw = p.dw, g_.pad_top = p.ph, g_.pad_left = p.pw;
    g_.channels_outer = channels_outer;
  }

 protected:
  Status PackWeights(const Tensor& weights, const Tensor* bias) override {
    weights_ = DepthwiseWeightsNhwc(g_, weights.data.data());
    bias_.clear();
    if (bias) bias_.assign(bias->data.begin(), bias->data.begin() + g_.c);
    epilogue_.bias = bias ? bias_.data() : nullptr;
    return Status::Ok();
  }
  std::string Algorithm() const override { return std::string(kOwnDepthwiseAlgo) + (g_.channels_outer ? " by_channel" : ""); }
  // Output rows, and where they are fewer than four per thread also channels, split among the threads.
  Status Compute(const float* src, const float* residual, float* dst) override {
    epilogue_.residual = residual;
    const int64_t rows = g_.rows(), wanted = 4 * ParallelThreads();
    int64_t chunk = g_.c;
    if (rows < wanted) chunk = std::min<int64_t>(g_.c, std::max<int64_t>(16, (g_.c * rows / wanted + 15) / 16 * 16));
    const int64_t chunks = (g_.c + chunk - 1) / chunk;
    ParallelFor(rows * chunks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        const int64_t row = item / chunks, c0 = item % chunks * chunk;
        DepthwiseConvNhwc(g_, src, weights_.data(), epilogue_, dst, row, row + 1, c0, std::min(g_.c, c0 + chunk));
      }
    });
    return Status::Ok();
  }

 private:
  DepthwiseGeometry g_;
  ConvEpilogue epilogue_;
  std::vector<float> weights_, bias_;
};

}  // namespace

std::string OwnDepthwiseRefuses(const ConvProblem& p) {
  if (p.G != p.C || p.OC != p.C) return "the own depthwise convolution runs one filter per channel (group = channels = output channels) only";
  if (p.C % 8 != 0) return "the own depthwise convolution takes NHWC where the channel count is a multiple of 8";
  return "";
}

std::vector<OwnDepthwiseOffer> OwnDepthwiseOffers(const ConvProblem& p) {
  if (!OwnDepthwiseRefuses(p).empty()) return {};
  std::vector<OwnDepthwiseOffer> offers;
  for (const char* layout : {"nhwc", "plain"})
    for (const char* impl : {"default", kOwnDepthwiseByChannel}) offers.push_back({kOwnDepthwiseAlgo, layout, impl});
  return offers;
}

Result<std::unique_ptr<Kernel>> OwnDepthwiseConvKernel(const ConvProblem& p, const std::vector<int64_t>& out_shape, const std::vector<ChainStep>& post_ops,
                                                       const std::string& layout, const std::string& impl) {
  if (std::string why = OwnDepthwiseRefuses(p); !why.empty()) return Status::InvalidInput(why);
  if (impl != "default" && impl != kOwnDepthwiseByChannel)
    return Status::InvalidInput("the own depthwise convolution runs impl 'default' or '" + std::string(kOwnDepthwiseByChannel) + "', not '" + impl + "'");
  if (layout != "auto" && layout != "nhwc" && layout != "plain")
    return Status::InvalidInput("the own depthwise convolution keeps its activations in NHWC or NCHW, not '" + layout + "'");
  std::vector<ConvEpilogueStep> steps;
  int residual_input = -1;
  TB_RETURN_IF_ERROR(OwnConvEpilogueOf(p, post_ops, out_shape, "the own depthwise convolution", &steps, &residual_input));
  return CatchOneDnnErrors([&]() -> Result<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new OwnDepthwiseKernel(p, out_shape, std::move(steps), residual_input, layout == "plain", impl == kOwnDepthwiseByChannel));
  });
}

}  // namespace tilebank::engine
