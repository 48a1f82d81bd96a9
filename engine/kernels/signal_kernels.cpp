// Signal processing: HannWindow, HammingWindow, BlackmanWindow, DFT (forward, inverse, onesided,
// any axis, real or complex input), STFT and MelWeightMatrix. Complex values are a trailing dim
// of 2 (real, imaginary), as ONNX gives them. Transforms are direct O(n^2) sums in double.
#include <cmath>
#include <complex>

#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

constexpr double kPi = 3.14159265358979323846;

enum class Window { kHann, kHamming, kBlackman };

KernelFactory MakeWindow(Window kind) {
  return [kind](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    return FunctionKernel([info, kind](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
      if (in.empty() || !in[0] || in[0]->size() != 1) return info.Bad("takes the window size as a scalar");
      const int64_t n = in[0]->IntAt(0);
      if (n < 0) return info.Bad("window size " + std::to_string(n) + " is negative");
      const bool periodic = info.attrs.Int("periodic", 1) != 0;
      const double d = periodic ? static_cast<double>(n) : static_cast<double>(n - 1);
      std::vector<double> w(n);
      for (int64_t k = 0; k < n; ++k) {
        const double x = d > 0 ? 2 * kPi * k / d : 0.0;
        switch (kind) {
          case Window::kHann: w[k] = 0.5 - 0.5 * std::cos(x); break;
          case Window::kHamming: w[k] = 25.0 / 46 - 21.0 / 46 * std::cos(x); break;
          case Window::kBlackman: w[k] = 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2 * x); break;
        }
      }
      (*out)[0] = FromDoubles(DTypeOfOnnx(static_cast<int>(info.attrs.Int("output_datatype", 1))), {n}, w);
      return Status::Ok();
    });
  };
}

// The DFT of `x` (length n, zero-padded or cut to `length`), the first `bins` outputs.
std::vector<std::complex<double>> Transform(const std::vector<std::complex<double>>& x, int64_t length, int64_t bins, bool inverse) {
  std::vector<std::complex<double>> y(bins);
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < bins; ++k) {
    std::complex<double> acc = 0;
    for (int64_t t = 0; t < length && t < static_cast<int64_t>(x.size()); ++t) acc += x[t] * std::polar(1.0, sign * 2 * kPi * k * t / length);
    y[k] = inverse ? acc / static_cast<double>(length) : acc;
  }
  return y;
}

Result<std::unique_ptr<OpKernel>> MakeDft(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    if (x.rank() < 3 || (x.shape.back() != 1 && x.shape.back() != 2)) return info.Bad("takes [batch, n..., 1 or 2] (real or complex)");
    auto axis = Axis(info.attrs.Int("axis", 1), x.rank() - 1);
    if (!axis || *axis == 0) return info.Bad("axis must be a signal dim (1.." + std::to_string(x.rank() - 2) + ")");
    const bool inverse = info.attrs.Int("inverse", 0) != 0, onesided = info.attrs.Int("onesided", 0) != 0;
    const int64_t n = x.shape[*axis], length = in.size() > 1 && in[1] && in[1]->size() ? in[1]->IntAt(0) : n;
    if (length < 1) return info.Bad("dft_length must be positive");
    const int64_t bins = onesided ? length / 2 + 1 : length, parts = x.shape.back();
    int64_t inner = 1;
    for (int64_t d = *axis + 1; d < x.rank() - 1; ++d) inner *= x.shape[d];
    const int64_t outer = x.size() / (n * inner * parts);
    std::vector<int64_t> shape = x.shape;
    shape[*axis] = bins;
    shape.back() = 2;
    const std::vector<double> xv = AsDoubles(x);
    std::vector<double> y(static_cast<size_t>(outer * bins * inner * 2));
    std::vector<std::complex<double>> line(n);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        for (int64_t t = 0; t < n; ++t) {
          const int64_t at = ((o * n + t) * inner + i) * parts;
          line[t] = {xv[at], parts == 2 ? xv[at + 1] : 0.0};
        }
        const auto spectrum = Transform(line, length, bins, inverse);
        for (int64_t k = 0; k < bins; ++k) {
          const int64_t at = ((o * bins + k) * inner + i) * 2;
          y[at] = spectrum[k].real(), y[at + 1] = spectrum[k].imag();
        }
      }
    (*out)[0] = FromDoubles(x.dtype, shape, y);
    return Status::Ok();
  });
}

// STFT(signal [batch, length, 1 or 2], frame_step, window, frame_length): [batch, frames, bins, 2].
Result<std::unique_ptr<OpKernel>> MakeStft(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    if (x.rank() != 3 || (x.shape[2] != 1 && x.shape[2] != 2) || in.size() < 2 || !in[1]) return info.Bad("takes signal [batch, length, 1 or 2] and frame_step");
    const int64_t step = in[1]->IntAt(0);
    const TypedTensor* window = in.size() > 2 ? in[2] : nullptr;
    const int64_t frame = in.size() > 3 && in[3] ? in[3]->IntAt(0) : window ? window->size() : 0;
    if (step < 1 || frame < 1 || frame > x.shape[1]) return info.Bad("frame_step and frame_length (or the window's size) must be positive and fit the signal");
    if (window && window->size() != frame) return info.Bad("the window has " + std::to_string(window->size()) + " elements; frame_length is " + std::to_string(frame));
    const bool onesided = info.attrs.Int("onesided", 1) != 0;
    const int64_t B = x.shape[0], L = x.shape[1], parts = x.shape[2], frames = (L - frame) / step + 1, bins = onesided ? frame / 2 + 1 : frame;
    const std::vector<double> xv = AsDoubles(x), wv = window ? AsDoubles(*window) : std::vector<double>(frame, 1.0);
    std::vector<double> y(static_cast<size_t>(B * frames * bins * 2));
    std::vector<std::complex<double>> line(frame);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t f = 0; f < frames; ++f) {
        for (int64_t t = 0; t < frame; ++t) {
          const int64_t at = (b * L + f * step + t) * parts;
          line[t] = std::complex<double>(xv[at], parts == 2 ? xv[at + 1] : 0.0) * wv[t];
        }
        const auto spectrum = Transform(line, frame, bins, false);
        for (int64_t k = 0; k < bins; ++k) {
          const int64_t at = ((b * frames + f) * bins + k) * 2;
          y[at] = spectrum[k].real(), y[at + 1] = spectrum[k].imag();
        }
      }
    (*out)[0] = FromDoubles(x.dtype, {B, frames, bins, 2}, y);
    return Status::Ok();
  });
}

// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangular filters, spaced evenly in mel
// between the edge frequencies, as ONNX's reference computes them.
Result<std::unique_ptr<OpKernel>> MakeMelWeightMatrix(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 5) return info.Bad("takes num_mel_bins, dft_length, sample_rate, lower_edge_hertz and upper_edge_hertz");
    for (const auto* t : in)
      if (!t || t->size() != 1) return info.Bad("takes five scalars");
    const int64_t mels = in[0]->IntAt(0), length = in[1]->IntAt(0), rate = in[2]->IntAt(0);
    if (mels < 1 || length < 1 || rate < 1) return info.Bad("num_mel_bins, dft_length and sample_rate must be positive");
    const double low = 2595 * std::log10(1 + in[3]->At(0) / 700), high = 2595 * std::log10(1 + in[4]->At(0) / 700);
    const double step = (high - low) / static_cast<double>(mels + 2);
    std::vector<int64_t> points(mels + 2);
    for (int64_t i = 0; i < mels + 2; ++i) {
      const double hz = 700 * (std::pow(10.0, (i * step + low) / 2595) - 1);
      points[i] = static_cast<int64_t>(std::floor((length + 1) * hz / rate));
    }
    const int64_t spectrum = length / 2 + 1;
    std::vector<double> w(static_cast<size_t>(spectrum * mels), 0.0);
    auto set = [&](int64_t j, int64_t i, double v) {
      if (j >= 0 && j < spectrum) w[j * mels + i] = v;
    };
    for (int64_t i = 0; i < mels; ++i) {
      const int64_t left = points[i], centre = points[i + 1], right = points[i + 2];
      if (centre == left) set(centre, i, 1.0);
      else
        for (int64_t j = left; j <= centre; ++j) set(j, i, static_cast<double>(j - left) / (centre - left));
      for (int64_t j = centre; j < right; ++j) set(j, i, static_cast<double>(right - j) / (right - centre));
    }
    (*out)[0] = FromDoubles(DTypeOfOnnx(static_cast<int>(info.attrs.Int("output_datatype", 1))), {spectrum, mels}, w);
    return Status::Ok();
  });
}

}  // namespace

void RegisterSignalKernels(KernelRegistry* r) {
  r->Add({"HannWindow", 17, INT_MAX, {DType::kInt32, DType::kInt64}, 0, MakeWindow(Window::kHann)});
  r->Add({"HammingWindow", 17, INT_MAX, {DType::kInt32, DType::kInt64}, 0, MakeWindow(Window::kHamming)});
  r->Add({"BlackmanWindow", 17, INT_MAX, {DType::kInt32, DType::kInt64}, 0, MakeWindow(Window::kBlackman)});
  r->Add({"DFT", 17, INT_MAX, FloatTypes(), 0, MakeDft});
  r->Add({"STFT", 17, INT_MAX, FloatTypes(), 0, MakeStft});
  r->Add({"MelWeightMatrix", 17, INT_MAX, {DType::kInt32, DType::kInt64}, 0, MakeMelWeightMatrix});
}

}  // namespace tilebank::engine::kernels
