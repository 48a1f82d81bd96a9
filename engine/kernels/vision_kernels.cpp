// Detection and sampling ops: NonMaxSuppression (data-dependent output size), RoiAlign and
// GridSample (bilinear, nearest, bicubic; zeros, border, reflection padding).
#include <algorithm>
#include <cmath>
#include <array>
#include <numeric>

#include "engine/kernels/grid_sample_taps.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/roi_align_float.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

// NonMaxSuppression: per batch and class, boxes scoring above score_threshold in falling score
// order, each kept unless its IoU with a kept one exceeds iou_threshold, at most
// max_output_boxes_per_class; output [selected, 3] int64 (batch, class, box). Both implementations
// compute IoU in double, pair by pair alike; they differ in which pairs they look at.
using Corners = std::array<double, 4>;  // y1 <= y2, x1 <= x2

struct NmsProblem {
  int64_t B = 0, N = 0, C = 0, max_boxes = 0;
  double iou_threshold = 0, score_threshold = 0;
  bool has_score_threshold = false;
  std::vector<Corners> corners;  // [B, N]
  std::vector<double> scores;    // [B, C, N]
};

Result<NmsProblem> ReadNms(const KernelInfo& info, const KernelInputs& in) {
  if (in.size() < 2 || !in[0] || !in[1] || in[0]->rank() != 3 || in[1]->rank() != 3 || in[0]->shape[2] != 4)
    return info.Bad("takes boxes [B, N, 4] and scores [B, C, N]");
  const TypedTensor &boxes = *in[0], &scores = *in[1];
  NmsProblem p;
  p.B = boxes.shape[0], p.N = boxes.shape[1], p.C = scores.shape[1];
  if (scores.shape[0] != p.B || scores.shape[2] != p.N) return info.Bad("scores " + ShapeText(scores.shape) + " do not match boxes " + ShapeText(boxes.shape));
  p.max_boxes = in.size() > 2 && in[2] && in[2]->size() ? in[2]->IntAt(0) : 0;
  p.iou_threshold = in.size() > 3 && in[3] && in[3]->size() ? in[3]->At(0) : 0.0;
  p.has_score_threshold = in.size() > 4 && in[4] && in[4]->size();
  p.score_threshold = p.has_score_threshold ? in[4]->At(0) : 0.0;
  const bool center = info.attrs.Int("center_point_box", 0) != 0;
  const std::vector<double> bv = AsDoubles(boxes);
  p.corners.resize(bv.size() / 4);
  for (size_t i = 0; i < p.corners.size(); ++i) {
    const double* b = bv.data() + i * 4;
    p.corners[i] = center ? Corners{b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2}
                          : Corners{std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
  }
  p.scores = AsDoubles(scores);
  return p;
}

double Iou(const Corners& a, const Corners& b) {
  const double h = std::min(a[2], b[2]) - std::max(a[0], b[0]), w = std::min(a[3], b[3]) - std::max(a[1], b[1]);
  if (h <= 0 || w <= 0) return 0.0;
  const double inter = h * w, uni = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return uni > 0 ? inter / uni : 0.0;
}

// Batch b, class c's candidates: the boxes over the score threshold, highest score first (ties in
// box order).
std::vector<int64_t> NmsCandidates(const NmsProblem& p, int64_t b, int64_t c) {
  const double* s = p.scores.data() + (b * p.C + c) * p.N;
  std::vector<int64_t> order;
  for (int64_t i = 0; i < p.N; ++i)
    if (!p.has_score_threshold || s[i] > p.score_threshold) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return s[x] > s[y]; });
  return order;
}

// `select(b, c, order, emit)` runs the greedy selection of one batch and class; the kernel gathers
// what it emits.
template <typename Select>
Result<std::unique_ptr<OpKernel>> NmsKernel(const KernelInfo& info, Select select) {
  return FunctionKernel([info, select](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    auto problem = ReadNms(info, in);
    if (!problem.ok()) return problem.status();
    const NmsProblem& p = *problem;
    std::vector<int64_t> selected;
    for (int64_t b = 0; b < p.B; ++b)
      for (int64_t c = 0; c < p.C && p.max_boxes > 0; ++c)
        select(p, b, NmsCandidates(p, b, c), [&](int64_t i) { selected.insert(selected.end(), {b, c, i}); });
    (*out)[0] = TypedTensor::Of<int64_t>({static_cast<int64_t>(selected.size() / 3), 3}, selected);
    return Status::Ok();
  });
}

// The reference: each candidate against every kept box.
Result<std::unique_ptr<OpKernel>> MakeNonMaxSuppression(const KernelInfo& info) {
  return NmsKernel(info, [](const NmsProblem& p, int64_t b, const std::vector<int64_t>& order, const auto& emit) {
    std::vector<int64_t> kept;
    for (int64_t i : order) {
      if (static_cast<int64_t>(kept.size()) >= p.max_boxes) break;
      const Corners& box = p.corners[b * p.N + i];
      bool suppressed = false;
      for (int64_t k : kept) suppressed = suppressed || Iou(box, p.corners[b * p.N + k]) > p.iou_threshold;
      if (suppressed) continue;
      kept.push_back(i);
      emit(i);
    }
  });
}

// "pruned": boxes that do not overlap have IoU 0, which never exceeds an iou_threshold >= 0, so a
// candidate is compared only with kept boxes that share a bucket with it along one axis. Each kept
// box is filed under every bucket its extent [lo, hi] reaches, and a candidate looks in every bucket
// its own extent reaches: boxes whose extents meet at some x share x's bucket, bucket_of being
// non-decreasing, whatever the rounding. Buckets are as wide as the widest box (a box reaches two or
// three), along the axis where the candidates spread widest for their size, and at most twice as
// many as the candidates. Detectors that offset each class's boxes apart (torchvision's batched_nms:
// thousands of boxes in one call) then compare each box with its neighbours, not every kept box.
Result<std::unique_ptr<OpKernel>> MakePrunedNonMaxSuppression(const KernelInfo& info) {
  return NmsKernel(info, [](const NmsProblem& p, int64_t b, const std::vector<int64_t>& order, const auto& emit) {
    const Corners* corners = p.corners.data() + b * p.N;
    // The bucketing axis (0: y, 1: x) and its geometry; one bucket when the threshold is not >= 0
    // (boxes that do not overlap suppress each other then) or no axis has a finite spread.
    int axis = 0;
    double lo = 0, width = 1, best = 0;
    if (p.iou_threshold >= 0)
      for (int a = 0; a < 2; ++a) {
        double mn = HUGE_VAL, mx = -HUGE_VAL, extent = 0;
        for (int64_t i : order) {
          mn = std::min(mn, corners[i][a]);
          mx = std::max(mx, corners[i][a + 2]);
          extent = std::max(extent, corners[i][a + 2] - corners[i][a]);
        }
        extent = std::max(extent, 1e-12);
        const double spread = (mx - mn) / extent;
        if (std::isfinite(spread) && spread > best) best = spread, axis = a, lo = mn, width = extent;
      }
    const double most = static_cast<double>(std::min<int64_t>(2 * static_cast<int64_t>(order.size()), int64_t{1} << 16));
    const int64_t buckets = best > 2 ? static_cast<int64_t>(std::min(best, most)) + 1 : 1;
    // Non-decreasing in v; NaN goes to bucket 0.
    auto bucket_of = [&](double v) -> int64_t {
      const double k = std::floor((v - lo) / width);
      if (buckets == 1 || !(k > 0)) return 0;
      return k >= static_cast<double>(buckets - 1) ? buckets - 1 : static_cast<int64_t>(k);
    };
    std::vector<std::vector<int64_t>> kept(buckets);  // box indices, under each bucket their extent reaches
    int64_t kept_count = 0;
    for (int64_t i : order) {
      if (kept_count >= p.max_boxes) break;
      const Corners& box = corners[i];
      const int64_t first = bucket_of(box[axis]), last = std::max(first, bucket_of(box[axis + 2]));
      bool suppressed = false;
      for (int64_t k = first; k <= last && !suppressed; ++k)
        for (int64_t j : kept[k])
          if (Iou(box, corners[j]) > p.iou_threshold) {
            suppressed = true;
            break;
          }
      if (suppressed) continue;
      for (int64_t k = first; k <= last; ++k) kept[k].push_back(i);
      ++kept_count;
      emit(i);
    }
  });
}

// RoiAlign: each roi [x1, y1, x2, y2] (scaled by spatial_scale) split into output_height x
// output_width bins, each the average (or max) of sampling_ratio^2 bilinear samples.
Result<std::unique_ptr<OpKernel>> MakeRoiAlign(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 3 || !in[0] || !in[1] || !in[2] || in[0]->rank() != 4 || in[1]->rank() != 2 || in[1]->shape[1] != 4)
      return info.Bad("takes X [N, C, H, W], rois [R, 4] and batch_indices [R]");
    const TypedTensor& x = *in[0];
    const int64_t C = x.shape[1], H = x.shape[2], W = x.shape[3], R = in[1]->shape[0];
    const int64_t ph_n = info.attrs.Int("output_height", 1), pw_n = info.attrs.Int("output_width", 1), sampling = info.attrs.Int("sampling_ratio", 0);
    const double scale = info.attrs.Float("spatial_scale", 1.0f);
    const bool half_pixel = info.attrs.String("coordinate_transformation_mode", info.opset >= 16 ? "half_pixel" : "output_half_pixel") == "half_pixel";
    const bool use_max = info.attrs.String("mode", "avg") == "max";
    const RoiAlignShape shape{H, W, ph_n, pw_n, sampling, scale, half_pixel};
    const DType batch_type = in[2]->dtype;
    if (x.dtype == DType::kFloat32 && in[1]->dtype == DType::kFloat32 && (batch_type == DType::kInt64 || batch_type == DType::kInt32) &&
        in[2]->size() >= R) {  // the float32 loop on the threads
      TypedTensor& y = (*out)[0];
      ReshapeForOverwrite(&y, DType::kFloat32, {R, C, ph_n, pw_n});
      RunFault fault;
      RoiAlignFloat(shape, use_max, {x.data<float>(), x.shape[0], C, in[1]->data<float>(), R, in[2]->bytes.data(), batch_type == DType::kInt64},
                    y.data<float>(), &fault);
      if (auto bad = fault.First()) return info.Bad("batch index " + std::to_string(*bad) + " is outside X's batch");
      return Status::Ok();
    }
    const std::vector<double> xv = AsDoubles(x), rois = AsDoubles(*in[1]);
    std::vector<double> y(static_cast<size_t>(R * C * ph_n * pw_n), 0.0);
    std::vector<RoiSample> samples;
    int64_t per_bin = 0;
    for (int64_t r = 0; r < R; ++r) {
      const int64_t batch = in[2]->IntAt(r);
      if (batch < 0 || batch >= x.shape[0]) return info.Bad("batch index " + std::to_string(batch) + " is outside X's batch");
      RoiAlignSamples(shape, rois.data() + r * 4, &samples, &per_bin);
      const double count = std::max<int64_t>(per_bin, 1);
      for (int64_t c = 0; c < C; ++c) {
        const double* plane = xv.data() + (batch * C + c) * H * W;
        for (int64_t bin = 0; bin < ph_n * pw_n; ++bin) {
          double acc = 0;
          for (int64_t k = bin * per_bin; k < (bin + 1) * per_bin; ++k) {
            const RoiSample& p = samples[k];
            double v[4] = {0, 0, 0, 0};
            if (p.inside)
              for (int t = 0; t < 4; ++t) v[t] = p.w[t] * plane[p.at[t]];
            if (use_max) {
              const double m = std::max({v[0], v[1], v[2], v[3]});
              acc = k == bin * per_bin ? m : std::max(acc, m);
            } else {
              acc += v[0] + v[1] + v[2] + v[3];
            }
          }
          y[(r * C + c) * ph_n * pw_n + bin] = use_max ? acc : acc / count;
        }
      }
    }
    (*out)[0] = FromDoubles(x.dtype, {R, C, ph_n, pw_n}, y);
    return Status::Ok();
  });
}

// GridSample (opset 16, 2-D): Y[n, c, h, w] samples X[n, c] at grid[n, h, w] = (x, y) in [-1, 1].
Result<std::unique_ptr<OpKernel>> MakeGridSample(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 2 || !in[0] || !in[1] || in[0]->rank() != 4 || in[1]->rank() != 4 || in[1]->shape[3] != 2 || in[1]->shape[0] != in[0]->shape[0])
      return info.Bad("takes X [N, C, H, W] and grid [N, Hout, Wout, 2]");
    const TypedTensor &x = *in[0], &grid = *in[1];
    const int64_t N = x.shape[0], C = x.shape[1];
    GridSampleGeometry g;
    if (!MakeGridSampleGeometry(x.shape, grid.shape, info.attrs.String("mode", "bilinear"), info.attrs.String("padding_mode", "zeros"),
                                info.attrs.Int("align_corners", 0) != 0, &g))
      return info.Bad("mode '" + info.attrs.String("mode", "bilinear") + "' or padding_mode '" + info.attrs.String("padding_mode", "zeros") + "' is not ONNX's");
    const std::vector<double> xv = AsDoubles(x), gv = AsDoubles(grid);
    GridSampleTaps taps;
    std::vector<double> y(static_cast<size_t>(N * C * g.Ho * g.Wo));
    for (int64_t n = 0; n < N; ++n) {
      const double* grid_n = gv.data() + n * g.Ho * g.Wo * 2;
      FindGridSampleTaps(g, [grid_n](int64_t i) { return grid_n[i]; }, &taps);
      for (int64_t c = 0; c < C; ++c) {
        const double* plane = xv.data() + (n * C + c) * g.H * g.W;
        double* y_plane = y.data() + (n * C + c) * g.Ho * g.Wo;
        for (int64_t p = 0; p < g.Ho * g.Wo; ++p) {
          double v = 0;
          for (int64_t t = taps.first[p]; t < taps.first[p + 1]; ++t) v += plane[taps.offsets[t]] * taps.weights[t];
          y_plane[p] = v;
        }
      }
    }
    (*out)[0] = FromDoubles(x.dtype, {N, C, g.Ho, g.Wo}, y);
    return Status::Ok();
  });
}

}  // namespace

void RegisterVisionKernels(KernelRegistry* r) {
  r->Add({"NonMaxSuppression", 10, INT_MAX, {DType::kFloat32}, 0, MakeNonMaxSuppression});
  r->Add({"NonMaxSuppression", 10, INT_MAX, {DType::kFloat32}, 0, MakePrunedNonMaxSuppression, false, "pruned"});
  r->Add({"RoiAlign", 10, INT_MAX, FloatTypes(), 0, MakeRoiAlign});
  r->Add({"GridSample", 16, INT_MAX, FloatTypes(), 0, MakeGridSample});
}

}  // namespace tilebank::engine::kernels
