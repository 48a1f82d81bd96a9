#include "engine/backends/onednn/own_pool_window.h"

#include "engine/backends/onednn/onednn_vector_ops.h"

namespace tilebank::engine {

Result<OwnPoolWindow> OwnPoolWindowOf(const OpSpec& spec) {
  if ((spec.op_type != "MaxPool" && spec.op_type != "AveragePool") || spec.inputs.empty() || spec.outputs.size() != 1)
    return Status::InvalidInput("the pool loop takes a MaxPool or AveragePool with one output");
  const auto& in_shape = spec.inputs[0].shape;
  const auto& out_shape = spec.outputs[0].shape;
  if (in_shape.size() < 3 || in_shape.size() > 5 || out_shape.size() != in_shape.size()) return Status::InvalidInput("the pool loop takes 1-D to 3-D pools");
  const size_t spatial = in_shape.size() - 2;
  if (spec.Ints("kernel_shape", {}).size() != spatial) return Status::InvalidInput("the pool loop needs a kernel_shape naming every spatial axis");
  if (spec.Text("auto_pad", "NOTSET") != "NOTSET") return Status::InvalidInput("the pool loop takes explicit pads");
  const PoolWindow window = WindowOf(spec);
  const bool max = spec.op_type == "MaxPool", include_pad = !max && spec.Int("count_include_pad", 0) != 0;
  if (include_pad && window.padded_past_pads) return Status::InvalidInput("the pool loop does not count padding past the pads");
  std::vector<PoolAxisParts> axes;
  for (size_t i = 0; i < spatial; ++i)  // oneDNN's dilation (window.dilation) counts the gaps: 0 is undilated
    axes.push_back({in_shape[i + 2], out_shape[i + 2], window.kernel[i], window.strides[i], window.pad_l[i], window.pad_r[i], window.dilation[i] + 1});
  return OwnPoolWindowOfAxes(max, include_pad, axes);
}

Result<OwnPoolWindow> OwnPoolWindowOfAxes(bool max, bool include_pad, const std::vector<PoolAxisParts>& axes) {
  if (axes.empty() || axes.size() > 3) return Status::InvalidInput("the pool loop takes 1-D to 3-D pools");
  OwnPoolWindow own;
  own.max = max;
  own.include_pad = include_pad;
  for (size_t i = 0; i < axes.size(); ++i) {
    const PoolAxisParts& parts = axes[i];
    if (parts.dilation != 1) return Status::InvalidInput("the pool loop takes undilated windows");
    PoolAxis& a = own.axes[3 - axes.size() + i];
    a = {parts.in, parts.out, parts.kernel, parts.stride, parts.pad_begin};
    // Every window must hold an input (ONNX leaves an all-padding window's value open).
    if (a.pad < 0 || a.pad >= a.kernel || parts.pad_end >= a.kernel || a.kernel < 1 || a.stride < 1)
      return Status::InvalidInput("the pool loop takes windows that each hold an input");
  }
  return own;
}

}  // namespace tilebank::engine
