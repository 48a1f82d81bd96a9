#include "engine/backends/onednn/per_channel_in_family.h"

#include <algorithm>

#include "engine/backends/onednn/channel_rows.h"
#include "engine/backends/onednn/direct_family_kernel.h"
#include "engine/backends/onednn/onednn_common.h"
#include "engine/backends/simd/per_channel_rows.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {
namespace {

// Floats a thread takes at least.
constexpr int64_t kPerChannelGrain = int64_t{1} << 14;

class PerChannelFamilyKernel : public DirectFamilyKernel {
 public:
  bool RunsOnAnyThread() const override { return true; }  // own loops over ParallelFor
  PerChannelFamilyKernel(PerChannelMap map, ChannelRows rows, bool operand_per_image, std::vector<float> scale, std::vector<float> shift,
                         HandoverLayout narrow)
      : map_(map), rows_(rows), operand_per_image_(operand_per_image), scale_(std::move(scale)), shift_(std::move(shift)), narrow_(std::move(narrow)) {}
  // The tensor in the family (input 0 and the output) may come and go in bf16, each on its own.
  HandoverLayout NarrowLayout(int input) const override { return input <= 0 ? narrow_ : HandoverLayout{}; }
  Status UseNarrowLayouts(const std::vector<bool>& inputs, bool output) override {
    for (size_t k = 1; k < inputs.size(); ++k)
      if (inputs[k]) return Status::InvalidInput("a per-channel operand stays float32");
    narrow_in_ = !inputs.empty() && inputs[0];
    narrow_out_ = output;
    return Status::Ok();
  }

  // in[0]: the tensor in the family; in[1] (kBinary): the operand, row-major [N or 1, C].
  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    const ChannelRows& r = rows_;
    const bool binary = scale_.empty();
    ParallelFor(r.images * r.rows, std::max<int64_t>(1, kPerChannelGrain / r.width), [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end;) {
        const int64_t image = row / r.rows, in_image = row % r.rows;
        const int64_t stop = std::min(end, image * r.rows + r.RunEnd(in_image)), first = r.FirstChannel(in_image);
        const float* a = binary ? in[1] + (operand_per_image_ ? image * r.channels : 0) + first : scale_.data() + first;
        const float* b = binary ? nullptr : shift_.data() + first;
        const int64_t valid = std::min(r.width, r.channels - first);
        Map(in[0], out, row, stop - row, valid, a, b);
        row = stop;
      }
    });
    return Status::Ok();
  }

 private:
  // Rows [row, row + count) of x into y, each as it is handed over (narrow: bf16 bits).
  void Map(const float* x, float* y, int64_t row, int64_t count, int64_t valid, const float* a, const float* b) const {
    const int64_t at = row * rows_.width;
    const auto* x16 = reinterpret_cast<const uint16_t*>(x) + at;
    auto* y16 = reinterpret_cast<uint16_t*>(y) + at;
    if (narrow_in_ && narrow_out_) MapPerChannelRows(map_, x16, y16, count, rows_.width, valid, a, b);
    else if (narrow_in_) MapPerChannelRows(map_, x16, y + at, count, rows_.width, valid, a, b);
    else if (narrow_out_) MapPerChannelRows(map_, x + at, y16, count, rows_.width, valid, a, b);
    else MapPerChannelRows(map_, x + at, y + at, count, rows_.width, valid, a, b);
  }

  PerChannelMap map_;
  ChannelRows rows_;
  bool operand_per_image_ = false;  // kBinary: the operand is [N, C], not [1, C]
  std::vector<float> scale_, shift_;  // kAffine
  HandoverLayout narrow_;  // the family's layout of the tensor, in bf16
  bool narrow_in_ = false, narrow_out_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> PerChannelInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& md) {
  auto rows = ChannelRowsOf(md, op.output);
  if (!rows.ok()) return rows.status();
  const int64_t C = op.output[1];
  const HandoverLayout narrow = HandoverLayoutOf(WithBf16(md));
  if (op.kind == LayoutFamilyOp::Kind::kAffine) {
    if (static_cast<int64_t>(op.scale.size()) != C || op.shift.size() != op.scale.size())
      return Status::InvalidInput("a per-channel affine map takes a scale and a shift per channel");
    return std::unique_ptr<Kernel>(new PerChannelFamilyKernel(op.relu ? PerChannelMap::kAffineRelu : PerChannelMap::kAffine, *rows, false, op.scale, op.shift, narrow));
  }
  if (op.kind != LayoutFamilyOp::Kind::kBinary || op.inputs.size() != 2 || op.inputs[0] != op.output)
    return Status::InvalidInput("a per-channel loop takes a binary operator whose first input has the output's shape");
  std::vector<int64_t> operand = op.inputs[1];
  if (operand.size() > op.output.size()) return Status::InvalidInput("a per-channel operand has more axes than the output");
  operand.insert(operand.begin(), op.output.size() - operand.size(), 1);
  if (operand[1] != C || !LayoutFree(operand) || (operand[0] != 1 && operand[0] != op.output[0]))
    return Status::InvalidInput("a per-channel loop takes an operand of [N or 1, C, 1, ...]");
  const std::string& t = op.op_type;
  const PerChannelMap map = t == "Add" ? PerChannelMap::kAdd : t == "Sub" ? PerChannelMap::kSub : t == "Mul" ? PerChannelMap::kMul : PerChannelMap::kDiv;
  if (t != "Add" && t != "Sub" && t != "Mul" && t != "Div") return Status::InvalidInput("a per-channel loop takes Add, Sub, Mul or Div, not " + t);
  return std::unique_ptr<Kernel>(new PerChannelFamilyKernel(map, *rows, operand[0] != 1, {}, {}, narrow));
}

}  // namespace tilebank::engine
