// Each group's statistics and its normalization are one task: the groups of all images are split
// among the threads (ParallelFor). A group is read twice (the mean, then the variance about it,
// summed in float lanes per block and in double across blocks) and written once, y = x * a + b per
// channel (SiLU after it or not), on Highway (engine/backends/simd/per_channel_rows.h); the output
// may be placed over X (a group is read whole before it is written).
#include "engine/kernels/float32_norm_kernels.h"

#include <algorithm>
#include <cmath>

#include "engine/backends/simd/per_channel_rows.h"
#include "engine/core/parallel_for.h"
#include "engine/core/tensor.h"

namespace tilebank::engine::kernels {
namespace {

// Sums in float lanes over blocks of kBlock elements (rows of kWidth lanes), the blocks' sums added
// in double.
constexpr int64_t kBlock = 1024, kWidth = 64;

double BlockedSum(const float* x, int64_t n, PerChannelFold fold, float mean) {
  float means[kWidth];
  std::fill(means, means + kWidth, mean);
  double total = 0;
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t end = std::min(n, start + kBlock), rows = (end - start) / kWidth;
    float lanes[kWidth] = {};
    ReducePerChannelRows(fold, x + start, rows, kWidth, kWidth, lanes, means);
    double block = 0;
    for (int64_t k = start + rows * kWidth; k < end; ++k) block += fold == PerChannelFold::kSum ? x[k] : (x[k] - mean) * (x[k] - mean);
    for (float l : lanes) block += l;
    total += block;
  }
  return total;
}

// Groups shorter than this are summed by a plain loop in double, not a vector call.
constexpr int64_t kShortGroup = 256;

// sum of f(x[i]) in double, eight sums side by side (no chain of dependent adds).
template <class F>
double ShortSum(const float* x, int64_t n, F f) {
  double lanes[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) lanes[k] += f(x[i + k]);
  for (; i < n; ++i) lanes[0] += f(x[i]);
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

double Sum(const float* x, int64_t n) {
  if (n >= kShortGroup) return BlockedSum(x, n, PerChannelFold::kSum, 0.f);
  return ShortSum(x, n, [](float v) { return static_cast<double>(v); });
}

double SquaredDeviations(const float* x, int64_t n, double mean) {
  if (n >= kShortGroup) return BlockedSum(x, n, PerChannelFold::kSquaredDeviation, static_cast<float>(mean));
  return ShortSum(x, n, [mean](float v) { return (v - mean) * (v - mean); });
}

// Channels of fewer values than this are mapped by a plain loop, not a vector call each.
constexpr int64_t kShortRun = 16;

// A constant input's values as floats; empty when the input is not a constant (read per run).
std::vector<float> ConstantFloats(const KernelInfo& info, size_t i) {
  const TypedTensor* c = info.ConstantInput(i);
  std::vector<float> v;
  if (c)
    for (int64_t k = 0; k < c->size(); ++k) v.push_back(static_cast<float>(c->At(k)));
  return v;
}

}  // namespace

Result<std::unique_ptr<OpKernel>> Float32GroupedNorm(const KernelInfo& info, bool instance) {
  const std::string activation = info.attrs.String("activation", "");
  if (!activation.empty() && activation != "Swish") return info.Bad("activation '" + activation + "' is not Swish");
  const bool swish = activation == "Swish";
  const std::vector<int64_t>& shape = *info.InputShape(0);
  if (shape.size() < 2) return info.Bad("takes X of rank 2 or more");
  if (!info.HasInput(1) || !info.HasInput(2)) return info.Bad("takes X, scale and B");
  const int64_t N = shape[0], C = shape[1], inner = N && C ? Tensor::NumElements(shape) / (N * C) : 0;
  const int64_t groups = instance ? C : info.attrs.Int("num_groups", 0);
  if (groups < 1 || C % groups) return info.Bad("num_groups must divide the " + std::to_string(C) + " channels");
  const int64_t params = Tensor::NumElements(*info.InputShape(1));
  if ((params != C && params != groups) || Tensor::NumElements(*info.InputShape(2)) != params)
    return info.Bad("scale and B must have one element per channel or per group");
  const std::vector<float> scale = ConstantFloats(info, 1), bias = ConstantFloats(info, 2);
  const double epsilon = info.attrs.Float("epsilon", 1e-5f);
  const int64_t channels_per_group = C / groups, per_group = channels_per_group * inner;
  const bool per_channel = params == C;
  ArenaFunction arena;
  arena.overwrites_input = true;
  arena.runs_on_any_thread = true;
  arena.run = [=](const std::vector<const float*>& in, float* out) {
    const float* s = scale.empty() ? in[1] : scale.data();
    const float* b = bias.empty() ? in[2] : bias.data();
    ParallelFor(N * groups, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, per_group)), [&](int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) {
        const int64_t n = task / groups, g = task % groups;
        const int64_t offset = (n * C + g * channels_per_group) * inner;
        const float* x = in[0] + offset;
        float* y = out + offset;
        const double mean = per_group ? Sum(x, per_group) / per_group : 0.0;
        const double inv = 1.0 / std::sqrt((per_group ? SquaredDeviations(x, per_group, mean) / per_group : 0.0) + epsilon);
        if (inner == 1 && per_channel && !swish) {  // one value a channel (a norm over tokens' features): a loop the compiler vectorizes
          const float* sg = s + g * channels_per_group;
          const float* bg = b + g * channels_per_group;
          const float m = static_cast<float>(mean), r = static_cast<float>(inv);
          for (int64_t cc = 0; cc < channels_per_group; ++cc) y[cc] = (x[cc] - m) * (sg[cc] * r) + bg[cc];
          continue;
        }
        for (int64_t cc = 0; cc < channels_per_group; ++cc) {
          const int64_t p = per_channel ? g * channels_per_group + cc : g;
          const float a = static_cast<float>(s[p] * inv), shift = static_cast<float>(b[p] - mean * s[p] * inv);
          if (inner >= kShortRun) {
            MapAffineRun(swish ? PerChannelMap::kAffineSwish : PerChannelMap::kAffine, x + cc * inner, y + cc * inner, inner, a, shift);
            continue;
          }
          for (int64_t i = cc * inner; i < (cc + 1) * inner; ++i) {  // a few values a channel (a norm over tokens' features): no call per channel
            const float v = x[i] * a + shift;
            y[i] = swish ? v / (1.f + std::exp(-v)) : v;
          }
        }
      }
    });
  };
  return ArenaKernel(info, std::move(arena));
}

}  // namespace tilebank::engine::kernels
