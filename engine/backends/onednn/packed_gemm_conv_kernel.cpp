#include "engine/backends/onednn/packed_gemm_conv_kernel.h"

#include <algorithm>
#include <cstring>

#include "engine/backends/onednn/onednn_common.h"
#include "engine/backends/onednn/own_conv_kernel.h"
#include "engine/backends/onednn/own_or_rival.h"
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
    // Output position (n, oh, ow) of every image, in NHWC order, as a row of A: its window's origin.
    const int64_t image = padded_h_ * padded_w_ * p.C;
    for (int n = 0; n < p.N; ++n)
      for (int oh = 0; oh < p.OH; ++oh)
        for (int ow = 0; ow < p.OW; ++ow) rows_.push_back(n * image + (int64_t{oh} * p.sh * padded_w_ + int64_t{ow} * p.sw) * p.C);
    if (p.Padded()) padded_.assign(static_cast<size_t>(p.N * image), 0.f);  // the border stays zero
  }

 protected:
  std::string Algorithm() const override { return std::string(kOwnPackedGemmAlgo) + " panels of " + std::to_string(weights_.panel()); }
  // B[(kh, kw, c)][oc] from OIHW.
  Status PackWeights(const Tensor& weights, const Tensor* bias) override {
    const ConvProblem& p = problem();
    weights_.FillFromFilters(weights.data.data(), p.C, int64_t{p.KH} * p.KW);
    bias_.assign(static_cast<size_t>(weights_.padded_columns()), 0.f);
    if (bias) std::copy(bias->data.begin(), bias->data.begin() + p.OC, bias_.begin());
    epilogue_.bias = bias ? bias_.data() : nullptr;
    return Status::Ok();
  }
  // NHWC in and out. The output positions of all images are the rows of one product, split among
  // the threads in blocks of positions by panels of output channels (a Conv1d of 64 channels is 4
  // panels on AVX2: too few for many cores alone). One product over the batch reads a large
  // filter bank once per block of positions (packed_gemm.h), not once an image or an output row.
  Status Compute(const float* src, const float* residual, float* dst) override {
    const ConvProblem& p = problem();
    const int64_t positions = static_cast<int64_t>(rows_.size()), panels = weights_.panels();
    // Blocks of at most 48 positions (96 where B is read in chunks: each block reads all of it), of
    // near-even size in whole tiles of rows, so that threads taking blocks get near-even shares.
    constexpr int64_t kTileMultiple = 12;
    const int64_t most = weights_.chunks_k() ? 96 : 48, even = (positions + most - 1) / most;
    const int64_t per_block = ((positions + even - 1) / even + kTileMultiple - 1) / kTileMultiple * kTileMultiple;
    const int64_t blocks = (positions + per_block - 1) / per_block;
    const int64_t per_item = std::min(positions, per_block) * weights_.K() * weights_.panel();
    const int64_t grain = std::max<int64_t>(1, (kSerialSgemmMacs + per_item - 1) / std::max<int64_t>(1, per_item));
    const float* images = src;
    if (!padded_.empty()) {  // into the zero-bordered images, a row of W positions at a time
      for (int n = 0; n < p.N; ++n)
        for (int h = 0; h < p.H; ++h)
          std::memcpy(padded_.data() + ((int64_t{n} * padded_h_ + h + p.ph) * padded_w_ + p.pw) * p.C, src + (int64_t{n} * p.H + h) * p.W * p.C,
                      sizeof(float) * p.W * p.C);
      images = padded_.data();
    }
    ParallelFor(blocks * panels, grain, [&](int64_t begin, int64_t end) {
      ConvEpilogue e = epilogue_;
      for (int64_t item = begin; item < end; ++item) {
        const int64_t m0 = item / panels * per_block, count = std::min(per_block, positions - m0), panel = item % panels;
        const PackedGemmA a{images, 0, p.C, taps_.data(), static_cast<int64_t>(taps_.size()), rows_.data() + m0};
        e.residual = residual ? residual + m0 * p.OC : nullptr;
        PackedGemm(a, count, weights_, e, dst + m0 * p.OC, p.OC, panel, panel + 1);
      }
    });
    return Status::Ok();
  }

 private:
  PackedGemmWeights weights_;
  int64_t padded_h_, padded_w_;
  std::vector<int64_t> taps_;  // each tap's offset in the (padded) NHWC image
  std::vector<int64_t> rows_;  // each output position's window origin in the (padded) NHWC images
  ConvEpilogue epilogue_;
  std::vector<float> bias_;
  std::vector<float> padded_;  // the zero-bordered images, where the convolution pads
};

}  // namespace

std::string OwnPackedGemmConvRefuses(const ConvProblem& p) {
  if (p.G != 1) return "the own packed-GEMM convolution runs ungrouped convolutions only";
  if (p.N <= 0 || p.OH <= 0 || p.OW <= 0) return "the own packed-GEMM convolution runs non-empty outputs only";
  return "";
}

bool OwnPackedGemmConvChunksFilters(const ConvProblem& p) {
  return OwnPackedGemmConvRefuses(p).empty() && PackedGemmWeights::ChunksK(int64_t{p.KH} * p.KW * p.C);
}

bool OwnPackedGemmConvRunsFaster(const OpSpec& op, const std::vector<ChainStep>& post_ops, const std::function<std::unique_ptr<Kernel>()>& make_rival) {
  auto p = AnalyzeConv(op);
  if (!p.ok()) return false;
  return OwnKernelRunsFaster("own packed gemm conv v2", op, post_ops, [&] { return OwnPackedGemmConvKernel(*p, op.outputs[0].shape, post_ops, "auto"); },
                             make_rival);
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
