// impl.onednn for vector operators: Softmax (one axis), LayerNormalization (the axes from `axis`
// on, with scale and optional bias), Relu, Sigmoid, Tanh, Gelu (erf or tanh), MaxPool and
// AveragePool (1-D to 3-D, dilations, ceil_mode; no indices output), GlobalAveragePool and
// GlobalMaxPool (one window over the spatial axes), and Add, Sub,
// Mul, Div where the first input has the output's shape (oneDNN broadcasts the second only; Add
// and Mul swap their inputs when it is the first that broadcasts).
#pragma once

#include <dnnl.hpp>

#include <memory>
#include <string>

#include "engine/core/kernel.h"
#include "engine/core/op_spec.h"

namespace tilebank::engine {

bool OneDnnImplementsVectorOp(const std::string& op_type);
std::vector<std::string> OneDnnVectorOps();
// Ok when oneDNN runs this instance; otherwise why not.
Status OneDnnSupportsVectorOp(const OpSpec& op);
// An ONNX pooling node's window over its spatial axes in oneDNN's terms: dilation counts the gaps
// (ONNX's minus one), and the right padding is what the output length needs, so ceil_mode's
// partial windows are right padding too.
struct PoolWindow {
  dnnl::memory::dims kernel, strides, dilation, pad_l, pad_r;
  bool padded_past_pads = false;  // ceil_mode: windows reach beyond the explicit pads
};
PoolWindow WindowOf(const OpSpec& op);

// The pooling primitive of a supported MaxPool, AveragePool or global pool over `src` and `dst` in any layout
// (throws dnnl::error when oneDNN has none).
dnnl::pooling_v2_forward::primitive_desc OneDnnPoolingPrimitive(const OpSpec& op, const dnnl::memory::desc& src, const dnnl::memory::desc& dst);
// Global pooling, one window over every spatial axis of `src` (max, else the average), in any layout.
dnnl::pooling_v2_forward::primitive_desc OneDnnGlobalPoolingPrimitive(bool max, const dnnl::memory::desc& src, const dnnl::memory::desc& dst);
// The kernel of a supported instance (its primitive is created in Prepare).
std::unique_ptr<Kernel> OneDnnVectorKernel(const OpSpec& op);

}  // namespace tilebank::engine
