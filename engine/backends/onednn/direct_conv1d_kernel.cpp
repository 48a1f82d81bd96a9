#include "engine/backends/onednn/direct_conv1d_kernel.h"

#include <algorithm>

#include "engine/backends/onednn/onednn_common.h"
#include "engine/backends/onednn/own_conv_kernel.h"
#include "engine/backends/onednn/own_or_rival.h"
#include "engine/backends/simd/direct_conv1d.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {

namespace {

// Multiply-adds below which a thread's share is not worth waking a second thread for.
constexpr int64_t kSerialProducts = int64_t{1} << 16;
// Runs over which making a kernel at load is charged against its speed (as impl.onednn's choice
// of a 1-D convolution's JIT kernel charges brgconv's code): oneDNN makes code for every width and
// dilation at each load (0.5-15 ms), the own kernel makes none.
constexpr double kRunsPayingForMaking = 200;
// Vectors of output columns a range holds at most (its input window stays in cache), fewer where
// strided (each output reads `stride` more input columns).
constexpr int64_t kRangeVectors = 12;

class DirectConv1dKernel : public OwnConvKernel {
 public:
  DirectConv1dKernel(const ConvProblem& p, std::vector<int64_t> shape, std::vector<ConvEpilogueStep> steps, int residual_input)
      : OwnConvKernel(p, std::move(shape), residual_input, dnnl::memory::format_tag::nchw, true) {
    epilogue_.steps = std::move(steps);
    epilogue_.channels = p.OC;
    g_.n = p.N, g_.c = p.C, g_.w = p.W, g_.oc = p.OC, g_.ow = p.OW;
    g_.k = p.KW, g_.dilation = p.dw, g_.pad_left = p.pw, g_.stride = p.sw, g_.groups = p.G;
  }
  bool RunsOnAnyThread() const override { return true; }  // own loops over ParallelFor; NCHW needs no scratch

 protected:
  Status PackWeights(const Tensor& weights, const Tensor* bias) override {
    weights_ = PackConv1dWeights(g_, weights.data.data());
    bias_.clear();
    if (bias) bias_.assign(bias->data.begin(), bias->data.begin() + g_.oc);
    epilogue_.bias = bias ? bias_.data() : nullptr;
    return Status::Ok();
  }
  std::string Algorithm() const override { return kOwnDirect1dAlgo; }
  // Ranges of output columns of each image and group (as many as the threads, or a multiple, where
  // rows are long; a range's input window shrinks with the stride), and where they are too few to
  // share, blocks of output channels too, split among the threads.
  Status Compute(const float* src, const float* residual, float* dst) override {
    epilogue_.residual = residual;
    const int64_t lanes = Conv1dVectorLanes(), threads = ParallelThreads(), vectors = (g_.ow + lanes - 1) / lanes;
    const int64_t ocg = g_.oc_per_group(), blocks = (ocg + kConv1dChannelBlock - 1) / kConv1dChannelBlock;
    const int64_t range_vectors = std::max<int64_t>(1, kRangeVectors * 4 / std::max<int64_t>(4, g_.stride));
    int64_t ranges = (vectors + range_vectors - 1) / range_vectors;
    if (ranges >= threads) ranges = std::min((ranges + threads - 1) / threads * threads, vectors);
    const int64_t wanted = 4 * threads;
    int64_t chunks = std::min(blocks, std::max<int64_t>(1, (wanted + g_.n * g_.groups * ranges - 1) / (g_.n * g_.groups * ranges)));
    if (g_.n * g_.groups * ranges * chunks < threads) ranges = std::min(threads, vectors);  // short rows of few channels
    const int64_t blocks_per_chunk = (blocks + chunks - 1) / chunks;
    chunks = (blocks + blocks_per_chunk - 1) / blocks_per_chunk;  // none empty
    const int64_t per_chunk = blocks_per_chunk * kConv1dChannelBlock, planes = g_.n * g_.groups * ranges, items = planes * chunks;
    const int64_t per_item = std::max<int64_t>(1, g_.c_per_group() * g_.k * per_chunk * g_.ow / ranges);
    // Range r's first column: r / ranges of the row, rounded to a vector.
    auto column = [&](int64_t r) { return std::min(g_.ow, (r * g_.ow / ranges + lanes / 2) / lanes * lanes); };
    ParallelFor(items, std::max<int64_t>(1, kSerialProducts / per_item), [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        const int64_t chunk = item % chunks, plane = item / chunks, range = plane % ranges;
        const int64_t group = plane / ranges % g_.groups, image = plane / ranges / g_.groups;
        const int64_t oc_begin = chunk * per_chunk, oc_end = std::min(ocg, oc_begin + per_chunk);
        const int64_t x_begin = column(range), x_end = range + 1 == ranges ? g_.ow : column(range + 1);
        if (x_begin < x_end) DirectConv1dColumns(g_, src, weights_.data(), epilogue_, dst, image, group, x_begin, x_end, oc_begin, oc_end);
      }
    });
    return Status::Ok();
  }

 private:
  Conv1dGeometry g_;
  ConvEpilogue epilogue_;
  std::vector<float> weights_, bias_;
};

}  // namespace

std::string OwnDirectConv1dRefuses(const ConvProblem& p) {
  if (p.H != 1 || p.KH != 1 || p.ph || p.ph_end || p.OH != 1) return "the own 1-D convolution runs inputs of height 1 (a Conv1d) only";
  if (p.sw < 1 || p.dw < 1 || p.KW < 1) return "the own 1-D convolution runs strides, dilations and filter widths of at least 1 only";
  if (p.N <= 0 || p.OW <= 0 || p.C <= 0 || p.OC <= 0) return "the own 1-D convolution runs non-empty inputs and outputs only";
  return "";
}

bool OwnDirectConv1dRunsFaster(const OpSpec& op, const std::vector<ChainStep>& post_ops,
                               const std::function<std::unique_ptr<Kernel>()>& make_rival) {
  auto p = AnalyzeConv(op);
  if (!p.ok()) return false;
  return OwnKernelRunsFaster("own direct conv1d v1", op, post_ops, [&] { return OwnDirectConv1dKernel(*p, op.outputs[0].shape, post_ops, "auto"); },
                             make_rival, kRunsPayingForMaking);
}

Result<std::unique_ptr<Kernel>> OwnDirectConv1dKernel(const ConvProblem& p, const std::vector<int64_t>& out_shape, const std::vector<ChainStep>& post_ops,
                                                      const std::string& layout) {
  if (std::string why = OwnDirectConv1dRefuses(p); !why.empty()) return Status::InvalidInput(why);
  if (layout != "auto" && layout != "plain")
    return Status::InvalidInput("the own 1-D convolution keeps its activations in NCHW (layout 'plain' or 'auto'), not '" + layout + "'");
  std::vector<ConvEpilogueStep> steps;
  int residual_input = -1;
  TB_RETURN_IF_ERROR(OwnConvEpilogueOf(p, post_ops, out_shape, "the own 1-D convolution", &steps, &residual_input));
  return CatchOneDnnErrors([&]() -> Result<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new DirectConv1dKernel(p, out_shape, std::move(steps), residual_input));
  });
}

}  // namespace tilebank::engine
