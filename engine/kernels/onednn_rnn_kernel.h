// The fast path of the registry's float32 LSTM, GRU and RNN: oneDNN's RNN primitives
// (engine/kernels/onednn_rnn_kernel.cpp), one primitive per direction, the weights reordered into
// the primitive's packed layout once per weight tensor.
#pragma once
#include <memory>

#include "engine/kernels/op_kernel.h"

namespace tilebank::engine::kernels {

enum class RecurrentCell { kLstm, kGru, kRnn };

// Whether oneDNN computes the node as ONNX defines it, from its attributes: the default
// activations (RNN: Tanh, Relu or Sigmoid, the same for both directions), no clip, no
// input_forget. (sequence_lens shorter than the sequence is seen at run time: `fallback` runs it.)
bool OneDnnTakesRecurrent(const KernelInfo& info, RecurrentCell cell);

// `fallback` computes what oneDNN cannot take at run time (another dtype, sequence_lens shorter than
// the sequence, a oneDNN error) and reports bad inputs.
std::unique_ptr<OpKernel> MakeOneDnnRecurrent(const KernelInfo& info, RecurrentCell cell, std::unique_ptr<OpKernel> fallback);

// How many calls of these kernels oneDNN's primitives computed in this process (the others ran the
// fallback): what tells a test which of the two ran.
int64_t OneDnnRecurrentCalls();

}  // namespace tilebank::engine::kernels
