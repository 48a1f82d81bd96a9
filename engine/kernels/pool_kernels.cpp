// Pooling in 1, 2, 3 or more spatial dimensions: MaxPool (with its Indices output), AveragePool,
// LpPool, their Global forms, and MaxUnpool. Reference kernels for every dtype; 2-D float32 pools
// run oneDNN and the tuned templates instead.
#include <cmath>
#include <limits>

#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/onednn_qlinear_kernels.h"
#include "engine/kernels/spatial_window.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

enum class Pool { kMax, kAverage, kLp };

// The row-major spatial offset `offset` (within `dims`) written column-major, as MaxPool's
// storage_order 1 numbers its Indices.
int64_t ColumnMajor(int64_t offset, const std::vector<int64_t>& dims) {
  int64_t result = 0, scale = 1;
  std::vector<int64_t> index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = offset % dims[d];
    offset /= dims[d];
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    result += index[d] * scale;
    scale *= dims[d];
  }
  return result;
}

KernelFactory Pooling(Pool kind, bool global) {
  return [kind, global](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    return FunctionKernel([kind, global, info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
      const TypedTensor& x = *in[0];
      if (x.rank() < 3) return info.Bad("takes X [N, C, D...], not " + ShapeText(x.shape));
      const std::vector<int64_t> spatial(x.shape.begin() + 2, x.shape.end());
      Result<SpatialWindow> window = Status::Ok();
      if (global) {
        const std::vector<int64_t> ones(spatial.size(), 1), zeros(spatial.size(), 0);
        window = SpatialWindow::Of(spatial, spatial, ones, ones, zeros, zeros, ones);  // one window over everything
      } else {
        if (!info.attrs.Has("kernel_shape")) return info.Bad("needs kernel_shape");
        window = SpatialWindow::Resolve(info, spatial, {}, info.attrs.Int("ceil_mode", 0) != 0);
      }
      if (!window.ok()) return window.status();
      const SpatialWindow& sw = *window;
      std::vector<uint8_t> in_padded;
      const std::vector<int64_t> taps = sw.Taps(&in_padded);
      const bool include_pad = info.attrs.Int("count_include_pad", 0) != 0, column_major = info.attrs.Int("storage_order", 0) != 0;
      const double p = static_cast<double>(info.attrs.Int("p", 2));
      const int64_t planes = x.shape[0] * x.shape[1], K = sw.kernel_size, in_size = sw.spatial_size_in, out_size = sw.spatial_size_out;
      std::vector<int64_t> shape = {x.shape[0], x.shape[1]};
      shape.insert(shape.end(), sw.out.begin(), sw.out.end());
      const std::vector<double> xv = AsDoubles(x);
      std::vector<double> y(static_cast<size_t>(planes * out_size));
      TypedTensor indices(DType::kInt64, shape);
      for (int64_t plane = 0; plane < planes; ++plane) {
        const double* xp = xv.data() + plane * in_size;
        for (int64_t o = 0; o < out_size; ++o) {
          const int64_t* tap = taps.data() + o * K;
          double acc = kind == Pool::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
          int64_t count = 0, arg = -1;
          for (int64_t k = 0; k < K; ++k) {
            if (include_pad && in_padded[o * K + k]) ++count;
            if (tap[k] < 0) continue;
            const double v = xp[tap[k]];
            if (!include_pad) ++count;
            if (kind == Pool::kMax) {
              if (arg < 0 || v > acc) acc = v, arg = tap[k];
            } else {
              acc += kind == Pool::kLp ? std::pow(std::abs(v), p) : v;
            }
          }
          if (kind == Pool::kAverage) acc = count ? acc / static_cast<double>(count) : 0.0;
          if (kind == Pool::kLp) acc = std::pow(acc, 1.0 / p);
          y[plane * out_size + o] = acc;
          if (kind == Pool::kMax) indices.data<int64_t>()[plane * out_size + o] = plane * in_size + (arg < 0 ? 0 : column_major ? ColumnMajor(arg, sw.in) : arg);
        }
      }
      (*out)[0] = FromDoubles(x.dtype, shape, y);
      if (kind == Pool::kMax && out->size() > 1) (*out)[1] = std::move(indices);
      return Status::Ok();
    });
  };
}

// MaxUnpool: Y zeros, Y[I[i]] = X[i]. Indices number the elements of the default output shape
// ((in - 1) * stride + kernel - pads); an output_shape input places each at the same coordinates
// of a tensor of that shape.
Result<std::unique_ptr<OpKernel>> MakeMaxUnpool(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 2 || !in[0] || !in[1] || in[0]->shape != in[1]->shape) return info.Bad("takes X and indices I of one shape");
    const TypedTensor& x = *in[0];
    if (x.rank() < 3) return info.Bad("takes X [N, C, D...]");
    const size_t n = x.rank() - 2;
    const std::vector<int64_t> kernel = info.attrs.Ints("kernel_shape"), strides = info.attrs.Ints("strides", std::vector<int64_t>(n, 1)),
                               pads = info.attrs.Ints("pads", std::vector<int64_t>(2 * n, 0));
    if (kernel.size() != n || strides.size() != n || pads.size() != 2 * n) return info.Bad("kernel_shape, strides or pads do not match the spatial rank");
    std::vector<int64_t> natural = {x.shape[0], x.shape[1]};
    for (size_t d = 0; d < n; ++d) natural.push_back((x.shape[d + 2] - 1) * strides[d] + kernel[d] - pads[d] - pads[d + n]);
    std::vector<int64_t> shape = natural;
    if (in.size() > 2 && in[2]) {
      shape.clear();
      for (int64_t i = 0; i < in[2]->size(); ++i) shape.push_back(in[2]->IntAt(i));
      if (shape.size() != natural.size()) return info.Bad("output_shape must have X's rank");
      for (size_t d = 0; d < shape.size(); ++d)
        if (shape[d] < natural[d]) return info.Bad("output_shape " + ShapeText(shape) + " is smaller than " + ShapeText(natural));
    }
    const std::vector<int64_t> natural_strides = Strides(natural);
    TypedTensor y(x.dtype, shape);
    for (int64_t i = 0; i < x.size(); ++i) {
      const int64_t from = in[1]->IntAt(i);
      if (from < 0 || from >= Tensor::NumElements(natural)) return info.Bad("index " + std::to_string(from) + " is outside " + ShapeText(natural));
      int64_t to = 0;
      for (size_t d = 0; d < shape.size(); ++d) to = to * shape[d] + from / natural_strides[d] % natural[d];
      y.SetAt(to, x.At(i));
    }
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

}  // namespace

void RegisterPoolKernels(KernelRegistry* r) {
  std::vector<DType> max_types = FloatTypes();
  max_types.insert(max_types.end(), {DType::kInt8, DType::kUInt8});
  r->Add({"MaxPool", 1, INT_MAX, max_types, 0, [](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
            auto reference = Pooling(Pool::kMax, false)(info);
            if (!reference.ok()) return reference.status();
            return WrapFastPool(info, std::move(reference.value()), false);  // float32 on the own loop, 8-bit on oneDNN
          }});
  r->Add({"AveragePool", 1, INT_MAX, FloatTypes(), 0, [](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
            auto reference = Pooling(Pool::kAverage, false)(info);
            if (!reference.ok()) return reference.status();
            return WrapFastPool(info, std::move(reference.value()), true);  // float32 on the own loop
          }});
  r->Add({"LpPool", 1, INT_MAX, FloatTypes(), 0, Pooling(Pool::kLp, false)});
  r->Add({"GlobalMaxPool", 1, INT_MAX, FloatTypes(), 0, Pooling(Pool::kMax, true)});
  r->Add({"GlobalAveragePool", 1, INT_MAX, FloatTypes(), 0, Pooling(Pool::kAverage, true)});
  r->Add({"GlobalLpPool", 1, INT_MAX, FloatTypes(), 0, Pooling(Pool::kLp, true)});
  r->Add({"MaxUnpool", 9, INT_MAX, FloatTypes(), 0, MakeMaxUnpool});
}

}  // namespace tilebank::engine::kernels
