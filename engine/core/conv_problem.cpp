#include "engine/core/conv_problem.h"

#include "engine/core/tensor.h"

namespace tilebank::engine {

Result<ConvProblem> AnalyzeConv(const OpSpec& op) {
  auto bad = [&](const std::string& why) { return Status::InvalidInput(op.name + " (Conv): " + why); };
  if (op.inputs.size() < 2 || op.inputs[0].shape.size() != 4 || op.inputs[1].shape.size() != 4 || op.outputs[0].shape.size() != 4)
    return bad("only 2-D convolution with NCHW input and OIHW weights is supported");
  if (op.Text("auto_pad", "NOTSET") != "NOTSET") return bad("auto_pad " + op.Text("auto_pad", "") + " is not an ONNX mode");
  const auto& x = op.inputs[0].shape;
  const auto& w = op.inputs[1].shape;
  const auto& y = op.outputs[0].shape;
  ConvProblem p;
  p.N = int(x[0]), p.C = int(x[1]), p.H = int(x[2]), p.W = int(x[3]);
  p.OC = int(w[0]), p.Cg = int(w[1]), p.KH = int(w[2]), p.KW = int(w[3]);
  p.G = int(op.Int("group", 1));
  auto s = op.Ints("strides", {1, 1}), d = op.Ints("dilations", {1, 1}), pads = op.Ints("pads", {0, 0, 0, 0});
  if (s.size() != 2 || d.size() != 2 || pads.size() != 4) return bad("strides, dilations and pads must be 2-D");
  p.sh = int(s[0]), p.sw = int(s[1]), p.dh = int(d[0]), p.dw = int(d[1]), p.ph = int(pads[0]), p.pw = int(pads[1]);
  p.ph_end = int(pads[2]), p.pw_end = int(pads[3]);
  for (int64_t pad : pads)
    if (pad < 0) return bad("pads must not be negative");
  if (p.G < 1) return bad("attr group " + std::to_string(p.G) + " must be at least 1");
  if (p.C % p.G != 0 || p.OC % p.G != 0 || p.Cg != p.C / p.G)
    return bad("channels do not match attr group " + std::to_string(p.G) + ": input_desc[0] has " + std::to_string(p.C) +
               " channels and input_desc[1] (weights) " + std::to_string(p.OC) + " outputs of " + std::to_string(p.Cg) +
               " channels (expected " + (p.C % p.G ? std::string("channels divisible by the group") : std::to_string(p.C / p.G)) + ")");
  p.OCg = p.OC / p.G;
  p.OH = (p.H + p.ph + p.ph_end - ((p.KH - 1) * p.dh + 1)) / p.sh + 1;
  p.OW = (p.W + p.pw + p.pw_end - ((p.KW - 1) * p.dw + 1)) / p.sw + 1;
  if (y[0] != p.N || y[1] != p.OC || y[2] != p.OH || y[3] != p.OW)
    return bad("output_desc[0].shape should be [" + std::to_string(p.N) + "," + std::to_string(p.OC) + "," + std::to_string(p.OH) + "," + std::to_string(p.OW) + "]");
  if (op.inputs.size() > 2) {
    if (Tensor::NumElements(op.inputs[2].shape) != p.OC) return bad("input_desc[2] (bias) must have one value per output channel");
    p.bias = true;
  }
  return p;
}

}  // namespace tilebank::engine
