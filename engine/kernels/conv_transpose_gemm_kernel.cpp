// ConvTranspose whose kernel tiles the output (strides equal to the kernel, no pads, dilation 1,
// one group: a UNet's or a segmentation decoder's 2x2 stride-2 upsampling) is one GEMM per image and
// a scatter: Z [M k1..kn, D1..Dn] = W^T [M k..., C] X [C, D...], then Y[m, d_i k_i + j_i] = Z + bias.
// oneDNN's deconvolution ran the same on its generic GEMM path in about three times the time
// (UNet's two upsamplings: 0.85 ms against 0.3). Static shapes run in the executor's arena (nothing
// copied in or out); others as a registry kernel. An instance of static shapes whose taps overlap or
// fall outside the output runs the same GEMM and a col2im (each tap's rows added where they land)
// where that ran faster than `rival` on this host (GemmIsFaster); its weights, when a constant of the
// graph, packed once (PackedTransposedGemm). Every other instance goes to `fallback`.

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>

#include "engine/backends/onednn/call_scratch.h"
#include "engine/backends/onednn/packed_transposed_gemm.h"
#include "engine/core/run_queue_watch.h"
#include "engine/backends/onednn/row_major_sgemm.h"
#include "engine/backends/measured_choice_cache.h"
#include "engine/core/parallel_for.h"
#include "engine/core/sample_stats.h"
#include "engine/kernels/conv_kernels.h"
#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine::kernels {
namespace {

// The instance as the GEMM sees it; spatial axes as three (leading 1s), so that one loop nest
// serves 1-D, 2-D and 3-D.
struct Geometry {
  int64_t N = 0, C = 0, M = 0;
  int64_t D[3] = {1, 1, 1}, k[3] = {1, 1, 1};                     // input positions, taps
  int64_t s[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, O[3] = {1, 1, 1};  // pad: before; O: the output
  bool tiles = false;  // strides = kernel, no pads, dilation 1: each output position written by one tap
  std::vector<int64_t> y_shape;
  int64_t positions() const { return D[0] * D[1] * D[2]; }
  int64_t taps() const { return k[0] * k[1] * k[2]; }
  int64_t outputs() const { return O[0] * O[1] * O[2]; }
};

// One group, float32 shapes of rank 3 to 5; nullopt for what the GEMM does not take.
std::optional<Geometry> GeometryOf(const KernelInfo& info, const std::vector<int64_t>& x, const std::vector<int64_t>& w) {
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size() || w[0] != x[1] || info.attrs.Int("group", 1) != 1) return std::nullopt;
  const std::vector<int64_t> dims(x.begin() + 2, x.end()), kernel(w.begin() + 2, w.end());
  auto window = ResolveTransposed(info, dims, kernel);
  if (!window.ok() || window->kernel != kernel) return std::nullopt;
  Geometry g;
  g.N = x[0], g.C = x[1], g.M = w[1];
  g.tiles = true;
  const size_t lead = 3 - dims.size();
  for (size_t d = 0; d < dims.size(); ++d) {
    g.D[lead + d] = dims[d], g.k[lead + d] = kernel[d], g.s[lead + d] = window->strides[d], g.dil[lead + d] = window->dilations[d];
    g.pad[lead + d] = window->pads[d], g.O[lead + d] = window->out[d];
    g.tiles &= window->strides[d] == kernel[d] && window->dilations[d] == 1 && window->pads[d] == 0 && window->out[d] == dims[d] * kernel[d];
  }
  g.y_shape = {g.N, g.M};
  g.y_shape.insert(g.y_shape.end(), window->out.begin(), window->out.end());
  return g;
}

// A tiling's channel m: each tap's rows of Z copied, bias added, to the output positions it alone reaches.
void ScatterTiles(const Geometry& g, const float* z, float shift, int64_t m, float* channel) {
  const int64_t positions = g.positions(), *D = g.D, *k = g.k;
  for (int64_t t0 = 0; t0 < k[0]; ++t0)
    for (int64_t t1 = 0; t1 < k[1]; ++t1)
      for (int64_t t2 = 0; t2 < k[2]; ++t2) {
        const float* from = z + ((m * k[0] + t0) * k[1] * k[2] + t1 * k[2] + t2) * positions;
        for (int64_t p0 = 0; p0 < D[0]; ++p0)
          for (int64_t p1 = 0; p1 < D[1]; ++p1) {
            const float* src = from + (p0 * D[1] + p1) * D[2];
            float* dst = channel + ((p0 * k[0] + t0) * D[1] * k[1] + p1 * k[1] + t1) * D[2] * k[2] + t2;
            for (int64_t p2 = 0; p2 < D[2]; ++p2) dst[p2 * k[2]] = src[p2] + shift;
          }
      }
}

// The input positions p along one axis whose tap t lands inside the output (p s - pad + t dil in
// [0, O)): [lo, hi).
void InsideRange(const Geometry& g, int axis, int64_t t, int64_t* lo, int64_t* hi) {
  const int64_t offset = t * g.dil[axis] - g.pad[axis], s = g.s[axis];
  *lo = offset >= 0 ? 0 : (-offset + s - 1) / s;
  *hi = std::min(g.D[axis], offset > g.O[axis] - 1 ? 0 : (g.O[axis] - 1 - offset) / s + 1);
}

// Any other instance's channel m (col2im): the bias, then each tap's rows of Z added where they land.
void AddTaps(const Geometry& g, const float* z, float shift, int64_t m, float* channel) {
  const int64_t positions = g.positions(), *D = g.D, *k = g.k, *O = g.O;
  std::fill(channel, channel + g.outputs(), shift);
  for (int64_t t0 = 0; t0 < k[0]; ++t0) {
    int64_t lo0, hi0;
    InsideRange(g, 0, t0, &lo0, &hi0);
    for (int64_t t1 = 0; t1 < k[1]; ++t1) {
      int64_t lo1, hi1;
      InsideRange(g, 1, t1, &lo1, &hi1);
      for (int64_t t2 = 0; t2 < k[2]; ++t2) {
        int64_t lo2, hi2;
        InsideRange(g, 2, t2, &lo2, &hi2);
        const float* from = z + ((m * k[0] + t0) * k[1] * k[2] + t1 * k[2] + t2) * positions;
        for (int64_t p0 = lo0; p0 < hi0; ++p0)
          for (int64_t p1 = lo1; p1 < hi1; ++p1) {
            const float* src = from + (p0 * D[1] + p1) * D[2];
            const int64_t o0 = p0 * g.s[0] - g.pad[0] + t0 * g.dil[0], o1 = p1 * g.s[1] - g.pad[1] + t1 * g.dil[1];
            float* dst = channel + (o0 * O[1] + o1) * O[2] - g.pad[2] + t2 * g.dil[2];
            for (int64_t p2 = lo2; p2 < hi2; ++p2) dst[p2 * g.s[2]] += src[p2];
          }
      }
    }
  }
}

// y = the ConvTranspose of x by w (+ bias, may be null). `packed`, where given, holds w packed and
// makes each image's product. Z (and the packed product's own scratch) lie in the calling thread's
// room (call_scratch.h), shared by the kernels run there, not held by each between runs (MelGAN's
// transposed convolutions held 6.5 MB each).
void RunByGemm(const Geometry& g, const float* x, const float* w, const float* bias, float* y, PackedTransposedGemm* packed = nullptr) {
  const int64_t positions = g.positions(), rows = g.M * g.taps(), plane = g.outputs();
  if (rows == 0) return;
  if (positions == 0) {  // nothing reaches the output: the bias alone
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t m = 0; m < g.M; ++m) std::fill(y + (n * g.M + m) * plane, y + (n * g.M + m + 1) * plane, bias ? bias[m] : 0.0f);
    return;
  }
  const size_t z_floats = static_cast<size_t>(rows * positions), z_bytes = (z_floats * sizeof(float) + kCallScratchAlign - 1) / kCallScratchAlign * kCallScratchAlign;
  std::byte* room = CallScratch(z_bytes + (packed ? z_floats * sizeof(float) : 0));
  float* z = reinterpret_cast<float*>(room);
  for (int64_t n = 0; n < g.N; ++n) {
    if (g.C > 0 && packed)
      packed->Run(x + n * g.C * positions, z, reinterpret_cast<float*>(room + z_bytes));
    else if (g.C > 0)  // W is [C, M k...] row-major: its transpose times X's image [C, D...]
      RowMajorSgemm('T', 'N', rows, positions, g.C, 1.0f, w, rows, x + n * g.C * positions, positions, 0.0f, z, positions);
    else
      std::fill(z, z + z_floats, 0.0f);
    float* image = y + n * g.M * plane;
    ParallelFor(g.M, 1, [&](int64_t begin, int64_t end) {
      for (int64_t m = begin; m < end; ++m) (g.tiles ? ScatterTiles : AddTaps)(g, z, bias ? bias[m] : 0.0f, m, image + m * plane);
    });
  }
}

// Shapes seen at run time: the tiling is worked out per call.
class ConvTransposeByGemm : public OpKernel {
 public:
  ConvTransposeByGemm(KernelInfo info, std::unique_ptr<OpKernel> fallback) : info_(std::move(info)), fallback_(std::move(fallback)) {}

  Status Compute(const KernelInputs& in, std::vector<TypedTensor>* out) const override {
    if (in.size() < 2 || !in[0] || !in[1] || in[0]->dtype != DType::kFloat32 || in[1]->dtype != DType::kFloat32) return fallback_->Compute(in, out);
    const TypedTensor* bias = in.size() > 2 ? in[2] : nullptr;
    const auto g = GeometryOf(info_, in[0]->shape, in[1]->shape);
    if (!g || !g->tiles || (bias && (bias->dtype != DType::kFloat32 || bias->size() != g->M))) return fallback_->Compute(in, out);
    TypedTensor& y = (*out)[0];
    ReshapeForOverwrite(&y, DType::kFloat32, g->y_shape);  // last run's buffer: nothing allocated or cleared
    RunByGemm(*g, in[0]->data<float>(), in[1]->data<float>(), bias ? bias->data<float>() : nullptr, y.data<float>());
    return Status::Ok();
  }

 private:
  KernelInfo info_;
  std::unique_ptr<OpKernel> fallback_;
};

// Whether the GEMM and col2im run instance `g` faster than `rival` (oneDNN's deconvolution): both
// timed once per instance and host on zeros of the static shapes `info` holds, alternated in
// kChoiceRounds rounds, and remembered (engine/backends/measured_choice_cache.h). On a Zen 5 the GEMM
// won DCGAN's last layer (64 -> 3 channels at 64x64) and oneDNN the four before it (docs/PERFORMANCE.md).
constexpr int kChoiceRounds = 4;

bool GemmIsFaster(const KernelInfo& info, const Geometry& g, bool has_bias, bool pack,
                  const std::function<Result<std::unique_ptr<OpKernel>>(const KernelInfo&)>& rival) {
  std::string key = std::string("registry deconv gemm v3") + (pack ? " packed|" : "|");
  for (int64_t v : {g.N, g.C, g.M}) key += std::to_string(v) + ",";
  for (const int64_t* a : {g.D, g.k, g.s, g.dil, g.pad, g.O}) {
    key += "|";
    for (int d = 0; d < 3; ++d) key += std::to_string(a[d]) + ",";
  }
  key += has_bias ? "|bias" : "|";
  if (const auto known = RecallMeasuredChoice(key)) return *known == "gemm";
  KernelInfo timed = info;  // holding no weights: a kernel that packed the zeros it was timed on would keep them
  timed.constant_input.assign(timed.constant_input.size(), false);
  timed.constant_inputs.clear();
  auto other = rival(timed);
  if (!other.ok()) return true;
  TypedTensor x(DType::kFloat32, *info.InputShape(0)), w(DType::kFloat32, *info.InputShape(1)), b(DType::kFloat32, {g.M});
  const KernelInputs in = {&x, &w, has_bias ? &b : nullptr};
  std::vector<TypedTensor> out(1);
  std::vector<float> y(static_cast<size_t>(g.N * g.M * g.outputs()));
  std::unique_ptr<PackedTransposedGemm> packed;  // the zeros packed, as the kernel packs its weights
  if (pack)
    if (auto made = PackedTransposedGemm::Make(g.C, g.M * g.taps(), g.positions(), w.data<float>()); made.ok()) packed = std::move(made.value());
  // One pair of timings made DCGAN's 64 -> 3 layer pick oneDNN (204 against 158 us) where the GEMM
  // runs it in 55-65 us and oneDNN in 131-148: the first one timed paid for a cold start.
  const RunQueueWatch watch;
  const std::vector<double> fastest = FastestOfAlternated(kChoiceRounds, 4, 1,
                                                          {[&] {
                                                             RunByGemm(g, x.data<float>(), w.data<float>(), has_bias ? b.data<float>() : nullptr, y.data(), packed.get());
                                                             return true;
                                                           },
                                                           [&] { return (*other)->Compute(in, &out).ok(); }});
  const double gemm = fastest[0], library = fastest[1];
  const bool faster = gemm < library;
  RememberMeasuredChoice(key, faster ? "gemm" : "library", &watch);
  return faster;
}

}  // namespace

Result<std::unique_ptr<OpKernel>> MakeConvTransposeByGemm(const KernelInfo& info, std::unique_ptr<OpKernel> fallback,
                                                          const std::function<Result<std::unique_ptr<OpKernel>>(const KernelInfo&)>& rival) {
  const auto &x = info.InputShape(0), &w = info.InputShape(1);
  const bool has_bias = info.HasInput(2);
  bool float32 = info.InputType(0) == DType::kFloat32 && info.InputType(1) == DType::kFloat32 && (!has_bias || info.InputType(2) == DType::kFloat32);
  if (float32 && x && w && info.OutputShape(0) && info.num_outputs == 1) {
    const auto g = GeometryOf(info, *x, *w);
    if (!g || *info.OutputShape(0) != g->y_shape || (has_bias && (!info.InputShape(2) || Tensor::NumElements(*info.InputShape(2)) != g->M)))
      return fallback;  // an instance the GEMM does not take
    // Weights known at load (a constant of the graph) are packed once, on the first run, where
    // oneDNN has a matmul for the product and the choice was timed with it.
    const bool pack = !g->tiles && info.IsConstantInput(1) && g->C > 0;
    if (!g->tiles && (!rival || !GemmIsFaster(info, *g, has_bias, pack, rival))) return fallback;
    struct Scratch {
      std::mutex mutex;
      bool pack = false;
      std::unique_ptr<PackedTransposedGemm> packed;
    };
    auto scratch = std::make_shared<Scratch>();
    scratch->pack = pack;
    ArenaFunction arena;
    arena.run = [g = *g, has_bias, scratch](const std::vector<const float*>& in, float* out) {
      std::lock_guard<std::mutex> lock(scratch->mutex);
      if (scratch->pack && !scratch->packed) {
        auto made = PackedTransposedGemm::Make(g.C, g.M * g.taps(), g.positions(), in[1]);
        if (made.ok()) scratch->packed = std::move(made.value());
        scratch->pack = made.ok();
      }
      RunByGemm(g, in[0], in[1], has_bias ? in[2] : nullptr, out, scratch->packed.get());
    };
    return ArenaKernel(info, std::move(arena));
  }
  return std::unique_ptr<OpKernel>(new ConvTransposeByGemm(info, std::move(fallback)));
}

}  // namespace tilebank::engine::kernels
