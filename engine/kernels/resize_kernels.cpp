// Resize (opset 10-17) and Upsample: nearest (four rounding modes), linear and cubic interpolation
// in any number of dims, every coordinate_transformation_mode, exclude_outside, and
// tf_crop_and_resize's roi and extrapolation_value. Output sizes from `sizes`, or from `scales`
// (floor(scale * in)). Separable: each output coordinate of each dim gets its taps (input index
// and weight), and an output element is the sum over the product of its dims' taps.
#include <cmath>

#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

struct Taps1D {
  std::vector<int64_t> index;  // n per output coordinate, clamped into the input
  std::vector<double> weight;
  std::vector<uint8_t> outside;  // 1: the coordinate maps outside the roi (extrapolation_value)
  int64_t n = 0;
};

struct ResizeMode {
  std::string mode = "nearest", coordinates = "half_pixel", nearest = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
};

std::vector<double> Coefficients(const ResizeMode& m, double ratio, bool integral) {
  if (m.mode == "cubic") {
    const double A = m.cubic_a, r = ratio, s = 1 - ratio;
    return {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A, ((A + 2) * r - (A + 3)) * r * r + 1, ((A + 2) * s - (A + 3)) * s * s + 1,
            ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A};
  }
  if (m.mode == "linear") return {1 - ratio, ratio};
  if (integral) return {0, 1};
  bool upper = false;
  if (m.nearest == "round_prefer_floor") upper = ratio > 0.5;
  else if (m.nearest == "round_prefer_ceil") upper = ratio >= 0.5;
  else if (m.nearest == "ceil") upper = true;
  return {upper ? 0.0 : 1.0, upper ? 1.0 : 0.0};
}

// The taps of one dim: `in` input elements resized by `scale` to `out` (roi_start, roi_end: this
// dim's crop for tf_crop_and_resize).
Taps1D DimTaps(const ResizeMode& m, int64_t in, int64_t out, double scale, double roi_start, double roi_end) {
  Taps1D t;
  t.n = m.mode == "cubic" ? 4 : 2;
  const double out_width = scale * static_cast<double>(in);
  for (int64_t x = 0; x < out; ++x) {
    double src = 0;
    bool outside = false;
    const std::string& c = m.coordinates;
    if (c == "align_corners") src = out_width == 1 ? 0.0 : x * (in - 1) / (out_width - 1);
    else if (c == "asymmetric") src = x / scale;
    else if (c == "tf_crop_and_resize") {
      src = (out_width == 1 ? (roi_end - roi_start) * (in - 1) / 2 : x * (roi_end - roi_start) * (in - 1) / (out_width - 1)) + roi_start * (in - 1);
      outside = src < 0 || src > in - 1;
    } else if (c == "pytorch_half_pixel") src = out_width == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    else if (c == "tf_half_pixel_for_nn") src = (x + 0.5) / scale;
    else src = (x + 0.5) / scale - 0.5;  // half_pixel
    const bool integral = src == std::floor(src);
    const double base = integral ? src - 1 : std::floor(src), ratio = src - base;
    std::vector<double> w = Coefficients(m, ratio, integral);
    const int64_t first = static_cast<int64_t>(base) - (t.n / 2 - 1);
    if (m.exclude_outside) {
      double sum = 0;
      for (int64_t j = 0; j < t.n; ++j) {
        if (first + j < 0 || first + j >= in) w[j] = 0;
        sum += w[j];
      }
      if (sum != 0)
        for (double& v : w) v /= sum;
    }
    for (int64_t j = 0; j < t.n; ++j) {
      t.index.push_back(std::clamp<int64_t>(first + j, 0, in - 1));
      t.weight.push_back(w[j]);
    }
    t.outside.push_back(outside);
  }
  return t;
}

KernelFactory MakeResize(bool upsample) {
  return [upsample](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    return FunctionKernel([info, upsample](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
      const TypedTensor& x = *in[0];
      const int r = x.rank();
      ResizeMode m;
      m.mode = info.attrs.String("mode", "nearest");
      if (m.mode != "nearest" && m.mode != "linear" && m.mode != "cubic" && m.mode != "bilinear") return info.Bad("mode '" + m.mode + "' is not nearest, linear or cubic");
      if (m.mode == "bilinear") m.mode = "linear";
      const bool legacy = upsample || info.opset < 11;  // Upsample and Resize-10: asymmetric, nearest rounds down
      m.coordinates = legacy ? "asymmetric" : info.attrs.String("coordinate_transformation_mode", "half_pixel");
      m.nearest = legacy ? "floor" : info.attrs.String("nearest_mode", "round_prefer_floor");
      m.cubic_a = info.attrs.Float("cubic_coeff_a", -0.75f);
      m.exclude_outside = info.attrs.Int("exclude_outside", 0) != 0;
      const double extrapolation = info.attrs.Float("extrapolation_value", 0.0f);
      // Inputs: Upsample-7 (X; scales attribute), Upsample-9 and Resize-10 (X, scales), Resize-11+ (X, roi, scales, sizes).
      const TypedTensor* roi = !legacy && in.size() > 1 ? in[1] : nullptr;
      const TypedTensor* scales = legacy ? (in.size() > 1 ? in[1] : nullptr) : (in.size() > 2 ? in[2] : nullptr);
      const TypedTensor* sizes = !legacy && in.size() > 3 ? in[3] : nullptr;
      std::vector<double> scale(r, 1.0);
      std::vector<int64_t> shape(r);
      if (sizes && sizes->size()) {
        if (sizes->size() != r) return info.Bad("sizes has " + std::to_string(sizes->size()) + " elements; X has rank " + std::to_string(r));
        for (int d = 0; d < r; ++d) {
          shape[d] = sizes->IntAt(d);
          scale[d] = x.shape[d] ? static_cast<double>(shape[d]) / x.shape[d] : 1.0;
        }
      } else {
        std::vector<float> given = info.attrs.Floats("scales");
        if (scales && scales->size()) {
          given.clear();
          for (int64_t i = 0; i < scales->size(); ++i) given.push_back(static_cast<float>(scales->At(i)));
        }
        if (static_cast<int>(given.size()) != r) return info.Bad("needs scales or sizes with one element per dim of X (rank " + std::to_string(r) + ")");
        for (int d = 0; d < r; ++d) {
          if (!(given[d] > 0)) return info.Bad("scales must be positive");
          scale[d] = given[d];
          shape[d] = static_cast<int64_t>(std::floor(given[d] * x.shape[d]));
        }
      }
      std::vector<Taps1D> taps;
      for (int d = 0; d < r; ++d) {
        const bool crop = roi && roi->size() == 2 * r;
        taps.push_back(DimTaps(m, x.shape[d], shape[d], scale[d], crop ? roi->At(d) : 0.0, crop ? roi->At(d + r) : 1.0));
      }
      const std::vector<double> xv = AsDoubles(x);
      std::vector<double> y(static_cast<size_t>(Tensor::NumElements(shape)));
      std::vector<int64_t> tap_counts;
      for (const Taps1D& t : taps) tap_counts.push_back(t.n);
      ForEachIndex(shape, [&](int64_t o, const std::vector<int64_t>& at) {
        bool outside = false;
        for (int d = 0; d < r; ++d) outside = outside || taps[d].outside[at[d]];
        if (outside) {
          y[o] = extrapolation;
          return;
        }
        // The sum over the product of each dim's taps.
        double sum = 0;
        ForEachIndex(tap_counts, [&](int64_t, const std::vector<int64_t>& j) {
          double w = 1;
          int64_t offset = 0;
          for (int d = 0; d < r; ++d) {
            const int64_t t = at[d] * taps[d].n + j[d];
            w *= taps[d].weight[t];
            offset = offset * x.shape[d] + taps[d].index[t];
          }
          if (w != 0) sum += w * xv[offset];
        });
        y[o] = sum;
      });
      (*out)[0] = FromDoubles(x.dtype, shape, y);
      return Status::Ok();
    });
  };
}

}  // namespace

void RegisterResizeKernels(KernelRegistry* r) {
  r->Add({"Resize", 10, INT_MAX, NumericTypes(), 0, MakeResize(false)});
  r->Add({"Upsample", 7, INT_MAX, NumericTypes(), 0, MakeResize(true)});
}

}  // namespace tilebank::engine::kernels
