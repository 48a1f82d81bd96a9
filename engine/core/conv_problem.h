// A 2-D NCHW convolution instance (Conv with group, strides, pads, dilations, optional bias). A 1-D
// convolution runs as one of height 1 (engine/passes/conv1d_lifting.h).
#pragma once
#include <cstdint>

#include "engine/core/op_spec.h"

namespace tilebank::engine {

struct ConvProblem {
  int N = 0, C = 0, H = 0, W = 0;        // input
  int OC = 0, OH = 0, OW = 0;            // output
  int KH = 0, KW = 0, G = 1, Cg = 0, OCg = 0;
  int sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;  // ph, pw: the pads before (top, left)
  int ph_end = 0, pw_end = 0;                           // the pads after (bottom, right)
  bool bias = false;
  bool Padded() const { return ph || pw || ph_end || pw_end; }
  double Flops() const { return 2.0 * N * OC * OH * OW * Cg * KH * KW; }
};

// Checks shapes against the attributes; auto_pad other than NOTSET is refused.
Result<ConvProblem> AnalyzeConv(const OpSpec& op);

}  // namespace tilebank::engine
