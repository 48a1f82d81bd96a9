// Conv, ConvInteger and ConvTranspose in 1, 2, 3 or more spatial dimensions: the reference
// kernels every dtype runs. float32 Convs the tuned templates do not take (1-D, 3-D, run-time
// shapes) run oneDNN (onednn_conv_kernel.cpp), as do the FusedConvs of those.
#include "engine/kernels/conv_kernels.h"

#include <algorithm>

#include "engine/kernels/fused_activation.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {

Result<std::vector<double>> Convolve(const KernelInfo& info, const ConvOperands& operands, std::vector<int64_t>* shape) {
  const TypedTensor& x = *operands.x;
  const TypedTensor& w = *operands.w;
  if (x.rank() < 3 || w.rank() != x.rank()) return info.Bad("takes X [N, C, D...] and W of the same rank, not " + ShapeText(x.shape) + " and " + ShapeText(w.shape));
  const int64_t N = x.shape[0], C = x.shape[1], M = w.shape[0], group = info.attrs.Int("group", 1);
  if (group < 1 || C % group || M % group || w.shape[1] != C / group)
    return info.Bad("X has " + std::to_string(C) + " channels, W " + ShapeText(w.shape) + " and group " + std::to_string(group) + " do not agree");
  if (!operands.bias.empty() && static_cast<int64_t>(operands.bias.size()) != M) return info.Bad("B must have " + std::to_string(M) + " elements");
  auto window = SpatialWindow::Resolve(info, {x.shape.begin() + 2, x.shape.end()}, {w.shape.begin() + 2, w.shape.end()});
  if (!window.ok()) return window.status();
  const SpatialWindow& sw = *window;
  const std::vector<int64_t> taps = sw.Taps();
  const int64_t Cg = C / group, Mg = M / group, K = sw.kernel_size, in_size = sw.spatial_size_in, out_size = sw.spatial_size_out;
  *shape = {N, M};
  shape->insert(shape->end(), sw.out.begin(), sw.out.end());
  std::vector<double> y(static_cast<size_t>(N * M * out_size));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      const int64_t g = m / Mg;
      double* y_row = y.data() + (n * M + m) * out_size;
      for (int64_t o = 0; o < out_size; ++o) y_row[o] = operands.bias.empty() ? 0.0 : operands.bias[m];
      for (int64_t c = 0; c < Cg; ++c) {
        const double* x_plane = operands.x_values.data() + (n * C + g * Cg + c) * in_size;
        const double* w_taps = operands.w_values.data() + (m * Cg + c) * K;
        for (int64_t o = 0; o < out_size; ++o) {
          const int64_t* tap = taps.data() + o * K;
          double acc = 0;
          for (int64_t k = 0; k < K; ++k)
            if (tap[k] >= 0) acc += x_plane[tap[k]] * w_taps[k];
          y_row[o] += acc;
        }
      }
    }
  return y;
}

// Output size from output_shape, or stride * (in - 1) + output_padding + extent - pads.
Result<TransposedWindow> ResolveTransposed(const KernelInfo& info, const std::vector<int64_t>& in, const std::vector<int64_t>& weight_kernel) {
  const size_t n = in.size();
  TransposedWindow w;
  w.kernel = info.attrs.Ints("kernel_shape", weight_kernel);
  w.strides = info.attrs.Ints("strides", std::vector<int64_t>(n, 1));
  w.dilations = info.attrs.Ints("dilations", std::vector<int64_t>(n, 1));
  w.pads = info.attrs.Ints("pads", std::vector<int64_t>(2 * n, 0));
  const std::vector<int64_t> output_padding = info.attrs.Ints("output_padding", std::vector<int64_t>(n, 0));
  std::vector<int64_t> output_shape = info.attrs.Ints("output_shape");
  if (w.kernel.size() != n || w.strides.size() != n || w.dilations.size() != n || output_padding.size() != n || w.pads.size() != 2 * n)
    return info.Bad("kernel_shape, strides, dilations, output_padding or pads do not match the spatial rank");
  if (output_shape.size() == n + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  const std::string auto_pad = info.attrs.String("auto_pad", "NOTSET");
  w.out.resize(n);
  for (size_t d = 0; d < n; ++d) {
    const int64_t extent = w.dilations[d] * (w.kernel[d] - 1) + 1, full = w.strides[d] * (in[d] - 1) + output_padding[d] + extent;
    if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      w.out[d] = output_shape.size() == n ? output_shape[d] : in[d] * w.strides[d];
      const int64_t total = std::max<int64_t>(0, full - w.out[d]);
      w.pads[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else {
      if (auto_pad == "VALID") w.pads[d] = w.pads[d + n] = 0;
      w.out[d] = full - w.pads[d] - w.pads[d + n];
    }
    if (w.out[d] < 1) return info.Bad("the output would be empty along spatial dim " + std::to_string(d));
  }
  return w;
}

namespace {

Result<std::unique_ptr<OpKernel>> MakeReferenceConv(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 2 || !in[0] || !in[1]) return info.Bad("takes X and W");
    ConvOperands operands{in[0], in[1], AsDoubles(*in[0]), AsDoubles(*in[1]), {}};
    if (in.size() > 2 && in[2]) operands.bias = AsDoubles(*in[2]);
    std::vector<int64_t> shape;
    auto y = Convolve(info, operands, &shape);
    if (!y.ok()) return y.status();
    (*out)[0] = FromDoubles(in[0]->dtype, shape, *y);
    return Status::Ok();
  });
}

// float32 on oneDNN, with the reference kernel for what oneDNN cannot take.
Result<std::unique_ptr<OpKernel>> MakeOneDnnConvOverReference(const KernelInfo& info) {
  auto reference = MakeReferenceConv(info);
  if (!reference.ok()) return reference;
  return MakeOneDnnConv(info, std::move(reference.value()));
}

// FusedConv (tilebank's own op, written by engine/passes/conv_epilogue_fusion.h): Y = act(Conv(X, W, B)
// + Z), Z (input 3, optional) of Y's shape, act one of KnownFusedActivation's ("activation"); the
// Conv's own attributes. The convolution is the reference Conv's, rounded to the dtype as the
// unfused graph's Conv output was.
Result<std::unique_ptr<OpKernel>> MakeReferenceFusedConv(const KernelInfo& info) {
  const std::string activation = info.attrs.String("activation", "");
  if (!KnownFusedActivation(activation)) return info.Bad("activation '" + activation + "' is none FusedConv knows");
  auto conv = MakeReferenceConv(info);
  if (!conv.ok()) return conv;
  std::shared_ptr<const OpKernel> convolution(std::move(conv.value()));
  return FunctionKernel([info, activation, convolution](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    TB_RETURN_IF_ERROR(convolution->Compute(KernelInputs(in.begin(), in.begin() + std::min<size_t>(in.size(), 3)), out));
    TypedTensor& y = (*out)[0];
    const TypedTensor* z = in.size() > 3 ? in[3] : nullptr;
    if (z && z->shape != y.shape) return info.Bad("the residual " + ShapeText(z->shape) + " is not the output's shape " + ShapeText(y.shape));
    std::vector<double> values = AsDoubles(y);
    const std::vector<double> residual = z ? AsDoubles(*z) : std::vector<double>();
    for (size_t i = 0; i < values.size(); ++i) values[i] = ApplyFusedActivation(activation, values[i] + (z ? residual[i] : 0.0));
    y = FromDoubles(y.dtype, y.shape, values);
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeOneDnnFusedConvOverReference(const KernelInfo& info) {
  auto reference = MakeReferenceFusedConv(info);
  if (!reference.ok()) return reference;
  return MakeOneDnnConv(info, std::move(reference.value()));
}

// ConvInteger: (x - x_zero_point) * (w - w_zero_point) summed in int32; w's zero point is a scalar
// or one per output channel.
Result<std::unique_ptr<OpKernel>> MakeConvInteger(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 2 || !in[0] || !in[1]) return info.Bad("takes x and w");
    ConvOperands operands{in[0], in[1], AsDoubles(*in[0]), AsDoubles(*in[1]), {}};
    if (in.size() > 2 && in[2] && in[2]->size()) {
      const double zero = in[2]->At(0);
      for (double& v : operands.x_values) v -= zero;
    }
    if (in.size() > 3 && in[3] && in[3]->size()) {
      const int64_t M = in[1]->shape[0], per_m = M ? in[1]->size() / M : 0;
      for (int64_t i = 0; i < in[1]->size(); ++i) operands.w_values[i] -= in[3]->At(in[3]->size() == 1 ? 0 : i / per_m);
    }
    std::vector<int64_t> shape;
    auto y = Convolve(info, operands, &shape);
    if (!y.ok()) return y.status();
    (*out)[0] = FromDoubles(DType::kInt32, shape, *y);
    return Status::Ok();
  });
}

// ConvTranspose: each input element scatters W's kernel into the output, o = i * stride +
// k * dilation - pad_begin (the geometry: ResolveTransposed).
Result<std::unique_ptr<OpKernel>> MakeReferenceConvTranspose(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 2 || !in[0] || !in[1]) return info.Bad("takes X and W");
    const TypedTensor &x = *in[0], &w = *in[1];
    if (x.rank() < 3 || w.rank() != x.rank()) return info.Bad("takes X [N, C, D...] and W of the same rank");
    const size_t n = x.rank() - 2;
    const int64_t N = x.shape[0], C = x.shape[1], group = info.attrs.Int("group", 1);
    if (group < 1 || C % group || w.shape[0] != C) return info.Bad("W's first dim must be X's channels (" + std::to_string(C) + ")");
    const int64_t Mg = w.shape[1], M = Mg * group, Cg = C / group;
    const std::vector<int64_t> in_dims(x.shape.begin() + 2, x.shape.end());
    auto window = ResolveTransposed(info, in_dims, {w.shape.begin() + 2, w.shape.end()});
    if (!window.ok()) return window.status();
    const TransposedWindow& tw = *window;
    const std::vector<double> xv = AsDoubles(x), wv = AsDoubles(w);
    const int64_t in_size = Tensor::NumElements(in_dims), out_size = Tensor::NumElements(tw.out), K = Tensor::NumElements(tw.kernel);
    // The scatter is Conv's gather read backwards: a window over the output whose positions are
    // X's, so targets[i * K + k] is where input position i and kernel position k write, or -1.
    const std::vector<int64_t> targets = SpatialWindow::Of(tw.out, tw.kernel, tw.strides, tw.dilations, {tw.pads.begin(), tw.pads.begin() + n},
                                                           {tw.pads.begin() + n, tw.pads.end()}, in_dims)
                                             .Taps();
    std::vector<int64_t> shape = {N, M};
    shape.insert(shape.end(), tw.out.begin(), tw.out.end());
    std::vector<double> y(static_cast<size_t>(N * M * out_size), 0.0);
    const bool has_bias = in.size() > 2 && in[2];
    const std::vector<double> bias = has_bias ? AsDoubles(*in[2]) : std::vector<double>();
    for (int64_t b = 0; b < N; ++b)
      for (int64_t m = 0; m < M; ++m) {
        const int64_t g = m / Mg, mg = m % Mg;
        double* y_plane = y.data() + (b * M + m) * out_size;
        if (has_bias)
          for (int64_t o = 0; o < out_size; ++o) y_plane[o] = bias[m];
        for (int64_t c = 0; c < Cg; ++c) {
          const double* x_plane = xv.data() + (b * C + g * Cg + c) * in_size;
          const double* w_taps = wv.data() + ((g * Cg + c) * Mg + mg) * K;
          for (int64_t p = 0; p < in_size; ++p)
            for (int64_t k = 0; k < K; ++k) {
              const int64_t o = targets[p * K + k];
              if (o >= 0) y_plane[o] += x_plane[p] * w_taps[k];
            }
        }
      }
    (*out)[0] = FromDoubles(x.dtype, shape, y);
    return Status::Ok();
  });
}

// float32 on oneDNN's deconvolution, the other types (and what oneDNN cannot take) on the reference kernel.
Result<std::unique_ptr<OpKernel>> MakeOneDnnConvTransposeOverReference(const KernelInfo& info) {
  auto reference = MakeReferenceConvTranspose(info);
  if (!reference.ok()) return reference;
  return MakeOneDnnConvTranspose(info, std::move(reference.value()));
}

// The tiling instances as a GEMM and a scatter, the others so where that ran faster than oneDNN's
// deconvolution, which runs the rest.
Result<std::unique_ptr<OpKernel>> MakeConvTransposeByGemmOverOneDnn(const KernelInfo& info) {
  auto onednn = MakeOneDnnConvTransposeOverReference(info);
  if (!onednn.ok()) return onednn;
  return MakeConvTransposeByGemm(info, std::move(onednn.value()), MakeOneDnnConvTransposeOverReference);
}

}  // namespace

void RegisterConvKernels(KernelRegistry* r) {
  r->Add({"Conv", 1, INT_MAX, FloatTypes(), 0, MakeReferenceConv});
  r->Add({"Conv", 1, INT_MAX, {DType::kFloat32}, 0, MakeOneDnnConvOverReference, false, "onednn"});
  r->Add({"FusedConv", 1, INT_MAX, FloatTypes(), 0, MakeReferenceFusedConv});
  r->Add({"FusedConv", 1, INT_MAX, {DType::kFloat32}, 0, MakeOneDnnFusedConvOverReference, false, "onednn"});
  r->Add({"ConvTranspose", 1, INT_MAX, FloatTypes(), 0, MakeReferenceConvTranspose});
  r->Add({"ConvTranspose", 1, INT_MAX, {DType::kFloat32}, 0, MakeOneDnnConvTransposeOverReference, false, "onednn"});
  r->Add({"ConvTranspose", 1, INT_MAX, {DType::kFloat32}, 0, MakeConvTransposeByGemmOverOneDnn, false, "gemm"});
  r->Add({"ConvInteger", 10, INT_MAX, {DType::kInt8, DType::kUInt8}, 0, MakeConvInteger});
}

}  // namespace tilebank::engine::kernels
