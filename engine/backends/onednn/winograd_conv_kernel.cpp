#include "engine/backends/onednn/winograd_conv_kernel.h"

#include <dnnl.hpp>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "engine/backends/onednn/onednn_common.h"
#include "engine/backends/onednn/own_conv_kernel.h"
#include "engine/backends/simd/winograd_transforms.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

// The activations' layout of a kernel: a tag of oneDNN's (nChw16c, nChw8c, nhwc) and the channel
// blocks of source and destination it makes (nhwc: one block of all the channels).
struct ActivationLayout {
  tag t = tag::nChw16c;
  int64_t block = 16, out_block = 16;
};

ActivationLayout LayoutOf(tag t, const ConvProblem& p) {
  if (t == tag::nhwc) return {t, p.C, p.OC};
  const int64_t b = t == tag::nChw8c ? 8 : 16;
  return {t, b, b};
}

bool NhwcFits(const ConvProblem& p) { return p.C % 8 == 0 && p.OC % 8 == 0; }

// The own algorithms, smallest tile first: the policy's name and m.
constexpr std::pair<const char*, int> kOwnWinograd[] = {{"winograd_f2", 2}, {"winograd_f4", 4}, {"winograd_f6", 6}};

// The layout oneDNN's direct convolution of `p` hands its output over in here, of those the kernel
// takes; nChw16c when it picks none of them.
ActivationLayout LayoutOneDnnPicks(const ConvProblem& p) {
  try {
    const memory::dims dst{p.N, p.OC, p.OH, p.OW};
    const auto desc = ConvDesc(p, "direct", "blocked");  // alive while the descriptor is made
    const dnnl::convolution_forward::primitive_desc pd(desc, OneDnnCpuEngine());
    const std::string picked = HandoverLayoutOf(pd.dst_desc()).key;
    for (tag t : {tag::nChw16c, tag::nChw8c, tag::nhwc})
      if (picked == HandoverLayoutOf(memory::desc(dst, dt::f32, t)).key && (t != tag::nhwc || NhwcFits(p))) return LayoutOf(t, p);
  } catch (const dnnl::error&) {
  }
  return LayoutOf(tag::nChw16c, p);
}

class OwnWinogradKernel : public OwnConvKernel {
 public:
  OwnWinogradKernel(const ConvProblem& p, std::vector<int64_t> shape, int m, std::vector<ConvEpilogueStep> steps, int residual_input,
                    ActivationLayout layout, bool plain)
      : OwnConvKernel(p, std::move(shape), residual_input, layout.t, plain) {
    epilogue_.steps = std::move(steps);
    epilogue_.channels = p.OC;
    g_ = MakeWinogradGeometry(m, p.N, p.C, p.H, p.W, p.OC, p.OH, p.OW, p.ph, p.pw, layout.block, layout.out_block);
  }

 protected:
  // The transformed weights in the batched matmul's layout, the bias, the matmul and its buffers.
  Status PackWeights(const Tensor& weights, const Tensor* bias) override {
    return CatchOneDnnErrors([&]() -> Status {
      const ConvProblem& p = problem();
      const int64_t a2 = static_cast<int64_t>(g_.alpha()) * g_.alpha(), tiles = g_.tiles();
      const int64_t cp = g_.c_blocks * g_.block, ocp = g_.oc_blocks * g_.out_block;
      const std::vector<float> u = WinogradWeights(g_.m, weights.data.data(), p.OC, p.C, ocp, cp);
      const memory::desc v_md({a2, tiles, cp}, dt::f32, tag::abc), u_md({a2, cp, ocp}, dt::f32, tag::any), m_md({a2, tiles, ocp}, dt::f32, tag::abc);
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(v_md, u_md, m_md), OneDnnCpuEngine());
      TB_RETURN_IF_ERROR(RefuseReference(pd));
      matmul_ = dnnl::matmul(pd);
      memory user_u({{a2, cp, ocp}, dt::f32, tag::abc}, OneDnnCpuEngine(), const_cast<float*>(u.data()));
      u_ = memory(pd.weights_desc(), OneDnnCpuEngine());
      dnnl::reorder(user_u, u_).execute(stream(), user_u, u_);
      stream().wait();
      v_ = memory(pd.src_desc(), OneDnnCpuEngine(), DNNL_MEMORY_NONE);
      products_ = memory(pd.dst_desc(), OneDnnCpuEngine(), DNNL_MEMORY_NONE);
      bias_.assign(static_cast<size_t>(ocp), 0.f);
      if (bias) std::copy(bias->data.begin(), bias->data.begin() + p.OC, bias_.begin());
      epilogue_.bias = p.bias ? bias_.data() : nullptr;
      return Status::Ok();
    });
  }
  std::vector<memory*> RunBuffers() override { return {&v_, &products_}; }
  std::string Algorithm() const override { return "winograd_f" + std::to_string(g_.m); }
  Status Compute(const float* src, const float* residual, float* dst) override {
    float* v = static_cast<float*>(v_.get_data_handle());
    ParallelFor(g_.tiles(), 1, [&](int64_t begin, int64_t end) { WinogradInputTransform(g_, src, v, begin, end); });
    ExecuteAndWait(matmul_, stream(), {{DNNL_ARG_SRC, v_}, {DNNL_ARG_WEIGHTS, u_}, {DNNL_ARG_DST, products_}});
    epilogue_.residual = residual;
    const float* products = static_cast<const float*>(products_.get_data_handle());
    ParallelFor(g_.tiles(), 1, [&](int64_t begin, int64_t end) { WinogradOutputTransform(g_, products, epilogue_, dst, begin, end); });
    return Status::Ok();
  }

 private:
  WinogradGeometry g_;
  ConvEpilogue epilogue_;
  std::vector<float> bias_;
  dnnl::matmul matmul_;
  memory u_, v_, products_;
};

}  // namespace

int OwnWinogradTile(const std::string& algo) {
  for (const auto& [name, m] : kOwnWinograd)
    if (algo == name) return m;
  return 0;
}

std::vector<std::pair<std::string, std::string>> OwnWinogradOffers(const ConvProblem& p) {
  std::vector<std::pair<std::string, std::string>> offers;
  if (!OwnWinogradRefuses(p).empty()) return offers;
  for (const auto& [algo, m] : kOwnWinograd)
    for (const char* layout : {"blocked", "plain", "nhwc"})
      if (std::string(layout) != "nhwc" || NhwcFits(p)) offers.emplace_back(algo, layout);
  return offers;
}

std::string OwnWinogradRefuses(const ConvProblem& p) {
  if (p.KH != 3 || p.KW != 3) return "the own Winograd runs 3x3 convolutions only";
  if (p.sh != 1 || p.sw != 1) return "the own Winograd runs stride-1 convolutions only";
  if (p.dh != 1 || p.dw != 1) return "the own Winograd runs undilated convolutions only";
  if (p.G != 1) return "the own Winograd runs ungrouped convolutions only";
  return "";
}

Result<std::unique_ptr<Kernel>> OwnWinogradConvKernel(const ConvProblem& p, const std::vector<int64_t>& out_shape, int m,
                                                      const std::vector<ChainStep>& post_ops, const std::string& layout) {
  if (std::string why = OwnWinogradRefuses(p); !why.empty()) return Status::InvalidInput(why);
  if (!WinogradTileKnown(m)) return Status::InvalidInput("the own Winograd has no F(" + std::to_string(m) + ", 3)");
  if (layout != "auto" && layout != "blocked" && layout != "plain" && layout != "nhwc")
    return Status::InvalidInput("the own Winograd keeps its activations channel-blocked, in NHWC or NCHW, not '" + layout + "'");
  if (layout == "nhwc" && !NhwcFits(p)) return Status::InvalidInput("the own Winograd takes NHWC where the channel counts are multiples of 8");
  std::vector<ConvEpilogueStep> steps;
  int residual_input = -1;
  TB_RETURN_IF_ERROR(OwnConvEpilogueOf(p, post_ops, out_shape, "the own Winograd", &steps, &residual_input));
  return CatchOneDnnErrors([&]() -> Result<std::unique_ptr<Kernel>> {
    // "auto": as oneDNN's direct convolution of the instance hands over here; "plain": blocked inside.
    const ActivationLayout inside = layout == "auto" ? LayoutOneDnnPicks(p)
                                    : layout == "nhwc" ? LayoutOf(tag::nhwc, p)
                                                       : LayoutOf(LayoutOneDnnPicks(p).t == tag::nChw8c ? tag::nChw8c : tag::nChw16c, p);
    return std::unique_ptr<Kernel>(new OwnWinogradKernel(p, out_shape, m, std::move(steps), residual_input, inside, layout == "plain"));
  });
}

}  // namespace tilebank::engine
