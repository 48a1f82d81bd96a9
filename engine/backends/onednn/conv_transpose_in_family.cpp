#include "engine/backends/onednn/conv_transpose_in_family.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstring>

#include "engine/backends/onednn/direct_family_kernel.h"
#include "engine/backends/onednn/row_major_sgemm.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {
namespace {

class ConvTransposeFamilyKernel : public DirectFamilyKernel {
 public:
  explicit ConvTransposeFamilyKernel(const LayoutFamilyOp& op) {
    const auto& x = op.inputs[0];
    const size_t spatial = x.size() - 2, lead = 3 - spatial;
    N_ = x[0], C_ = x[1], M_ = op.output[1];
    for (size_t d = 0; d < spatial; ++d) D_[lead + d] = x[2 + d], k_[lead + d] = op.kernel[d];
    taps_ = k_[0] * k_[1] * k_[2];
    // W [C, M, taps] -> [C, taps, M]: a position's taps come out of the GEMM as rows of M channels.
    weights_.resize(static_cast<size_t>(C_ * taps_ * M_));
    for (int64_t c = 0; c < C_; ++c)
      for (int64_t m = 0; m < M_; ++m)
        for (int64_t t = 0; t < taps_; ++t) weights_[(c * taps_ + t) * M_ + m] = op.scale[(c * M_ + m) * taps_ + t];
    bias_ = op.shift.empty() ? std::vector<float>(static_cast<size_t>(M_), 0.0f) : op.shift;
  }

  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    const int64_t positions = N_ * D_[0] * D_[1] * D_[2], width = taps_ * M_;
    if (positions == 0 || M_ == 0) return Status::Ok();
    z_.resize(static_cast<size_t>(positions * width));
    if (C_ > 0)
      RowMajorSgemm('N', 'N', positions, width, C_, 1.0f, in[0], C_, weights_.data(), width, 0.0f, z_.data(), width);
    else
      std::fill(z_.begin(), z_.end(), 0.0f);
    const int64_t O1 = D_[1] * k_[1], O2 = D_[2] * k_[2], O0 = D_[0] * k_[0];
    ParallelFor(positions, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, width)), [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        int64_t rest = p;
        const int64_t p2 = rest % D_[2];
        rest /= D_[2];
        const int64_t p1 = rest % D_[1];
        rest /= D_[1];
        const int64_t p0 = rest % D_[0], n = rest / D_[0];
        const float* row = z_.data() + p * width;
        for (int64_t t0 = 0; t0 < k_[0]; ++t0)
          for (int64_t t1 = 0; t1 < k_[1]; ++t1)
            for (int64_t t2 = 0; t2 < k_[2]; ++t2) {
              const int64_t q = ((n * O0 + p0 * k_[0] + t0) * O1 + p1 * k_[1] + t1) * O2 + p2 * k_[2] + t2;
              const float* from = row + ((t0 * k_[1] + t1) * k_[2] + t2) * M_;
              float* to = out + q * M_;
              for (int64_t m = 0; m < M_; ++m) to[m] = from[m] + bias_[m];
            }
      }
    });
    return Status::Ok();
  }

 private:
  int64_t N_ = 0, C_ = 0, M_ = 0, taps_ = 1;
  int64_t D_[3] = {1, 1, 1}, k_[3] = {1, 1, 1};
  std::vector<float> weights_, bias_, z_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> ConvTransposeInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& md) {
  if (op.inputs.empty() || op.inputs[0].size() < 3 || op.inputs[0].size() > 5 || op.kernel.size() + 2 != op.inputs[0].size())
    return Status::InvalidInput("a tiled ConvTranspose takes X of rank 3 to 5 and its kernel");
  int64_t taps = 1;
  for (int64_t k : op.kernel) taps *= k;
  if (static_cast<int64_t>(op.scale.size()) != op.inputs[0][1] * op.output[1] * taps || (!op.shift.empty() && static_cast<int64_t>(op.shift.size()) != op.output[1]))
    return Status::InvalidInput("a tiled ConvTranspose's weights or bias do not fit its shapes");
  const dnnl_blocking_desc_t& blocking = md.data.format_desc.blocking;
  if (md.data.format_kind != dnnl_blocked || blocking.inner_nblks != 0 || blocking.strides[1] != 1)
    return Status::InvalidInput("a tiled ConvTranspose in a layout family takes channels-last only");
  return std::unique_ptr<Kernel>(new ConvTransposeFamilyKernel(op));
}

}  // namespace tilebank::engine
