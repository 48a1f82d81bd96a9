#include "engine/backends/onednn/vector_product_conv_kernel.h"

#include <algorithm>

#include "engine/backends/onednn/onednn_common.h"
#include "engine/backends/onednn/own_conv_kernel.h"
#include "engine/backends/simd/vector_product.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {

namespace {

// Multiply-adds below which a thread's share is not worth waking a second thread for (a few
// microseconds of work on one core; measured on the squeeze-excitations of EfficientNet-B0).
constexpr int64_t kSerialProducts = int64_t{1} << 16;

class OwnVectorProductKernel : public OwnConvKernel {
 public:
  OwnVectorProductKernel(const ConvProblem& p, std::vector<int64_t> shape, std::vector<ConvEpilogueStep> steps, int residual_input)
      : OwnConvKernel(p, std::move(shape), residual_input, dnnl::memory::format_tag::nchw, true) {
    epilogue_.steps = std::move(steps);
    epilogue_.channels = p.OC;
    s_.rows = p.N, s_.in = int64_t{p.C} * p.H * p.W, s_.out = p.OC;
  }

 public:
  bool RunsOnAnyThread() const override { return true; }  // own loops over ParallelFor; NCHW needs no scratch

 protected:
  Status PackWeights(const Tensor& weights, const Tensor* bias) override {
    weights_ = PackVectorProductWeights(s_, weights.data.data());
    bias_.assign(static_cast<size_t>(s_.out_padded()), 0.f);
    if (bias) std::copy(bias->data.begin(), bias->data.begin() + s_.out, bias_.begin());
    epilogue_.bias = bias ? bias_.data() : nullptr;
    return Status::Ok();
  }
  std::string Algorithm() const override { return kOwnVectorProductAlgo; }
  // Blocks of outputs split among the threads, each at least kSerialProducts multiply-adds.
  Status Compute(const float* src, const float* residual, float* dst) override {
    epilogue_.residual = residual;
    const int64_t vectors = s_.out_padded() / kVectorProductPad, per_vector = s_.rows * s_.in * kVectorProductPad;
    const int64_t grain = std::max<int64_t>(1, (kSerialProducts + per_vector - 1) / per_vector);
    ParallelFor(vectors, grain, [&](int64_t begin, int64_t end) {
      VectorProduct(s_, src, weights_.data(), epilogue_, dst, begin * kVectorProductPad, end * kVectorProductPad);
    });
    return Status::Ok();
  }

 private:
  VectorProductShape s_;
  ConvEpilogue epilogue_;
  std::vector<float> weights_, bias_;
};

}  // namespace

std::string OwnVectorProductRefuses(const ConvProblem& p) {
  if (p.G != 1) return "the own vector product runs ungrouped convolutions only";
  if (p.Padded() || p.KH != p.H || p.KW != p.W || p.OH != 1 || p.OW != 1)
    return "the own vector product runs a filter that covers the whole unpadded input (one output pixel) only";
  return "";
}

Result<std::unique_ptr<Kernel>> OwnVectorProductConvKernel(const ConvProblem& p, const std::vector<int64_t>& out_shape,
                                                           const std::vector<ChainStep>& post_ops, const std::string& layout) {
  if (std::string why = OwnVectorProductRefuses(p); !why.empty()) return Status::InvalidInput(why);
  if (layout != "auto" && layout != "plain")
    return Status::InvalidInput("the own vector product keeps its activations in NCHW (layout 'plain' or 'auto'), not '" + layout + "'");
  std::vector<ConvEpilogueStep> steps;
  int residual_input = -1;
  TB_RETURN_IF_ERROR(OwnConvEpilogueOf(p, post_ops, out_shape, "the own vector product", &steps, &residual_input));
  return CatchOneDnnErrors([&]() -> Result<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new OwnVectorProductKernel(p, out_shape, std::move(steps), residual_input));
  });
}

}  // namespace tilebank::engine
