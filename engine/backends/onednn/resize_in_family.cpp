#include "engine/backends/onednn/resize_in_family.h"

#include <algorithm>
#include <array>

#include "engine/backends/onednn/channel_rows.h"
#include "engine/backends/onednn/direct_family_kernel.h"
#include "engine/backends/simd/resize_blend_simd.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {
namespace {

// Floats a thread takes at least.
constexpr int64_t kResizeGrain = int64_t{1} << 14;

// A task's input lines filtered along the width (a line: one depth and height index of an image's
// channel block, every width position), kept while the output lines after it read them again.
class FilteredLines {
 public:
  static constexpr int kLines = 4;  // the most one output line reads: two heights at two depths
  explicit FilteredLines(int64_t line) : buffers_(static_cast<size_t>(kLines * line)), line_(line) {}

  // Points at[k] to input line keys[k] filtered (k < count), filling the lines not held with
  // fill(key, buffer) in buffers no key of this call holds.
  template <class Fill>
  void Fetch(const int64_t* keys, int count, const float** at, Fill fill) {
    bool used[kLines] = {};
    int found[kLines];
    for (int k = 0; k < count; ++k) {
      found[k] = -1;
      for (int b = 0; b < kLines && found[k] < 0; ++b)
        if (held_[b] == keys[k]) found[k] = b, used[b] = true;
    }
    for (int k = 0; k < count; ++k) {
      if (found[k] < 0) {
        int b = 0;
        while (used[b]) ++b;
        fill(keys[k], buffers_.data() + b * line_);
        held_[b] = keys[k], used[b] = true, found[k] = b;
      }
      at[k] = buffers_.data() + found[k] * line_;
    }
  }

 private:
  std::vector<float> buffers_;
  int64_t line_;
  int64_t held_[kLines] = {-1, -1, -1, -1};
};

class ResizeFamilyKernel : public DirectFamilyKernel {
 public:
  // taps: depth, height, width (an axis the op lacks: one tap of index 0).
  ResizeFamilyKernel(ChannelRows in, ChannelRows out, std::array<std::vector<ResizeTap>, 3> taps, std::array<int64_t, 3> in_dims)
      : in_(in), out_(out), taps_(std::move(taps)), in_dims_(in_dims) {
    for (int a = 0; a < 3; ++a) blends_[a] = ResizeTapsBlend(taps_[a]);
  }
  bool RunsOnAnyThread() const override { return true; }  // own loops over ParallelFor

  // An output line (one depth and height index of an image's channel block) blends the input lines
  // of its taps, each filtered along the width once per task; the padding channels of a blocked
  // family come through as the input holds them (0).
  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    const int64_t width = out_.width, out_d = static_cast<int64_t>(taps_[0].size()), out_h = static_cast<int64_t>(taps_[1].size());
    const int64_t out_w = static_cast<int64_t>(taps_[2].size()), in_d = in_dims_[0], in_h = in_dims_[1];
    const int64_t line = out_w * width, in_line = in_dims_[2] * width;
    const int64_t lines = out_.images * (out_.rows / out_.spatial) * out_d * out_h;
    const int nz = blends_[0] ? 2 : 1, ny = blends_[1] ? 2 : 1;
    ParallelFor(lines, std::max<int64_t>(1, kResizeGrain / line), [&](int64_t begin, int64_t end) {
      FilteredLines filtered(line);
      std::vector<float> scratch(nz * ny == 4 ? static_cast<size_t>(line) : 0);
      for (int64_t l = begin; l < end; ++l) {
        const int64_t oy = l % out_h, oz = l / out_h % out_d, image_block = l / (out_h * out_d);
        const ResizeTap &tz = taps_[0][oz], &ty = taps_[1][oy];
        float* y = out + l * line;
        int64_t keys[FilteredLines::kLines];
        for (int zi = 0; zi < nz; ++zi)
          for (int yi = 0; yi < ny; ++yi) keys[zi * ny + yi] = (image_block * in_d + (zi ? tz.hi : tz.lo)) * in_h + (yi ? ty.hi : ty.lo);
        auto filter = [&](int64_t key, float* into) { BlendTapRows(in[0] + key * in_line, width, taps_[2].data(), out_w, into); };
        if (nz * ny == 1) {  // along the width alone (or nearest): straight into the output
          filter(keys[0], y);
          continue;
        }
        const float* at[FilteredLines::kLines];
        filtered.Fetch(keys, nz * ny, at, filter);
        if (nz * ny == 2) {
          BlendRows(at[0], at[1], blends_[1] ? ty.w : tz.w, y, line);
          continue;
        }
        BlendRows(at[0], at[1], ty.w, y, line);
        BlendRows(at[2], at[3], ty.w, scratch.data(), line);
        BlendRows(y, scratch.data(), tz.w, y, line);
      }
    });
    return Status::Ok();
  }

 private:
  ChannelRows in_, out_;
  std::array<std::vector<ResizeTap>, 3> taps_;
  std::array<int64_t, 3> in_dims_;  // the input's depth, height and width (1 where absent)
  std::array<bool, 3> blends_{};
};

}  // namespace

Result<std::unique_ptr<Kernel>> ResizeInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& src, const dnnl::memory::desc& dst) {
  if (op.kind != LayoutFamilyOp::Kind::kResize || op.inputs.size() != 1) return Status::InvalidInput("a family resize takes one Resize input");
  const std::vector<int64_t>&in = op.inputs[0], &out = op.output;
  const size_t spatial = out.size() - 2;
  if (in.size() != out.size() || spatial < 1 || spatial > 3 || op.taps.size() != spatial || in[0] != out[0] || in[1] != out[1])
    return Status::InvalidInput("a family resize takes 1 to 3 spatial axes, N and C unchanged, a tap list per axis");
  auto in_rows = ChannelRowsOf(src, in);
  if (!in_rows.ok()) return in_rows.status();
  auto out_rows = ChannelRowsOf(dst, out);
  if (!out_rows.ok()) return out_rows.status();
  if (in_rows->block != out_rows->block || in_rows->width != out_rows->width)
    return Status::InvalidInput("a family resize reads and writes one channel blocking");
  std::array<std::vector<ResizeTap>, 3> taps = {std::vector<ResizeTap>{ResizeTap{}}, std::vector<ResizeTap>{ResizeTap{}}, std::vector<ResizeTap>{ResizeTap{}}};
  std::array<int64_t, 3> in_dims = {1, 1, 1};
  for (size_t k = 0; k < spatial; ++k) {
    const size_t axis = 3 - spatial + k;
    if (static_cast<int64_t>(op.taps[k].size()) != out[2 + k]) return Status::InvalidInput("a family resize takes a tap per output coordinate");
    for (const ResizeTap& t : op.taps[k])
      if (t.lo < 0 || t.hi < 0 || t.lo >= in[2 + k] || t.hi >= in[2 + k]) return Status::InvalidInput("a family resize's tap lies outside its input");
    taps[axis] = op.taps[k];
    in_dims[axis] = in[2 + k];
  }
  return std::unique_ptr<Kernel>(new ResizeFamilyKernel(*in_rows, *out_rows, std::move(taps), in_dims));
}

}  // namespace tilebank::engine
