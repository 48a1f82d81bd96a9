#include "engine/kernels/spatial_window.h"

#include <algorithm>

namespace tilebank::engine::kernels {

SpatialWindow SpatialWindow::Of(std::vector<int64_t> in, std::vector<int64_t> kernel, std::vector<int64_t> strides, std::vector<int64_t> dilations,
                                std::vector<int64_t> pad_begin, std::vector<int64_t> pad_end, std::vector<int64_t> out) {
  SpatialWindow w;
  w.in = std::move(in), w.kernel = std::move(kernel), w.strides = std::move(strides), w.dilations = std::move(dilations);
  w.pad_begin = std::move(pad_begin), w.pad_end = std::move(pad_end), w.out = std::move(out);
  for (int64_t d : w.in) w.spatial_size_in *= d;
  for (int64_t d : w.out) w.spatial_size_out *= d;
  for (int64_t d : w.kernel) w.kernel_size *= d;
  return w;
}

Result<SpatialWindow> SpatialWindow::Resolve(const KernelInfo& info, const std::vector<int64_t>& in, const std::vector<int64_t>& weight_kernel,
                                             bool ceil_mode) {
  SpatialWindow w;
  const size_t n = in.size();
  w.in = in;
  w.kernel = info.attrs.Ints("kernel_shape", weight_kernel);
  if (w.kernel.size() != n) return info.Bad("kernel_shape has " + std::to_string(w.kernel.size()) + " dims; the input has " + std::to_string(n) + " spatial dims");
  w.strides = info.attrs.Ints("strides", std::vector<int64_t>(n, 1));
  w.dilations = info.attrs.Ints("dilations", std::vector<int64_t>(n, 1));
  std::vector<int64_t> pads = info.attrs.Ints("pads", std::vector<int64_t>(2 * n, 0));
  if (w.strides.size() != n || w.dilations.size() != n || pads.size() != 2 * n) return info.Bad("strides, dilations or pads do not match the spatial rank");
  const std::string auto_pad = info.attrs.String("auto_pad", "NOTSET");
  w.pad_begin.assign(pads.begin(), pads.begin() + n);
  w.pad_end.assign(pads.begin() + n, pads.end());
  w.out.resize(n);
  for (size_t k = 0; k < n; ++k) {
    if (w.kernel[k] < 1 || w.strides[k] < 1 || w.dilations[k] < 1) return info.Bad("kernel, strides and dilations must be positive");
    const int64_t extent = w.dilations[k] * (w.kernel[k] - 1) + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      w.out[k] = (in[k] + w.strides[k] - 1) / w.strides[k];
      const int64_t total = std::max<int64_t>(0, (w.out[k] - 1) * w.strides[k] + extent - in[k]);
      w.pad_begin[k] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[k] = total - w.pad_begin[k];
    } else {
      if (auto_pad == "VALID") w.pad_begin[k] = w.pad_end[k] = 0;
      else if (auto_pad != "NOTSET") return info.Bad("auto_pad '" + auto_pad + "' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID");
      const int64_t span = in[k] + w.pad_begin[k] + w.pad_end[k] - extent;
      if (span < 0) return info.Bad("the window (" + std::to_string(extent) + ") is larger than the padded input (" + std::to_string(span + extent) + ")");
      w.out[k] = (ceil_mode ? (span + w.strides[k] - 1) / w.strides[k] : span / w.strides[k]) + 1;
      // A ceil-mode window must start inside the input or its leading pad.
      if (ceil_mode && (w.out[k] - 1) * w.strides[k] >= in[k] + w.pad_begin[k]) --w.out[k];
    }
  }
  return Of(std::move(w.in), std::move(w.kernel), std::move(w.strides), std::move(w.dilations), std::move(w.pad_begin), std::move(w.pad_end), std::move(w.out));
}

std::vector<int64_t> SpatialWindow::Taps(std::vector<uint8_t>* in_padded) const {
  std::vector<int64_t> taps(static_cast<size_t>(spatial_size_out * kernel_size), -1);
  if (in_padded) in_padded->assign(taps.size(), 0);
  ForEachIndex(out, [&](int64_t o, const std::vector<int64_t>& at) {
    ForEachIndex(kernel, [&](int64_t k, const std::vector<int64_t>& tap) {
      int64_t offset = 0;
      bool inside = true, padded = true;
      for (size_t d = 0; d < rank(); ++d) {
        const int64_t i = at[d] * strides[d] + tap[d] * dilations[d] - pad_begin[d];
        inside = inside && i >= 0 && i < in[d];
        padded = padded && i >= -pad_begin[d] && i < in[d] + pad_end[d];
        offset = offset * in[d] + i;
      }
      taps[o * kernel_size + k] = inside ? offset : -1;
      if (in_padded) (*in_padded)[o * kernel_size + k] = padded;
    });
  });
  return taps;
}

}  // namespace tilebank::engine::kernels
