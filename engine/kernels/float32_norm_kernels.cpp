// Each group's statistics and its normalization are one task: the groups of all images are split
// among the threads (ParallelFor). A group is read twice (the mean, then the variance about it,
// summed in double in independent lanes) and written once, y = x * a + b per channel; the output
// may be placed over X (a group is read whole before it is written).
#include "engine/kernels/float32_norm_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/backends/simd/swish_float.h"
#include "engine/core/parallel_for.h"
#include "engine/core/tensor.h"

namespace tilebank::engine::kernels {
namespace {

constexpr int kLanes = 8;

// Sums in float lanes over blocks of kBlock elements (loops that vectorize without reordering
// anything), the blocks' sums added in double.
constexpr int64_t kBlock = 1024;

template <class Term>
double BlockedSum(const float* x, int64_t n, Term term) {
  double total = 0;
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t end = std::min(n, start + kBlock);
    float lane[kLanes] = {};
    int64_t k = start;
    for (; k + kLanes <= end; k += kLanes)
      for (int j = 0; j < kLanes; ++j) lane[j] += term(x[k + j]);
    double block = 0;
    for (; k < end; ++k) block += term(x[k]);
    for (float l : lane) block += l;
    total += block;
  }
  return total;
}

double Sum(const float* x, int64_t n) {
  return BlockedSum(x, n, [](float v) { return v; });
}

double SquaredDeviations(const float* x, int64_t n, double mean) {
  const float m = static_cast<float>(mean);
  return BlockedSum(x, n, [m](float v) { return (v - m) * (v - m); });
}

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
  arena.run = [=](const std::vector<const float*>& in, float* out) {
    const float* s = scale.empty() ? in[1] : scale.data();
    const float* b = bias.empty() ? in[2] : bias.data();
    ParallelFor(N * groups, 1, [&](int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) {
        const int64_t n = task / groups, g = task % groups;
        const int64_t offset = (n * C + g * channels_per_group) * inner;
        const float* x = in[0] + offset;
        float* y = out + offset;
        const double mean = per_group ? Sum(x, per_group) / per_group : 0.0;
        const double inv = 1.0 / std::sqrt((per_group ? SquaredDeviations(x, per_group, mean) / per_group : 0.0) + epsilon);
        for (int64_t cc = 0; cc < channels_per_group; ++cc) {
          const int64_t p = per_channel ? g * channels_per_group + cc : g;
          const float a = static_cast<float>(s[p] * inv), shift = static_cast<float>(b[p] - mean * s[p] * inv);
          const float* xc = x + cc * inner;
          float* yc = y + cc * inner;
          // yc may be xc (the output over X): each element is read before it is written, so the
          // loops vectorize though the compiler cannot prove the two apart.
          if (swish) {
            TB_VECTORIZE_IN_PLACE
            for (int64_t k = 0; k < inner; ++k) yc[k] = SwishFloat(xc[k] * a + shift);
          } else {
            TB_VECTORIZE_IN_PLACE
            for (int64_t k = 0; k < inner; ++k) yc[k] = xc[k] * a + shift;
          }
        }
      }
    });
  };
  return ArenaKernel(info, std::move(arena));
}

}  // namespace tilebank::engine::kernels
