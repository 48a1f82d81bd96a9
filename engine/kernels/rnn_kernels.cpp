// Recurrent layers: LSTM (peepholes, input_forget), GRU (linear_before_reset) and RNN, forward,
// reverse or bidirectional, with sequence_lens, initial states, clip, any of ONNX's activation
// functions and both layouts. Reference kernels in double.
#include <cmath>

#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

enum class Cell { kLstm, kGru, kRnn };

using Activation = std::function<double(double)>;

Result<Activation> ActivationNamed(const KernelInfo& info, std::string name, const std::vector<float>& alphas, const std::vector<float>& betas, size_t* alpha_next,
                                   size_t* beta_next) {
  for (char& c : name) c = static_cast<char>(std::tolower(c));
  auto alpha = [&](double fallback) { return *alpha_next < alphas.size() ? alphas[(*alpha_next)++] : fallback; };
  auto beta = [&](double fallback) { return *beta_next < betas.size() ? betas[(*beta_next)++] : fallback; };
  if (name == "sigmoid") return Activation([](double x) { return 1 / (1 + std::exp(-x)); });
  if (name == "tanh") return Activation([](double x) { return std::tanh(x); });
  if (name == "relu") return Activation([](double x) { return std::max(x, 0.0); });
  if (name == "softsign") return Activation([](double x) { return x / (1 + std::abs(x)); });
  if (name == "softplus") return Activation([](double x) { return std::log1p(std::exp(x)); });
  if (name == "affine") {
    const double a = alpha(1.0), b = beta(0.0);
    return Activation([a, b](double x) { return a * x + b; });
  }
  if (name == "leakyrelu") {
    const double a = alpha(0.01);
    return Activation([a](double x) { return x >= 0 ? x : a * x; });
  }
  if (name == "thresholdedrelu") {
    const double a = alpha(1.0);
    return Activation([a](double x) { return x > a ? x : 0.0; });
  }
  if (name == "scaledtanh") {
    const double a = alpha(1.0), b = beta(1.0);
    return Activation([a, b](double x) { return a * std::tanh(b * x); });
  }
  if (name == "hardsigmoid") {
    const double a = alpha(0.2), b = beta(0.5);
    return Activation([a, b](double x) { return std::clamp(a * x + b, 0.0, 1.0); });
  }
  if (name == "elu") {
    const double a = alpha(1.0);
    return Activation([a](double x) { return x >= 0 ? x : a * (std::exp(x) - 1); });
  }
  return info.Bad("activation '" + name + "' is not one ONNX defines for recurrent layers");
}

KernelFactory Recurrent(Cell cell) {
  return [cell](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    const int gates = cell == Cell::kLstm ? 4 : cell == Cell::kGru ? 3 : 1;
    const int per_direction = cell == Cell::kLstm ? 3 : cell == Cell::kGru ? 2 : 1;
    const std::string direction = info.attrs.String("direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional") return info.Bad("direction '" + direction + "' is not forward, reverse or bidirectional");
    const int dirs = direction == "bidirectional" ? 2 : 1;
    std::vector<std::string> names;
    if (info.attrs.Has("activations"))
      for (const auto& a : info.attrs.json()["activations"]) names.push_back(a.get<std::string>());
    if (names.empty())
      for (int d = 0; d < dirs; ++d) {
        if (cell != Cell::kRnn) names.push_back("Sigmoid");
        names.push_back("Tanh");
        if (cell == Cell::kLstm) names.push_back("Tanh");
      }
    if (static_cast<int>(names.size()) != per_direction * dirs) return info.Bad("needs " + std::to_string(per_direction * dirs) + " activations");
    const std::vector<float> alphas = info.attrs.Floats("activation_alpha"), betas = info.attrs.Floats("activation_beta");
    size_t alpha_next = 0, beta_next = 0;
    std::vector<Activation> fns;
    for (const auto& n : names) {
      auto fn = ActivationNamed(info, n, alphas, betas, &alpha_next, &beta_next);
      if (!fn.ok()) return fn.status();
      fns.push_back(*fn);
    }
    return FunctionKernel([info, cell, gates, per_direction, dirs, direction, fns](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
      if (in.size() < 3 || !in[0] || !in[1] || !in[2] || in[0]->rank() != 3) return info.Bad("takes X [seq, batch, input], W and R");
      const bool batch_first = info.attrs.Int("layout", 0) != 0;
      const TypedTensor& x = *in[0];
      const int64_t S = batch_first ? x.shape[1] : x.shape[0], B = batch_first ? x.shape[0] : x.shape[1], I = x.shape[2];
      const int64_t H = info.attrs.Int("hidden_size", in[2]->shape.back());
      const int64_t G = gates * H;
      if (in[1]->shape != std::vector<int64_t>{dirs, G, I} || in[2]->shape != std::vector<int64_t>{dirs, G, H})
        return info.Bad("W must be " + ShapeText({dirs, G, I}) + " and R " + ShapeText({dirs, G, H}));
      const double clip = info.attrs.Has("clip") ? info.attrs.Float("clip", 0.0f) : 0.0;
      const bool input_forget = info.attrs.Int("input_forget", 0) != 0, linear_before_reset = info.attrs.Int("linear_before_reset", 0) != 0;
      auto optional = [&](size_t i, std::vector<int64_t> shape) -> Result<std::vector<double>> {
        if (in.size() <= i || !in[i]) return std::vector<double>(static_cast<size_t>(Tensor::NumElements(shape)), 0.0);
        if (in[i]->size() != Tensor::NumElements(shape)) return info.Bad("input " + std::to_string(i) + " must have shape " + ShapeText(shape));
        return AsDoubles(*in[i]);
      };
      auto bias = optional(3, {dirs, 2 * G});
      auto h0 = optional(5, batch_first ? std::vector<int64_t>{B, dirs, H} : std::vector<int64_t>{dirs, B, H});
      auto c0 = optional(6, batch_first ? std::vector<int64_t>{B, dirs, H} : std::vector<int64_t>{dirs, B, H});
      auto peep = optional(7, {dirs, 3 * H});
      for (auto* r : {&bias, &h0, &c0, &peep})
        if (!r->ok()) return r->status();
      std::vector<int64_t> lens(B, S);
      if (in.size() > 4 && in[4])
        for (int64_t b = 0; b < B; ++b) lens[b] = std::clamp<int64_t>(in[4]->IntAt(b), 0, S);
      const std::vector<double> xv = AsDoubles(x), wv = AsDoubles(*in[1]), rv = AsDoubles(*in[2]);
      std::vector<double> y(static_cast<size_t>(S * dirs * B * H), 0.0), yh(static_cast<size_t>(dirs * B * H)), yc(yh.size());
      auto state_at = [&](int d, int64_t b) { return batch_first ? (b * dirs + d) * H : (d * B + b) * H; };
      auto y_at = [&](int64_t t, int d, int64_t b) { return batch_first ? ((b * S + t) * dirs + d) * H : ((t * dirs + d) * B + b) * H; };
      std::vector<double> pre(G), hr(G);
      for (int d = 0; d < dirs; ++d) {
        const bool reverse = direction == "reverse" || d == 1;
        const Activation &f = fns[d * per_direction], &g = fns[d * per_direction + (per_direction > 1 ? 1 : 0)], &h = fns[d * per_direction + per_direction - 1];
        const double *W = wv.data() + d * G * I, *R = rv.data() + d * G * H, *Wb = bias->data() + d * 2 * G, *Rb = Wb + G, *P = peep->data() + d * 3 * H;
        for (int64_t b = 0; b < B; ++b) {
          std::vector<double> hs(h0->begin() + state_at(d, b), h0->begin() + state_at(d, b) + H), cs(c0->begin() + state_at(d, b), c0->begin() + state_at(d, b) + H);
          for (int64_t step = 0; step < lens[b]; ++step) {
            const int64_t t = reverse ? lens[b] - 1 - step : step;
            const double* xt = xv.data() + (batch_first ? (b * S + t) * I : (t * B + b) * I);
            for (int64_t j = 0; j < G; ++j) {
              double a = Wb[j], r = Rb[j];
              for (int64_t k = 0; k < I; ++k) a += W[j * I + k] * xt[k];
              for (int64_t k = 0; k < H; ++k) r += R[j * H + k] * hs[k];
              pre[j] = a, hr[j] = r;
            }
            auto clipped = [&](double v) { return clip > 0 ? std::clamp(v, -clip, clip) : v; };
            std::vector<double> next(H);
            if (cell == Cell::kRnn) {
              for (int64_t k = 0; k < H; ++k) next[k] = f(clipped(pre[k] + hr[k]));
            } else if (cell == Cell::kGru) {
              // Gates z, r, h; R's h rows apply to r (.) H unless linear_before_reset.
              for (int64_t k = 0; k < H; ++k) {
                const double z = f(clipped(pre[k] + hr[k])), rg = f(clipped(pre[H + k] + hr[H + k]));
                double candidate;
                if (linear_before_reset) {
                  candidate = pre[2 * H + k] + rg * hr[2 * H + k];
                } else {
                  candidate = pre[2 * H + k] + Rb[2 * H + k];
                  for (int64_t m = 0; m < H; ++m) candidate += R[(2 * H + k) * H + m] * rg * hs[m];
                }
                next[k] = (1 - z) * g(clipped(candidate)) + z * hs[k];
              }
            } else {
              // Gates i, o, f, c; peepholes i, o, f.
              for (int64_t k = 0; k < H; ++k) {
                const double i = f(clipped(pre[k] + hr[k] + P[k] * cs[k]));
                const double fg = input_forget ? 1 - i : f(clipped(pre[2 * H + k] + hr[2 * H + k] + P[2 * H + k] * cs[k]));
                const double c = g(clipped(pre[3 * H + k] + hr[3 * H + k]));
                cs[k] = fg * cs[k] + i * c;
                const double o = f(clipped(pre[H + k] + hr[H + k] + P[H + k] * cs[k]));
                next[k] = o * h(cs[k]);
              }
            }
            hs = next;
            std::copy(hs.begin(), hs.end(), y.begin() + y_at(t, d, b));
          }
          std::copy(hs.begin(), hs.end(), yh.begin() + state_at(d, b));
          std::copy(cs.begin(), cs.end(), yc.begin() + state_at(d, b));
        }
      }
      const std::vector<int64_t> state_shape = batch_first ? std::vector<int64_t>{B, dirs, H} : std::vector<int64_t>{dirs, B, H};
      (*out)[0] = FromDoubles(x.dtype, batch_first ? std::vector<int64_t>{B, S, dirs, H} : std::vector<int64_t>{S, dirs, B, H}, y);
      if (out->size() > 1) (*out)[1] = FromDoubles(x.dtype, state_shape, yh);
      if (out->size() > 2 && cell == Cell::kLstm) (*out)[2] = FromDoubles(x.dtype, state_shape, yc);
      return Status::Ok();
    });
  };
}

}  // namespace

void RegisterRnnKernels(KernelRegistry* r) {
  r->Add({"LSTM", 7, INT_MAX, FloatTypes(), 0, Recurrent(Cell::kLstm)});
  r->Add({"GRU", 7, INT_MAX, FloatTypes(), 0, Recurrent(Cell::kGru)});
  r->Add({"RNN", 7, INT_MAX, FloatTypes(), 0, Recurrent(Cell::kRnn)});
}

}  // namespace tilebank::engine::kernels
