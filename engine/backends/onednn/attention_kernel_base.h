// What the fused attention kernels (engine/backends/onednn/attention_kernel.h) share: the
// Prepare/Run/Fetch path over their direct one, and the mask's lookup. A kernel derives from it and
// implements BindDirect and RunDirect.
#pragma once
#include <string>
#include <vector>

#include "engine/backends/onednn/attention_kernel.h"

namespace tilebank::engine {

class AttentionKernelBase : public Kernel {
 public:
  explicit AttentionKernelBase(AttentionGeometry g) : g_(std::move(g)) {}

  Status Prepare(const std::vector<const Tensor*>& inputs) override {
    std::vector<std::vector<int64_t>> shapes;
    for (const Tensor* t : inputs) shapes.push_back(t->shape);
    auto bound = BindDirect(shapes, std::vector<const Tensor*>(inputs.size(), nullptr));
    if (!bound.ok()) return bound.status();
    prepared_ = inputs;
    return Status::Ok();
  }
  Status Run() override {
    result_ = Tensor(g_.output_shape);
    std::vector<const float*> in;
    for (const Tensor* t : prepared_) in.push_back(t->data.data());
    return RunDirect(in, result_.data.data());
  }
  Status Fetch(Tensor* output) override {
    *output = result_;
    return Status::Ok();
  }

 protected:
  // Ok when `inputs` inputs are Q, K, V and the mask where there is one; keeps a constant mask.
  Status TakeInputs(size_t inputs, const std::vector<const Tensor*>& constants) {
    if (inputs != (g_.mask ? 4u : 3u)) return Status::InvalidInput("attention: takes Q, K, V" + std::string(g_.mask ? " and the mask" : ""));
    if (g_.mask && constants.size() > 3 && constants[3]) mask_constant_ = constants[3]->data;
    return Status::Ok();
  }
  // The mask's memory for a run (the kept constant, else input 3), or null without a mask.
  const float* MaskOf(const std::vector<const float*>& inputs) const {
    return g_.mask ? (mask_constant_.empty() ? inputs[3] : mask_constant_.data()) : nullptr;
  }
  // rows[r][k] += mask at (b, h, q0 + r, k) for `count` rows of g_.keys() floats, `stride` apart.
  void AddMaskRows(const float* mask, int64_t b, int64_t h, int64_t q0, int64_t count, float* rows, int64_t stride) const {
    const StridedView& m = *g_.mask;
    const int64_t keys = g_.keys();
    for (int64_t q = 0; q < count; ++q, rows += stride) {
      const float* src = mask + m.offset + b * m.strides[0] + h * m.strides[1] + (q0 + q) * m.strides[2];
      if (m.strides[3] == 1)
        for (int64_t k = 0; k < keys; ++k) rows[k] += src[k];
      else
        for (int64_t k = 0; k < keys; ++k) rows[k] += src[k * m.strides[3]];
    }
  }

  AttentionGeometry g_;

 private:
  std::vector<float> mask_constant_;
  std::vector<const Tensor*> prepared_;
  Tensor result_;
};

}  // namespace tilebank::engine
