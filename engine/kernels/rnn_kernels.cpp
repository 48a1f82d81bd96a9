// Recurrent layers: LSTM (peepholes, input_forget), GRU (linear_before_reset) and RNN, forward,
// reverse or bidirectional, with sequence_lens, initial states, clip, any of ONNX's activation
// functions and both layouts. float32 computes in float with X's projection for all steps in one
// product and the recurrent ones per step on oneDNN's sgemm; the other types in double. Last in the
// table, oneDNN's RNN primitives (engine/kernels/onednn_rnn_kernel.h) for the instances they take.

#include <cmath>
#include <type_traits>

#include "engine/backends/onednn/row_major_sgemm.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/onednn_rnn_kernel.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

using Cell = RecurrentCell;

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

// A layer's sizes and attributes, as Recur reads them.
struct Geometry {
  Cell cell = Cell::kRnn;
  int dirs = 1;
  std::string direction;
  const std::vector<Activation>* fns = nullptr;  // per direction: f, g, h (as many as the cell has)
  bool batch_first = false, input_forget = false, linear_before_reset = false;
  int64_t S = 0, B = 0, I = 0, H = 0, G = 0;
  double clip = 0;
  std::vector<int64_t> lens;  // per batch entry
};

// C[M, N] = A[M, K] * B[N, K]^T + beta * C, row-major: oneDNN's sgemm for float, loops for double.
void MultiplyTransposed(int64_t M, int64_t N, int64_t K, const float* A, const float* B, float beta, float* C) {
  RowMajorSgemm('N', 'T', M, N, K, 1.0f, A, K, B, K, beta, C, N);
}
void MultiplyTransposed(int64_t M, int64_t N, int64_t K, const double* A, const double* B, double beta, double* C) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += A[m * K + k] * B[n * K + k];
      C[m * N + n] = acc + beta * C[m * N + n];
    }
}

// Input i as T values (zeros of `count` when it is left out): float32 data is read as it is.
template <class T>
std::vector<T> Operand(const KernelInputs& in, size_t i, int64_t count) {
  if (in.size() <= i || !in[i]) return std::vector<T>(static_cast<size_t>(count), T(0));
  if constexpr (std::is_same_v<T, float>) return std::vector<float>(in[i]->data<float>(), in[i]->data<float>() + in[i]->size());
  else return AsDoubles(*in[i]);
}

// The layer in T: X's projection through W for every step at once, then per batch entry and step
// R's product with the state, the gates and the cell's update.
template <class T>
void Recur(const Geometry& geo, const KernelInputs& in, std::vector<TypedTensor>* out, const std::vector<int64_t>& y_shape,
           const std::vector<int64_t>& state_shape) {
  const int64_t S = geo.S, B = geo.B, I = geo.I, H = geo.H, G = geo.G;
  const int dirs = geo.dirs;
  const std::vector<T> xv = Operand<T>(in, 0, S * B * I), wv = Operand<T>(in, 1, dirs * G * I), rv = Operand<T>(in, 2, dirs * G * H),
                       bias = Operand<T>(in, 3, dirs * 2 * G), h0 = Operand<T>(in, 5, dirs * B * H), c0 = Operand<T>(in, 6, dirs * B * H),
                       peep = Operand<T>(in, 7, dirs * 3 * H);
  std::vector<T> y(static_cast<size_t>(S * dirs * B * H), T(0)), yh(static_cast<size_t>(dirs * B * H)), yc(yh.size());
  auto state_at = [&](int d, int64_t b) { return geo.batch_first ? (b * dirs + d) * H : (d * B + b) * H; };
  auto y_at = [&](int64_t t, int d, int64_t b) { return geo.batch_first ? ((b * S + t) * dirs + d) * H : ((t * dirs + d) * B + b) * H; };
  // X's rows in memory order: (t, b), or (b, t) when batch_first.
  auto x_row = [&](int64_t t, int64_t b) { return geo.batch_first ? b * S + t : t * B + b; };
  const int per_direction = static_cast<int>(geo.fns->size()) / dirs;
  std::vector<T> projected(static_cast<size_t>(S * B * G)), hr(G), gated(H);
  const double clip = geo.clip;
  auto clipped = [clip](double v) { return clip > 0 ? std::clamp(v, -clip, clip) : v; };
  for (int d = 0; d < dirs; ++d) {
    const bool reverse = geo.direction == "reverse" || d == 1;
    const Activation &f = (*geo.fns)[d * per_direction], &g = (*geo.fns)[d * per_direction + (per_direction > 1 ? 1 : 0)],
                     &h = (*geo.fns)[d * per_direction + per_direction - 1];
    const T *W = wv.data() + d * G * I, *R = rv.data() + d * G * H, *Wb = bias.data() + d * 2 * G, *Rb = Wb + G, *P = peep.data() + d * 3 * H;
    for (int64_t row = 0; row < S * B; ++row) std::copy(Wb, Wb + G, projected.begin() + row * G);
    MultiplyTransposed(S * B, G, I, xv.data(), W, T(1), projected.data());
    for (int64_t b = 0; b < B; ++b) {
      std::vector<T> hs(h0.begin() + state_at(d, b), h0.begin() + state_at(d, b) + H), cs(c0.begin() + state_at(d, b), c0.begin() + state_at(d, b) + H);
      for (int64_t step = 0; step < geo.lens[b]; ++step) {
        const int64_t t = reverse ? geo.lens[b] - 1 - step : step;
        const T* pre = projected.data() + x_row(t, b) * G;
        // R's rows times the state; GRU's candidate rows (without linear_before_reset) apply to r (.) H below.
        const int64_t state_rows = geo.cell == Cell::kGru && !geo.linear_before_reset ? 2 * H : G;
        std::copy(Rb, Rb + G, hr.begin());
        MultiplyTransposed(1, state_rows, H, hs.data(), R, T(1), hr.data());
        std::vector<T> next(H);
        if (geo.cell == Cell::kRnn) {
          for (int64_t k = 0; k < H; ++k) next[k] = static_cast<T>(f(clipped(pre[k] + hr[k])));
        } else if (geo.cell == Cell::kGru) {
          // Gates z, r, h.
          std::vector<double> z(H), rg(H);
          for (int64_t k = 0; k < H; ++k) {
            z[k] = f(clipped(pre[k] + hr[k]));
            rg[k] = f(clipped(pre[H + k] + hr[H + k]));
            gated[k] = static_cast<T>(rg[k] * hs[k]);
          }
          if (!geo.linear_before_reset) MultiplyTransposed(1, H, H, gated.data(), R + 2 * H * H, T(1), hr.data() + 2 * H);
          for (int64_t k = 0; k < H; ++k) {
            const double candidate = geo.linear_before_reset ? pre[2 * H + k] + rg[k] * hr[2 * H + k] : pre[2 * H + k] + hr[2 * H + k];
            next[k] = static_cast<T>((1 - z[k]) * g(clipped(candidate)) + z[k] * hs[k]);
          }
        } else {
          // Gates i, o, f, c; peepholes i, o, f.
          for (int64_t k = 0; k < H; ++k) {
            const double i = f(clipped(pre[k] + hr[k] + P[k] * cs[k]));
            const double fg = geo.input_forget ? 1 - i : f(clipped(pre[2 * H + k] + hr[2 * H + k] + P[2 * H + k] * cs[k]));
            const double c = g(clipped(pre[3 * H + k] + hr[3 * H + k]));
            cs[k] = static_cast<T>(fg * cs[k] + i * c);
            const double o = f(clipped(pre[H + k] + hr[H + k] + P[H + k] * cs[k]));
            next[k] = static_cast<T>(o * h(cs[k]));
          }
        }
        hs = next;
        std::copy(hs.begin(), hs.end(), y.begin() + y_at(t, d, b));
      }
      std::copy(hs.begin(), hs.end(), yh.begin() + state_at(d, b));
      std::copy(cs.begin(), cs.end(), yc.begin() + state_at(d, b));
    }
  }
  const DType dtype = in[0]->dtype;
  auto put = [&](size_t k, const std::vector<int64_t>& shape, const std::vector<T>& values) {
    if constexpr (std::is_same_v<T, float>) (*out)[k] = TypedTensor::Of<float>(shape, values);
    else (*out)[k] = FromDoubles(dtype, shape, values);
  };
  put(0, y_shape, y);
  if (out->size() > 1) put(1, state_shape, yh);
  if (out->size() > 2 && geo.cell == Cell::kLstm) put(2, state_shape, yc);
}

// `sgemm`: float32 computed as it is, its products on oneDNN's sgemm; otherwise (the reference)
// every type in double.
KernelFactory Recurrent(Cell cell, bool sgemm) {
  return [cell, sgemm](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
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
    return FunctionKernel([info, cell, sgemm, gates, dirs, direction, fns](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
      if (in.size() < 3 || !in[0] || !in[1] || !in[2] || in[0]->rank() != 3) return info.Bad("takes X [seq, batch, input], W and R");
      Geometry g;
      g.cell = cell, g.dirs = dirs, g.direction = direction, g.fns = &fns;
      g.batch_first = info.attrs.Int("layout", 0) != 0;
      const TypedTensor& x = *in[0];
      g.S = g.batch_first ? x.shape[1] : x.shape[0], g.B = g.batch_first ? x.shape[0] : x.shape[1], g.I = x.shape[2];
      g.H = info.attrs.Int("hidden_size", in[2]->shape.back());
      g.G = gates * g.H;
      if (in[1]->shape != std::vector<int64_t>{dirs, g.G, g.I} || in[2]->shape != std::vector<int64_t>{dirs, g.G, g.H})
        return info.Bad("W must be " + ShapeText({dirs, g.G, g.I}) + " and R " + ShapeText({dirs, g.G, g.H}));
      g.clip = info.attrs.Has("clip") ? info.attrs.Float("clip", 0.0f) : 0.0;
      g.input_forget = info.attrs.Int("input_forget", 0) != 0, g.linear_before_reset = info.attrs.Int("linear_before_reset", 0) != 0;
      const std::vector<int64_t> state_shape = g.batch_first ? std::vector<int64_t>{g.B, dirs, g.H} : std::vector<int64_t>{dirs, g.B, g.H};
      const std::vector<std::pair<size_t, std::vector<int64_t>>> optional = {{3, {dirs, 2 * g.G}}, {5, state_shape}, {6, state_shape}, {7, {dirs, 3 * g.H}}};
      for (const auto& [i, shape] : optional)
        if (in.size() > i && in[i] && in[i]->size() != Tensor::NumElements(shape))
          return info.Bad("input " + std::to_string(i) + " must have shape " + ShapeText(shape));
      g.lens.assign(g.B, g.S);
      if (in.size() > 4 && in[4])
        for (int64_t b = 0; b < g.B; ++b) g.lens[b] = std::clamp<int64_t>(in[4]->IntAt(b), 0, g.S);
      const std::vector<int64_t> y_shape = g.batch_first ? std::vector<int64_t>{g.B, g.S, dirs, g.H} : std::vector<int64_t>{g.S, dirs, g.B, g.H};
      if (sgemm && x.dtype == DType::kFloat32) {
        Recur<float>(g, in, out, y_shape, state_shape);
        return Status::Ok();
      }
      Recur<double>(g, in, out, y_shape, state_shape);
      return Status::Ok();
    });
  };
}

}  // namespace

void RegisterRnnKernels(KernelRegistry* r) {
  for (const auto& [op, cell] : {std::pair{"LSTM", Cell::kLstm}, std::pair{"GRU", Cell::kGru}, std::pair{"RNN", Cell::kRnn}}) {
    r->Add({op, 7, INT_MAX, FloatTypes(), 0, Recurrent(cell, false)});
    r->Add({op, 7, INT_MAX, {DType::kFloat32}, 0, Recurrent(cell, true), false, "onednn"});
    r->Add({op, 7, INT_MAX, {DType::kFloat32}, 0,
            [cell = cell](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
              auto per_step = Recurrent(cell, true)(info);  // what the primitives cannot take at run time
              if (!per_step.ok()) return per_step;
              return MakeOneDnnRecurrent(info, cell, std::move(per_step.value()));
            },
            false, "onednn.rnn", [cell = cell](const KernelInfo& info) { return OneDnnTakesRecurrent(info, cell); }});
  }
}

}  // namespace tilebank::engine::kernels
