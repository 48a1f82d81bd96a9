// The fast path of the registry's float32 LSTM, GRU and RNN: oneDNN's RNN primitives
// (engine/kernels/onednn_rnn_kernel.cpp), one primitive per direction, the weights reordered into
// the primitive's packed layout once per weight tensor.
#pragma once
#include <cstddef>
#include <cstdint>
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

// A sequence whose primitive asks for more scratchpad than this runs in pieces of steps.
inline constexpr size_t kMostRecurrentScratchBytes = size_t{1} << 20;
inline constexpr int64_t kFewestPieceSteps = 32;

// The steps of each piece (the last may be shorter) of a sequence of `steps` whose primitive over all
// of them asks for `scratch_bytes`: all of them at most kMostRecurrentScratchBytes; otherwise the
// fewest pieces of about equal steps that each ask at most that, none under kFewestPieceSteps.
int64_t RecurrentPieceSteps(int64_t steps, size_t scratch_bytes);

// How many calls of these kernels oneDNN's primitives computed in this process (the others ran the
// fallback): what tells a test which of the two ran.
int64_t OneDnnRecurrentCalls();

}  // namespace tilebank::engine::kernels
