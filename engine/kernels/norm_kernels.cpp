// Normalizations: BatchNormalization (inference and training mode), InstanceNormalization,
// LayerNormalization (with its Mean and InvStdDev outputs), GroupNormalization,
// MeanVarianceNormalization and LRN, for every floating type. Statistics are computed in double.
#include <cmath>

#include "engine/kernels/elementwise.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

// Mean and population variance of each of `rows` contiguous rows of `cols` values.
void RowMoments(const std::vector<double>& x, int64_t rows, int64_t cols, std::vector<double>* mean, std::vector<double>* var) {
  mean->assign(rows, 0.0);
  var->assign(rows, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = x.data() + r * cols;
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += row[c];
    const double m = cols ? sum / cols : 0.0;
    double sq = 0;
    for (int64_t c = 0; c < cols; ++c) sq += (row[c] - m) * (row[c] - m);
    (*mean)[r] = m;
    (*var)[r] = cols ? sq / cols : 0.0;
  }
}

// BatchNormalization: y = scale * (x - mean) / sqrt(var + epsilon) + B per channel (axis 1). In
// training mode the batch's own statistics normalize, and the running ones are updated by momentum.
Result<std::unique_ptr<OpKernel>> MakeBatchNorm(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 5 || !in[0] || !in[1] || !in[2] || !in[3] || !in[4]) return info.Bad("takes X, scale, B, mean and var");
    const TypedTensor& x = *in[0];
    if (x.rank() < 2) return info.Bad("takes X of rank 2 or more");
    const int64_t N = x.shape[0], C = x.shape[1], inner = N && C ? x.size() / (N * C) : 0;
    for (int k = 1; k < 5; ++k)
      if (in[k]->size() != C) return info.Bad("scale, B, mean and var must have " + std::to_string(C) + " elements");
    const double epsilon = info.attrs.Float("epsilon", 1e-5f), momentum = info.attrs.Float("momentum", 0.9f);
    const bool training = info.attrs.Int("training_mode", 0) != 0;
    std::vector<double> xv = AsDoubles(x), scale = AsDoubles(*in[1]), bias = AsDoubles(*in[2]), mean = AsDoubles(*in[3]), var = AsDoubles(*in[4]);
    std::vector<double> batch_mean = mean, batch_var = var;
    if (training) {
      for (int64_t c = 0; c < C; ++c) {
        double sum = 0, sq = 0;
        for (int64_t n = 0; n < N; ++n)
          for (int64_t i = 0; i < inner; ++i) sum += xv[(n * C + c) * inner + i];
        const double m = N * inner ? sum / (N * inner) : 0.0;
        for (int64_t n = 0; n < N; ++n)
          for (int64_t i = 0; i < inner; ++i) sq += std::pow(xv[(n * C + c) * inner + i] - m, 2);
        batch_mean[c] = m;
        batch_var[c] = N * inner ? sq / (N * inner) : 0.0;
      }
    }
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c) {
        const double a = scale[c] / std::sqrt(batch_var[c] + epsilon), b = bias[c] - batch_mean[c] * a;
        for (int64_t i = 0; i < inner; ++i) xv[(n * C + c) * inner + i] = xv[(n * C + c) * inner + i] * a + b;
      }
    (*out)[0] = FromDoubles(x.dtype, x.shape, xv);
    if (training) {
      std::vector<double> running_mean(C), running_var(C);
      for (int64_t c = 0; c < C; ++c) {
        running_mean[c] = mean[c] * momentum + batch_mean[c] * (1 - momentum);
        running_var[c] = var[c] * momentum + batch_var[c] * (1 - momentum);
      }
      if (out->size() > 1) (*out)[1] = FromDoubles(in[3]->dtype, in[3]->shape, running_mean);
      if (out->size() > 2) (*out)[2] = FromDoubles(in[4]->dtype, in[4]->shape, running_var);
    }
    return Status::Ok();
  });
}

// InstanceNormalization (groups = C, per-channel scale) and GroupNormalization (num_groups, scale
// per group in opset 18): statistics over each group of channels' spatial values.
KernelFactory GroupedNorm(bool instance) {
  return [instance](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    return FunctionKernel([info, instance](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
      if (in.size() < 3 || !in[0] || !in[1] || !in[2]) return info.Bad("takes X, scale and B");
      const TypedTensor& x = *in[0];
      if (x.rank() < 2) return info.Bad("takes X of rank 2 or more");
      const int64_t N = x.shape[0], C = x.shape[1], inner = N && C ? x.size() / (N * C) : 0;
      const int64_t groups = instance ? C : info.attrs.Int("num_groups", 0);
      if (groups < 1 || C % groups) return info.Bad("num_groups must divide the " + std::to_string(C) + " channels");
      const std::vector<double> scale = AsDoubles(*in[1]), bias = AsDoubles(*in[2]);
      if ((scale.size() != static_cast<size_t>(C) && scale.size() != static_cast<size_t>(groups)) || bias.size() != scale.size())
        return info.Bad("scale and B must have one element per channel or per group");
      const double epsilon = info.attrs.Float("epsilon", 1e-5f);
      const int64_t per_group = C / groups * inner, channels_per_group = C / groups;
      // y = x * a + b per channel, a = scale / sqrt(var + epsilon), b = B - mean * a: one pass over
      // each channel's contiguous spatial values (float32 read and written as it is, in place of a
      // round trip through doubles; the moments are summed in double either way).
      auto normalize = [&](auto* data) {
        using T = std::remove_pointer_t<decltype(data)>;
        for (int64_t n = 0; n < N; ++n)
          for (int64_t g = 0; g < groups; ++g) {
            auto* group = data + (n * C + g * channels_per_group) * inner;
            double sum = 0, sq = 0;
            for (int64_t k = 0; k < per_group; ++k) sum += group[k];
            const double mean = per_group ? sum / per_group : 0.0;
            for (int64_t k = 0; k < per_group; ++k) sq += (group[k] - mean) * (group[k] - mean);
            const double inv = 1.0 / std::sqrt((per_group ? sq / per_group : 0.0) + epsilon);
            for (int64_t cc = 0; cc < channels_per_group; ++cc) {
              const int64_t p = scale.size() == static_cast<size_t>(C) ? g * channels_per_group + cc : g;
              const double a = scale[p] * inv, b = bias[p] - mean * a;
              auto* channel = group + cc * inner;
              for (int64_t k = 0; k < inner; ++k) channel[k] = static_cast<T>(channel[k] * a + b);
            }
          }
      };
      if (x.dtype == DType::kFloat32) {
        (*out)[0] = x;
        normalize((*out)[0].data<float>());
        return Status::Ok();
      }
      std::vector<double> xv = AsDoubles(x);
      normalize(xv.data());
      (*out)[0] = FromDoubles(x.dtype, x.shape, xv);
      return Status::Ok();
    });
  };
}

// LayerNormalization over the dims from `axis` on; Scale and B broadcast to them. Mean and
// InvStdDev have X's leading dims and 1s after.
Result<std::unique_ptr<OpKernel>> MakeLayerNorm(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 2 || !in[0] || !in[1]) return info.Bad("takes X and Scale");
    const TypedTensor& x = *in[0];
    auto axis = Axis(info.attrs.Int("axis", -1), x.rank());
    if (!axis) return info.Bad("axis outside X's rank");
    const std::vector<int64_t> normalized(x.shape.begin() + *axis, x.shape.end());
    int64_t cols = Tensor::NumElements(normalized), rows = cols ? x.size() / cols : 0;
    auto spread = [&](const TypedTensor& t, std::vector<double>* v) -> Status {
      std::vector<int64_t> shape;
      if (!BroadcastShapes({t.shape, normalized}, &shape) || shape != normalized)
        return info.Bad("Scale and B (" + ShapeText(t.shape) + ") must broadcast to the normalized dims " + ShapeText(normalized));
      v->resize(cols);
      BroadcastWalk walk({t.shape}, normalized);
      for (int64_t i = 0; i < cols; ++i, walk.Next()) (*v)[i] = t.At(walk.offset(0));
      return Status::Ok();
    };
    std::vector<double> scale, bias(cols, 0.0), xv = AsDoubles(x), mean, var;
    if (Status s = spread(*in[1], &scale); !s.ok()) return s;
    if (in.size() > 2 && in[2])
      if (Status s = spread(*in[2], &bias); !s.ok()) return s;
    const double epsilon = info.attrs.Float("epsilon", 1e-5f);
    RowMoments(xv, rows, cols, &mean, &var);
    std::vector<double> inv_std(rows);
    for (int64_t r = 0; r < rows; ++r) {
      inv_std[r] = 1.0 / std::sqrt(var[r] + epsilon);
      for (int64_t c = 0; c < cols; ++c) xv[r * cols + c] = (xv[r * cols + c] - mean[r]) * inv_std[r] * scale[c] + bias[c];
    }
    (*out)[0] = FromDoubles(x.dtype, x.shape, xv);
    std::vector<int64_t> stat_shape(x.shape.begin(), x.shape.begin() + *axis);
    stat_shape.resize(x.shape.size(), 1);
    const DType stash = info.attrs.Int("stash_type", 1) == 1 ? DType::kFloat32 : x.dtype;
    if (out->size() > 1) (*out)[1] = FromDoubles(stash, stat_shape, mean);
    if (out->size() > 2) (*out)[2] = FromDoubles(stash, stat_shape, inv_std);
    return Status::Ok();
  });
}

// MeanVarianceNormalization: (x - mean) / (std + 1e-9) over `axes` (default 0, 2, 3).
Result<std::unique_ptr<OpKernel>> MakeMeanVarianceNorm(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    std::vector<bool> reduced(x.rank(), false);
    for (int64_t a : info.attrs.Ints("axes", {0, 2, 3})) {
      auto axis = Axis(a, x.rank());
      if (!axis) return info.Bad("axis " + std::to_string(a) + " is outside X's rank");
      reduced[*axis] = true;
    }
    // Each element's group: its index with the reduced dims dropped.
    const std::vector<int64_t> strides = Strides(x.shape);
    std::vector<int64_t> group(x.size());
    int64_t groups = 1;
    for (int d = 0; d < x.rank(); ++d)
      if (!reduced[d]) groups *= x.shape[d];
    for (int64_t i = 0; i < x.size(); ++i) {
      int64_t g = 0;
      for (int d = 0; d < x.rank(); ++d)
        if (!reduced[d]) g = g * x.shape[d] + i / strides[d] % x.shape[d];
      group[i] = g;
    }
    std::vector<double> xv = AsDoubles(x), sum(groups, 0.0), sq(groups, 0.0), count(groups, 0.0);
    for (int64_t i = 0; i < x.size(); ++i) sum[group[i]] += xv[i], sq[group[i]] += xv[i] * xv[i], count[group[i]] += 1;
    for (int64_t i = 0; i < x.size(); ++i) {
      const double m = sum[group[i]] / count[group[i]], sd = std::sqrt(std::max(0.0, sq[group[i]] / count[group[i]] - m * m));
      xv[i] = (xv[i] - m) / (sd + 1e-9);
    }
    (*out)[0] = FromDoubles(x.dtype, x.shape, xv);
    return Status::Ok();
  });
}

// LRN: x / (bias + alpha / size * sum of squares over the `size` neighbouring channels)^beta.
Result<std::unique_ptr<OpKernel>> MakeLrn(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    const int64_t size = info.attrs.Int("size", 0);
    if (x.rank() < 2 || size < 1) return info.Bad("takes X [N, C, ...] and a positive size");
    const double alpha = info.attrs.Float("alpha", 1e-4f), beta = info.attrs.Float("beta", 0.75f), bias = info.attrs.Float("bias", 1.0f);
    const int64_t N = x.shape[0], C = x.shape[1], inner = N && C ? x.size() / (N * C) : 0, before = (size - 1) / 2, after = size - 1 - before;
    const std::vector<double> xv = AsDoubles(x);
    std::vector<double> y(xv.size());
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < inner; ++i) {
          double sq = 0;
          for (int64_t k = std::max<int64_t>(0, c - before); k <= std::min(C - 1, c + after); ++k) sq += std::pow(xv[(n * C + k) * inner + i], 2);
          const int64_t at = (n * C + c) * inner + i;
          y[at] = xv[at] / std::pow(bias + alpha / size * sq, beta);
        }
    (*out)[0] = FromDoubles(x.dtype, x.shape, y);
    return Status::Ok();
  });
}

// FusedBatchNormalization (engine/passes/batch_norm_relu_fusion.h): inference BatchNormalization,
// then Relu.
Result<std::unique_ptr<OpKernel>> MakeBatchNormRelu(const KernelInfo& info) {
  if (info.attrs.String("activation", "Relu") != "Relu") return info.Bad("activation '" + info.attrs.String("activation", "") + "' is not Relu");
  auto norm = MakeBatchNorm(info);
  if (!norm.ok()) return norm.status();
  std::shared_ptr<OpKernel> batch_norm = std::move(norm.value());
  return FunctionKernel([batch_norm](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    TB_RETURN_IF_ERROR(batch_norm->Compute(in, out));
    TypedTensor& y = (*out)[0];
    for (int64_t i = 0; i < y.size(); ++i)
      if (y.At(i) < 0) y.SetAt(i, 0.0);
    return Status::Ok();
  });
}

}  // namespace

void RegisterNormKernels(KernelRegistry* r) {
  r->Add({"FusedBatchNormalization", 1, INT_MAX, FloatTypes(), 0, MakeBatchNormRelu});
  r->Add({"BatchNormalization", 1, INT_MAX, FloatTypes(), 0, MakeBatchNorm});
  r->Add({"InstanceNormalization", 1, INT_MAX, FloatTypes(), 0, GroupedNorm(true)});
  r->Add({"GroupNormalization", 18, INT_MAX, FloatTypes(), 0, GroupedNorm(false)});
  r->Add({"LayerNormalization", 1, INT_MAX, FloatTypes(), 0, MakeLayerNorm});
  r->Add({"MeanVarianceNormalization", 1, INT_MAX, FloatTypes(), 0, MakeMeanVarianceNorm});
  r->Add({"LRN", 1, INT_MAX, FloatTypes(), 0, MakeLrn});
}

}  // namespace tilebank::engine::kernels
