#include "engine/core/reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

#include "engine/core/gemm_problem.h"
#include "engine/core/op_semantics.h"

namespace tilebank::engine {

bool BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b, std::vector<int64_t>* out) {
  size_t r = std::max(a.size(), b.size());
  out->assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = std::max(da, db);
  }
  return true;
}

namespace {

Status Bad(const OpSpec& op, const std::string& why) { return Status::InvalidInput(op.name + " (" + op.op_type + "): " + why); }

// Rows of the output are independent: large problems split them over the cores. Each row sums in
// double over k with B read along its rows (the loop order that streams memory).
Tensor Gemm(const OpSpec& op, const std::vector<const Tensor*>& in) {
  GemmProblem p = AnalyzeGemm(op).value();
  Tensor out(op.outputs[0].shape);
  const int64_t M = p.M, N = p.N, K = p.K;
  auto rows = [&](int64_t first, int64_t last) {  // global rows b * M + m in [first, last)
    std::vector<double> acc(N);
    for (int64_t row = first; row < last; ++row) {
      const int64_t b = row / M, m = row % M;
      const float* A = in[0]->data.data() + (p.a_batched ? b * M * K : 0);
      const float* B = in[1]->data.data() + (p.b_batched ? b * K * N : 0);
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t k = 0; k < K; ++k) {
        const double a = p.trans_a ? A[k * M + m] : A[m * K + k];
        if (p.trans_b)
          for (int64_t n = 0; n < N; ++n) acc[n] += a * B[n * K + k];
        else
          for (int64_t n = 0; n < N; ++n) acc[n] += a * B[k * N + n];
      }
      for (int64_t n = 0; n < N; ++n) {
        double v = p.alpha * acc[n];
        if (p.bias != BiasShape::kNone) {
          const auto& C = in[2]->data;
          double c = p.bias == BiasShape::kScalar ? C[0] : p.bias == BiasShape::kRow ? C[n] : p.bias == BiasShape::kColumn ? C[m] : C[m * N + n];
          v += p.beta * c;
        }
        out.data[row * N + n] = static_cast<float>(v);
      }
    }
  };
  const int64_t total_rows = p.batch * M;
  const int threads = p.Flops() < 5e7 ? 1 : static_cast<int>(std::min<int64_t>(std::max(1u, std::thread::hardware_concurrency()), total_rows));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(rows, total_rows * t / threads, total_rows * (t + 1) / threads);
  for (auto& th : pool) th.join();
  return out;
}

Tensor Conv(const OpSpec& op, const std::vector<const Tensor*>& in) {
  const auto& x = *in[0];
  const auto& w = *in[1];
  Tensor out(op.outputs[0].shape);
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t OC = w.shape[0], Cg = w.shape[1], KH = w.shape[2], KW = w.shape[3];
  const int64_t OH = out.shape[2], OW = out.shape[3];
  const int64_t G = op.Int("group", 1), OCg = OC / G;
  auto strides = op.Ints("strides", {1, 1}), dil = op.Ints("dilations", {1, 1}), pads = op.Ints("pads", {0, 0, 0, 0});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oc = 0; oc < OC; ++oc) {
      int64_t g = oc / OCg;
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double s = in.size() > 2 ? in[2]->data[oc] : 0.0;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t kh = 0; kh < KH; ++kh) {
              int64_t ih = oh * strides[0] - pads[0] + kh * dil[0];
              if (ih < 0 || ih >= H) continue;
              for (int64_t kw = 0; kw < KW; ++kw) {
                int64_t iw = ow * strides[1] - pads[1] + kw * dil[1];
                if (iw < 0 || iw >= W) continue;
                s += double(x.data[((n * C + g * Cg + c) * H + ih) * W + iw]) * double(w.data[((oc * Cg + c) * KH + kh) * KW + kw]);
              }
            }
          out.data[((n * OC + oc) * OH + oh) * OW + ow] = static_cast<float>(s);
        }
    }
  return out;
}

// Splits a shape around [axis_begin, axis_end) into outer x reduced x inner.
void Split3(const std::vector<int64_t>& s, int64_t b, int64_t e, int64_t* outer, int64_t* mid, int64_t* inner) {
  *outer = *mid = *inner = 1;
  for (int64_t i = 0; i < static_cast<int64_t>(s.size()); ++i) (i < b ? *outer : i < e ? *mid : *inner) *= s[i];
}

Tensor Softmax(const OpSpec& op, const Tensor& x) {
  int64_t axis = op.Int("axis", x.rank() - 1), outer, len, inner;
  Split3(x.shape, axis, axis + 1, &outer, &len, &inner);
  Tensor out(x.shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t r) { return (o * len + r) * inner + i; };
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t r = 0; r < len; ++r) mx = std::max(mx, double(x.data[at(r)]));
      for (int64_t r = 0; r < len; ++r) sum += std::exp(x.data[at(r)] - mx);
      for (int64_t r = 0; r < len; ++r) out.data[at(r)] = static_cast<float>(std::exp(x.data[at(r)] - mx) / sum);
    }
  return out;
}

Tensor LayerNorm(const OpSpec& op, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  int64_t axis = op.Int("axis", x.rank() - 1), outer, len, inner;
  Split3(x.shape, axis, x.rank(), &outer, &len, &inner);
  double eps = op.Real("epsilon", 1e-5);
  Tensor out(x.shape);
  for (int64_t o = 0; o < outer; ++o) {
    const float* row = x.data.data() + o * len;
    double mean = 0, var = 0;
    for (int64_t r = 0; r < len; ++r) mean += row[r];
    mean /= len;
    for (int64_t r = 0; r < len; ++r) var += (row[r] - mean) * (row[r] - mean);
    var /= len;
    double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t r = 0; r < len; ++r) {
      double v = (row[r] - mean) * inv * in[1]->data[r];
      if (in.size() > 2) v += in[2]->data[r];
      out.data[o * len + r] = static_cast<float>(v);
    }
  }
  return out;
}

Tensor Reduce(const OpSpec& op, const Tensor& x) {
  auto axes = op.Ints("axes", {});
  if (axes.empty() && op.Int("noop_with_empty_axes", 0)) {  // ONNX: no axes and noop means a copy
    Tensor copy = x;
    copy.shape = op.outputs[0].shape;
    return copy;
  }
  if (axes.empty())
    for (int i = 0; i < x.rank(); ++i) axes.push_back(i);
  std::sort(axes.begin(), axes.end());
  int64_t outer, len, inner;
  Split3(x.shape, axes.front(), axes.back() + 1, &outer, &len, &inner);
  Tensor out(std::vector<int64_t>{outer * inner});
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double acc = op.op_type == "ReduceMax" ? -std::numeric_limits<double>::infinity() : 0;
      for (int64_t r = 0; r < len; ++r) {
        double v = x.data[(o * len + r) * inner + i];
        acc = op.op_type == "ReduceMax" ? std::max(acc, v) : acc + (op.op_type == "ReduceL2" ? v * v : v);
      }
      if (op.op_type == "ReduceMean") acc /= len;
      if (op.op_type == "ReduceL2") acc = std::sqrt(acc);
      out.data[o * inner + i] = static_cast<float>(acc);
    }
  out.shape = op.outputs[0].shape;
  return out;
}

double Unary(const std::string& type, double x, const OpSpec& op) {
  if (type == "Relu") return std::max(0.0, x);
  if (type == "Sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (type == "Tanh") return std::tanh(x);
  if (type == "Erf") return std::erf(x);
  if (type == "HardSigmoid") return std::clamp(op.Real("alpha", 0.2) * x + op.Real("beta", 0.5), 0.0, 1.0);
  if (type == "HardSwish") return x * std::clamp(x / 6 + 0.5, 0.0, 1.0);
  if (type == "Clip") return std::min(std::max(x, op.Real("min", -HUGE_VAL)), op.Real("max", HUGE_VAL));
  if (op.Text("approximate", "none") == "tanh") return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));  // Gelu
}

Tensor Elementwise(const OpSpec& op, const std::vector<const Tensor*>& in) {
  Tensor out(op.outputs[0].shape);
  const int r = out.rank();
  // Index of an output element in an input broadcast to the output's shape.
  auto source = [&](const Tensor& t, int64_t flat) {
    int64_t idx = 0, stride = 1;
    for (int d = r - 1, td = t.rank() - 1; d >= 0; --d, --td) {
      int64_t coord = flat % out.shape[d];
      flat /= out.shape[d];
      if (td >= 0) {
        if (t.shape[td] != 1) idx += coord * stride;
        stride *= t.shape[td];
      }
    }
    return idx;
  };
  for (int64_t i = 0; i < out.size(); ++i) {
    double a = in[0]->data[source(*in[0], i)];
    double v;
    if (in.size() == 1) {
      v = Unary(op.op_type, a, op);
    } else {
      double b = in[1]->data[source(*in[1], i)];
      v = op.op_type == "Add" ? a + b : op.op_type == "Sub" ? a - b : op.op_type == "Mul" ? a * b : a / b;
    }
    out.data[i] = static_cast<float>(v);
  }
  return out;
}

Tensor Pool(const OpSpec& op, const Tensor& x) {
  Tensor out(op.outputs[0].shape);
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3], OH = out.shape[2], OW = out.shape[3];
  const bool global = op.op_type == "GlobalAveragePool", is_max = op.op_type == "MaxPool";
  auto k = global ? std::vector<int64_t>{H, W} : op.Ints("kernel_shape", {1, 1});
  auto s = op.Ints("strides", {1, 1}), d = op.Ints("dilations", {1, 1}), pads = op.Ints("pads", {0, 0, 0, 0});
  const bool include_pad = op.Int("count_include_pad", 0) != 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = is_max ? -std::numeric_limits<double>::infinity() : 0;
          int64_t count = 0;
          for (int64_t kh = 0; kh < k[0]; ++kh)
            for (int64_t kw = 0; kw < k[1]; ++kw) {
              int64_t ih = oh * s[0] - pads[0] + kh * d[0], iw = ow * s[1] - pads[1] + kw * d[1];
              bool inside = ih >= 0 && ih < H && iw >= 0 && iw < W;
              // count_include_pad counts the explicit padding, not what ceil_mode adds past it.
              if (!inside) {
                if (include_pad && ih < H + pads[2] && iw < W + pads[3]) ++count;
                continue;
              }
              double v = x.data[((n * C + c) * H + ih) * W + iw];
              acc = is_max ? std::max(acc, v) : acc + v;
              ++count;
            }
          out.data[((n * C + c) * OH + oh) * OW + ow] = static_cast<float>(is_max ? acc : acc / std::max<int64_t>(1, count));
        }
  return out;
}

}  // namespace

Result<Tensor> ReferenceCompute(const OpSpec& op, const std::vector<const Tensor*>& in) {
  const std::string& t = op.op_type;
  if (t == "MatMul" || t == "BatchMatMul" || t == "Gemm") {
    auto p = AnalyzeGemm(op);
    if (!p.ok()) return p.status();
    return Gemm(op, in);
  }
  if (t == "Conv") return Conv(op, in);
  if (t == "Softmax") return Softmax(op, *in[0]);
  if (t == "LayerNormalization") return LayerNorm(op, in);
  if (t == "ReduceSum" || t == "ReduceMean" || t == "ReduceMax" || t == "ReduceL2") return Reduce(op, *in[0]);
  if (IsBinaryElementwiseOp(t) || IsUnaryElementwiseOp(t)) return Elementwise(op, in);
  if (t == "MaxPool" || t == "AveragePool" || t == "GlobalAveragePool") return Pool(op, *in[0]);
  return Bad(op, "no reference implementation");
}

}  // namespace tilebank::engine
