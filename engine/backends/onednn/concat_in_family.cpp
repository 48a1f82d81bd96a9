#include "engine/backends/onednn/concat_in_family.h"

#include <algorithm>
#include <cstring>

#include "engine/backends/onednn/direct_family_kernel.h"
#include "engine/core/broadcast.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {
namespace {

// Floats a thread copies at least.
constexpr int64_t kConcatGrain = int64_t{1} << 14;

// The indices of `axis` one block of `md` holds (1 where it is not blocked along it).
int64_t AxisBlockOf(const dnnl::memory::desc& md, int axis) {
  const dnnl_blocking_desc_t& b = md.data.format_desc.blocking;
  int64_t block = 1;
  for (int k = 0; k < b.inner_nblks; ++k)
    if (b.inner_idxs[k] == axis) block *= b.inner_blks[k];
  return block;
}

// The floats one index of `axis` spans with everything inside it (a run of the concat), or 0 when
// `md` is not dense or blocks `axis` by more than its extent allows.
int64_t RunOf(const dnnl::memory::desc& md, int axis) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked || d.data_type != dnnl_f32 || axis < 0 || axis >= d.ndims) return 0;
  int64_t padded = 1;
  for (int i = 0; i < d.ndims; ++i) padded *= d.padded_dims[i];
  if (static_cast<int64_t>(md.get_size()) != padded * static_cast<int64_t>(sizeof(float))) return 0;  // not dense
  const int64_t axis_block = AxisBlockOf(md, axis);
  if (d.dims[axis] % axis_block != 0) return 0;  // a block of this axis would hold two inputs' values
  return d.format_desc.blocking.strides[axis] * (d.padded_dims[axis] / axis_block);
}

// Each output run: `out_run` floats of an input run of `in_run`, from `start` in it.
class SliceFamilyKernel : public DirectFamilyKernel {
 public:
  bool RunsOnAnyThread() const override { return true; }  // own loops over ParallelFor
  SliceFamilyKernel(int64_t outer, int64_t in_run, int64_t out_run, int64_t start) : outer_(outer), in_run_(in_run), out_run_(out_run), start_(start) {}
  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    ParallelFor(outer_ * out_run_, kConcatGrain, [&](int64_t begin, int64_t end) {
      for (int64_t done = begin; done < end;) {
        const int64_t run = done / out_run_, at = done % out_run_, count = std::min(out_run_ - at, end - done);
        std::memcpy(out + done, in[0] + run * in_run_ + start_ + at, static_cast<size_t>(count) * sizeof(float));
        done += count;
      }
    });
    return Status::Ok();
  }

 private:
  int64_t outer_, in_run_, out_run_, start_;
};

class ConcatFamilyKernel : public DirectFamilyKernel {
 public:
  bool RunsOnAnyThread() const override { return true; }  // own loops over ParallelFor
  explicit ConcatFamilyKernel(ConcatRuns runs) : runs_(std::move(runs)) {
    starts_.push_back(0);
    for (int64_t c : runs_.chunks) starts_.push_back(starts_.back() + c);
  }

  // in: the inputs in the family, in order; out: the output in the family.
  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    const ConcatRuns& r = runs_;
    // Each thread a contiguous range of the output's floats, walked run by run and input by input.
    ParallelFor(r.outer * r.out_chunk, kConcatGrain, [&](int64_t begin, int64_t end) {
      int64_t run = begin / r.out_chunk, at = begin % r.out_chunk;
      size_t input = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), at) - starts_.begin() - 1);
      for (int64_t done = begin; done < end;) {
        const int64_t in_chunk = at - starts_[input], count = std::min(r.chunks[input] - in_chunk, end - done);
        std::memcpy(out + done, in[input] + run * r.chunks[input] + in_chunk, static_cast<size_t>(count) * sizeof(float));
        done += count;
        at += count;
        while (at == starts_[input + 1]) {  // the next input with a chunk, in this run or the next
          if (++input == r.chunks.size()) input = 0, at = 0, ++run;
          if (r.chunks[input] != 0) break;
        }
      }
    });
    return Status::Ok();
  }

 private:
  ConcatRuns runs_;
  std::vector<int64_t> starts_;  // where input i's chunk starts in an output run; the last: out_chunk
};

}  // namespace

Result<ConcatRuns> ConcatRunsOf(const std::vector<dnnl::memory::desc>& srcs, const dnnl::memory::desc& dst, int64_t axis) {
  ConcatRuns runs;
  runs.out_chunk = RunOf(dst, static_cast<int>(axis));
  if (runs.out_chunk <= 0) return Status::InvalidInput("a concat's output is not dense in whole blocks along its axis");
  const int64_t total = static_cast<int64_t>(dst.get_size() / sizeof(float));
  runs.outer = total / runs.out_chunk;
  int64_t sum = 0;
  for (const auto& md : srcs) {
    const int64_t chunk = RunOf(md, static_cast<int>(axis));
    if (chunk <= 0 && md.get_size() > 0) return Status::InvalidInput("a concat's input is not dense in whole blocks along its axis");
    if (chunk > 0 && static_cast<int64_t>(md.get_size() / sizeof(float)) != runs.outer * chunk)
      return Status::InvalidInput("a concat's input is laid out in another order than its output");
    runs.chunks.push_back(std::max<int64_t>(chunk, 0));
    sum += runs.chunks.back();
  }
  if (sum != runs.out_chunk) return Status::InvalidInput("a concat's inputs do not fill its output's runs");
  return runs;
}

Result<std::unique_ptr<Kernel>> ConcatInFamily(const LayoutFamilyOp& op, const std::vector<dnnl::memory::desc>& srcs, const dnnl::memory::desc& dst) {
  if (op.kind != LayoutFamilyOp::Kind::kConcat) return Status::InvalidInput("the concat loop takes a Concat");
  auto runs = ConcatRunsOf(srcs, dst, PositiveAxis(op.axis, op.output.size()));
  if (!runs.ok()) return runs.status();
  return std::unique_ptr<Kernel>(new ConcatFamilyKernel(std::move(*runs)));
}

Result<std::unique_ptr<Kernel>> SliceInFamily(const LayoutFamilyOp& op, const dnnl::memory::desc& src, const dnnl::memory::desc& dst) {
  if (op.kind != LayoutFamilyOp::Kind::kSlice || op.inputs.size() != 1 || op.inputs[0].size() != op.output.size() || op.offsets.size() != op.output.size())
    return Status::InvalidInput("the slice loop takes a Slice");
  int axis = -1;
  for (size_t d = 0; d < op.output.size(); ++d) {
    if (op.output[d] == op.inputs[0][d]) continue;
    if (axis >= 0) return Status::InvalidInput("the slice loop takes a slice of one axis");
    axis = static_cast<int>(d);
  }
  if (axis < 0) axis = 0;  // nothing sliced: one run, copied whole
  const int64_t in_run = RunOf(src, axis), out_run = RunOf(dst, axis);
  if (in_run <= 0 || out_run <= 0) return Status::InvalidInput("a slice's input or output is not dense in whole blocks along its axis");
  const int64_t outer = static_cast<int64_t>(dst.get_size() / sizeof(float)) / out_run, offset = op.offsets[static_cast<size_t>(axis)];
  if (static_cast<int64_t>(src.get_size() / sizeof(float)) != outer * in_run) return Status::InvalidInput("a slice's input is laid out in another order than its output");
  if (offset % AxisBlockOf(src, axis) != 0) return Status::InvalidInput("a slice that starts inside a block");
  const int64_t start = offset * (in_run / op.inputs[0][static_cast<size_t>(axis)]);
  if (start + out_run > in_run) return Status::InvalidInput("a slice past its input's run");
  return std::unique_ptr<Kernel>(new SliceFamilyKernel(outer, in_run, out_run, start));
}

}  // namespace tilebank::engine
