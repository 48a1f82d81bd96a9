// For the tests of the own pool loops: a pool's ONNX node and its output computed by plain loops
// on row-major data.
#pragma once
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/core/op_spec.h"
#include "engine/core/tensor.h"

namespace tilebank::engine {

struct Pool {
  std::string type;
  std::vector<int64_t> in, kernel, strides, pads;
  bool include_pad = false, ceil = false;
};

inline std::vector<int64_t> OutShape(const Pool& p) {
  std::vector<int64_t> out = {p.in[0], p.in[1]};
  const size_t s = p.kernel.size();
  for (size_t i = 0; i < s; ++i) {
    const double len = static_cast<double>(p.in[i + 2] + p.pads[i] + p.pads[i + s] - p.kernel[i]) / static_cast<double>(p.strides[i]);
    out.push_back(static_cast<int64_t>(p.ceil ? std::ceil(len) : std::floor(len)) + 1);
  }
  return out;
}

inline OpSpec SpecOf(const Pool& p) {
  OpSpec op;
  op.op_type = p.type;
  op.name = "pool";
  op.inputs = {{p.in, "float32"}};
  op.outputs = {{OutShape(p), "float32"}};
  op.attrs["kernel_shape"] = p.kernel;
  op.attrs["strides"] = p.strides;
  op.attrs["pads"] = p.pads;
  op.attrs["ceil_mode"] = int64_t{p.ceil};
  op.attrs["count_include_pad"] = int64_t{p.include_pad};
  return op;
}

// The pool on row-major data, axes padded to three (D, H, W).
inline std::vector<float> PlainPool(const Pool& p, const std::vector<float>& x) {
  const auto out = OutShape(p);
  const size_t s = p.kernel.size();
  int64_t in3[3] = {1, 1, 1}, out3[3] = {1, 1, 1}, k3[3] = {1, 1, 1}, st3[3] = {1, 1, 1}, pl3[3] = {0, 0, 0}, pr3[3] = {0, 0, 0};
  for (size_t i = 0; i < s; ++i) {
    const size_t a = 3 - s + i;
    in3[a] = p.in[i + 2], out3[a] = out[i + 2], k3[a] = p.kernel[i], st3[a] = p.strides[i], pl3[a] = p.pads[i], pr3[a] = p.pads[i + s];
  }
  const int64_t NC = p.in[0] * p.in[1];
  std::vector<float> y;
  for (int64_t nc = 0; nc < NC; ++nc)
    for (int64_t od = 0; od < out3[0]; ++od)
      for (int64_t oh = 0; oh < out3[1]; ++oh)
        for (int64_t ow = 0; ow < out3[2]; ++ow) {
          double acc = p.type == "MaxPool" ? -INFINITY : 0;
          int64_t count = 0, padded = 1;
          const int64_t o[3] = {od, oh, ow};
          for (int a = 0; a < 3; ++a) {  // counted with padding: the window within the pads
            const int64_t lo = o[a] * st3[a] - pl3[a];
            padded *= std::min(lo + k3[a], in3[a] + pr3[a]) - lo;
          }
          for (int64_t kd = 0; kd < k3[0]; ++kd)
            for (int64_t kh = 0; kh < k3[1]; ++kh)
              for (int64_t kw = 0; kw < k3[2]; ++kw) {
                const int64_t id = od * st3[0] - pl3[0] + kd, ih = oh * st3[1] - pl3[1] + kh, iw = ow * st3[2] - pl3[2] + kw;
                if (id < 0 || ih < 0 || iw < 0 || id >= in3[0] || ih >= in3[1] || iw >= in3[2]) continue;
                const double v = x[static_cast<size_t>(((nc * in3[0] + id) * in3[1] + ih) * in3[2] + iw)];
                acc = p.type == "MaxPool" ? std::max(acc, v) : acc + v;
                ++count;
              }
          if (p.type == "AveragePool") acc /= static_cast<double>(p.include_pad ? padded : count);
          y.push_back(static_cast<float>(acc));
        }
  return y;
}

}  // namespace tilebank::engine
