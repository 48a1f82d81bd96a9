#include "engine/backends/onednn/per_position_in_family.h"

#include <algorithm>

#include "engine/backends/onednn/channel_rows.h"
#include "engine/backends/onednn/direct_family_kernel.h"
#include "engine/backends/simd/per_channel_rows.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {
namespace {

// Floats a thread takes at least.
constexpr int64_t kPerPositionGrain = int64_t{1} << 14;

class PerPositionFamilyKernel : public DirectFamilyKernel {
 public:
  PerPositionFamilyKernel(PerChannelMap map, ChannelRows rows, bool operand_per_image) : map_(map), rows_(rows), operand_per_image_(operand_per_image) {}
  bool RunsOnAnyThread() const override { return true; }  // own loops over ParallelFor

  // in[0]: the tensor in the family; in[1]: the operand, row-major [N or 1, 1, spatial...].
  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    const ChannelRows& r = rows_;
    ParallelFor(r.images * r.rows, std::max<int64_t>(1, kPerPositionGrain / r.width), [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end;) {  // a run of rows of one channel block: consecutive positions
        const int64_t image = row / r.rows, in_image = row % r.rows;
        const int64_t stop = std::min(end, image * r.rows + r.RunEnd(in_image));
        const float* g = in[1] + (operand_per_image_ ? image * r.spatial : 0) + in_image % r.spatial;
        const int64_t valid = std::min(r.width, r.channels - r.FirstChannel(in_image));
        MapRowsByRowValue(map_, in[0] + row * r.width, out + row * r.width, stop - row, r.width, valid, g);
        row = stop;
      }
    });
    return Status::Ok();
  }

 private:
  PerChannelMap map_;
  ChannelRows rows_;
  bool operand_per_image_ = false;  // the operand is [N, 1, ...], not [1, 1, ...]
};

}  // namespace

Result<std::unique_ptr<Kernel>> PerPositionInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& md) {
  if (op.kind != LayoutFamilyOp::Kind::kPerPositionBinary || op.inputs.size() != 2 || op.inputs[0] != op.output)
    return Status::InvalidInput("a per-position loop takes a binary operator whose first input has the output's shape");
  auto rows = ChannelRowsOf(md, op.output);
  if (!rows.ok()) return rows.status();
  std::vector<int64_t> operand = op.inputs[1];
  if (operand.size() > op.output.size()) return Status::InvalidInput("a per-position operand has more axes than the output");
  operand.insert(operand.begin(), op.output.size() - operand.size(), 1);
  if (operand[1] != 1 || (operand[0] != 1 && operand[0] != op.output[0]) || !std::equal(operand.begin() + 2, operand.end(), op.output.begin() + 2))
    return Status::InvalidInput("a per-position loop takes an operand of [N or 1, 1, spatial...]");
  const std::string& t = op.op_type;
  if (t != "Add" && t != "Sub" && t != "Mul" && t != "Div") return Status::InvalidInput("a per-position loop takes Add, Sub, Mul or Div, not " + t);
  const PerChannelMap map = t == "Add" ? PerChannelMap::kAdd : t == "Sub" ? PerChannelMap::kSub : t == "Mul" ? PerChannelMap::kMul : PerChannelMap::kDiv;
  return std::unique_ptr<Kernel>(new PerPositionFamilyKernel(map, *rows, operand[0] != 1));
}

}  // namespace tilebank::engine
