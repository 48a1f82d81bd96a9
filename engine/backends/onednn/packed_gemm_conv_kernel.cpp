#include "engine/backends/onednn/packed_gemm_conv_kernel.h"

#include <algorithm>
#include <cstring>

#include "engine/backends/onednn/onednn_common.h"
#include "engine/backends/onednn/own_conv_kernel.h"
#include "engine/backends/onednn/packed_gemm_kernel.h"
#include "engine/backends/onednn/row_major_sgemm.h"
#include "engine/backends/simd/packed_gemm.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {

namespace {

class PackedGemmConvKernel : public OwnConvKernel {
 public:
  PackedGemmConvKernel(const ConvProblem& p, std::vector<int64_t> shape, std::vector<ConvEpilogueStep> steps, int residual_input, bool plain)
      : OwnConvKernel(p, std::move(shape), residual_input, dnnl::memory::format_tag::nhwc, plain),
        weights_(int64_t{p.KH} * p.KW * p.C, p.OC),
        padded_h_(p.H + p.ph + p.ph_end),
        padded_w_(p.W + p.pw + p.pw_end) {
    epilogue_.steps = std::move(steps);
    epilogue_.channels = p.OC;
    // Tap (kh, kw) of output position (oh, ow) reads input row oh * sh + kh * dh, column ow * sw + kw * dw.
    for (int kh = 0; kh < p.KH; ++kh)
      for (int kw = 0; kw < p.KW; ++kw) taps_.push_back((int64_t{kh} * p.dh * padded_w_ + int64_t{kw} * p.dw) * p.C);
    if (p.Padded()) padded_.assign(static_cast<size_t>(padded_h_ * padded_w_ * p.C), 0.f);  // the border stays zero
  }

 protected:
  std::string Algorithm() const override { return std::string(kOwnPackedGemmAlgo) + " panels of " + std::to_string(weights_.panel()); }
  // B[(kh, kw, c)][oc] from OIHW.
  Status PackWeights(const Tensor& weights, const Tensor* bias) override {
    const ConvProblem& p = problem();
    const int64_t K = weights_.K(), taps = int64_t{p.KH} * p.KW;
    std::vector<float> b(static_cast<size_t>(K * p.OC));
    for (int64_t oc = 0; oc < p.OC; ++oc)
      for (int64_t c = 0; c < p.C; ++c)
        for (int64_t t = 0; t < taps; ++t) b[static_cast<size_t>((t * p.C + c) * p.OC + oc)] = weights.data[static_cast<size_t>((oc * p.C + c) * taps + t)];
    weights_.Fill(b.data(), p.OC, 1);
    bias_.assign(static_cast<size_t>(weights_.padded_columns()), 0.f);
    if (bias) std::copy(bias->data.begin(), bias->data.begin() + p.OC, bias_.begin());
    epilogue_.bias = bias ? bias_.data() : nullptr;
    return Status::Ok();
  }
  // NHWC in and out. The work of an image is split among the threads in blocks of output positions
  // by panels of output channels (a Conv1d of 64 channels is 4 panels on AVX2: too few for many
  // cores alone), each block all of the image's output rows.
  Status Compute(const float* src, const float* residual, float* dst) override {
    const ConvProblem& p = problem();
    constexpr int64_t kPositionsPerBlock = 48;  // a multiple of the tile's rows
    const int64_t out_row = int64_t{p.OW} * p.OC, panels = weights_.panels(), blocks = (p.OW + kPositionsPerBlock - 1) / kPositionsPerBlock;
    const int64_t per_item = int64_t{p.OH} * std::min<int64_t>(p.OW, kPositionsPerBlock) * weights_.K() * weights_.panel();
    const int64_t grain = std::max<int64_t>(1, (kSerialSgemmMacs + per_item - 1) / std::max<int64_t>(1, per_item));
    for (int n = 0; n < p.N; ++n) {
      const float* image = src + int64_t{n} * p.H * p.W * p.C;
      if (!padded_.empty()) {  // into the zero-bordered image, a row of W positions at a time
        for (int h = 0; h < p.H; ++h)
          std::memcpy(padded_.data() + ((h + p.ph) * padded_w_ + p.pw) * p.C, image + int64_t{h} * p.W * p.C, sizeof(float) * p.W * p.C);
        image = padded_.data();
      }
      float* out = dst + int64_t{n} * p.OH * out_row;
      const float* res = residual ? residual + int64_t{n} * p.OH * out_row : nullptr;
      ParallelFor(blocks * panels, grain, [&](int64_t begin, int64_t end) {
        ConvEpilogue e = epilogue_;
        for (int64_t item = begin; item < end; ++item) {
          const int64_t m0 = item / panels * kPositionsPerBlock, rows = std::min<int64_t>(kPositionsPerBlock, p.OW - m0), panel = item % panels;
          for (int oh = 0; oh < p.OH; ++oh) {
            const PackedGemmA a{image + (int64_t{oh} * p.sh * padded_w_ + m0 * p.sw) * p.C, int64_t{p.sw} * p.C, p.C, taps_.data(),
                                static_cast<int64_t>(taps_.size())};
            e.residual = res ? res + oh * out_row + m0 * p.OC : nullptr;
            PackedGemm(a, rows, weights_, e, out + oh * out_row + m0 * p.OC, p.OC, panel, panel + 1);
          }
        }
      });
    }
    return Status::Ok();
  }

 private:
  PackedGemmWeights weights_;
  int64_t padded_h_, padded_w_;
  std::vector<int64_t> taps_;  // each tap's offset in the (padded) NHWC image
  ConvEpilogue epilogue_;
  std::vector<float> bias_;
  std::vector<float> padded_;  // the zero-bordered image, where the convolution pads
};

}  // namespace

std::string OwnPackedGemmConvRefuses(const ConvProblem& p) {
  if (p.G != 1) return "the own packed-GEMM convolution runs ungrouped convolutions only";
  if (p.N <= 0 || p.OH <= 0 || p.OW <= 0) return "the own packed-GEMM convolution runs non-empty outputs only";
  return "";
}

Result<std::unique_ptr<Kernel>> OwnPackedGemmConvKernel(const ConvProblem& p, const std::vector<int64_t>& out_shape,
                                                        const std::vector<ChainStep>& post_ops, const std::string& layout) {
  if (std::string why = OwnPackedGemmConvRefuses(p); !why.empty()) return Status::InvalidInput(why);
  if (layout != "auto" && layout != "nhwc" && layout != "plain")
    return Status::InvalidInput("the own packed-GEMM convolution keeps its activations in NHWC (layout 'nhwc', 'auto' or 'plain'), not '" + layout + "'");
  std::vector<ConvEpilogueStep> steps;
  int residual_input = -1;
  TB_RETURN_IF_ERROR(OwnConvEpilogueOf(p, post_ops, out_shape, "the own packed-GEMM convolution", &steps, &residual_input));
  return CatchOneDnnErrors([&]() -> Result<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new PackedGemmConvKernel(p, out_shape, std::move(steps), residual_input, layout == "plain"));
  });
}

}  // namespace tilebank::engine
