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
  OwnPoolWindow own;
  own.max = spec.op_type == "MaxPool";
  own.include_pad = !own.max && spec.Int("count_include_pad", 0) != 0;
  if (own.include_pad && window.padded_past_pads) return Status::InvalidInput("the pool loop does not count padding past the pads");
  for (size_t i = 0; i < spatial; ++i) {
    PoolAxis& a = own.axes[3 - spatial + i];
    a = {in_shape[i + 2], out_shape[i + 2], window.kernel[i], window.strides[i], window.pad_l[i]};
    if (window.dilation[i] != 0) return Status::InvalidInput("the pool loop takes undilated windows");
    // Every window must hold an input (ONNX leaves an all-padding window's value open).
    if (a.pad < 0 || a.pad >= a.kernel || window.pad_r[i] >= a.kernel || a.kernel < 1 || a.stride < 1)
      return Status::InvalidInput("the pool loop takes windows that each hold an input");
  }
  return own;
}

}  // namespace tilebank::engine
