// The float32 arena implementations (ArenaFunction, op_kernel.h): data movement (Transpose,
// Slice, DepthToSpace, SpaceToDepth, Concat, Gather, GatherElements, Pad, Expand, Where, Resize, GridSample), Clip, Pow, the functions of
// engine/backends/simd/unary_float_simd.h (Exp, Log, Sqrt, LeakyRelu, Elu, Softplus, ...), PRelu, CumSum, LogSoftmax,
// FakeQuantizeLinear (a fused QuantizeLinear -> DequantizeLinear pair), inference
// BatchNormalization, InstanceNormalization and GroupNormalization (float32_norm_kernels.h) and copies (Identity, Dropout, a Cast to float32, the reshaping ops), each
// made for its node's static shapes with its constant operands (Clip bounds, constant Gather indices,
// Pad widths, a Pow exponent, Resize scales) read once. Each is the last entry of its op's table,
// after the reference, and applies where every input is float32 of static shape or a constant and
// the node has one output of static shape (Where's condition, and Gather's and GatherElements'
// run-time indices, of their own types and static shapes, are read as their elements): what the
// executor runs in its arena with nothing copied.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/backends/simd/grid_sample_bilinear.h"
#include "engine/backends/simd/select_simd.h"
#include "engine/backends/simd/softmax_rows_simd.h"
#include "engine/backends/simd/transpose_matrix.h"
#include "engine/backends/simd/unary_float_simd.h"
#include "engine/core/broadcast.h"
#include "engine/core/channel_affine.h"
#include "engine/core/parallel_for.h"
#include "engine/core/resize_taps.h"
#include "engine/core/slice_walk.h"
#include "engine/kernels/float32_norm_kernels.h"
#include "engine/kernels/gather_elements_rows.h"
#include "engine/kernels/grid_sample_taps.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/reduction_plan.h"

namespace tilebank::engine::kernels {
namespace {

const std::vector<int64_t>& InShape(const KernelInfo& info, size_t i) { return *info.InputShape(i); }
const std::vector<int64_t>& OutShape(const KernelInfo& info) { return *info.OutputShape(0); }

std::unique_ptr<OpKernel> MakeArena(const KernelInfo& info, std::function<void(const std::vector<const float*>&, float*)> run,
                                bool overwrites_input = false) {
  return ArenaKernel(info, ArenaFunction{std::move(run), overwrites_input, /*runs_on_any_thread=*/true});
}

// A constant operand as doubles; nullopt when the input is left out; kInvalidInput when it is there
// but not a constant the kernel can read.
Result<std::optional<std::vector<double>>> ConstantValues(const KernelInfo& info, size_t i) {
  if (!info.HasInput(i)) return std::optional<std::vector<double>>();
  const TypedTensor* c = info.ConstantInput(i);
  if (!c) return info.Bad("input " + std::to_string(i) + " must be a constant");
  std::vector<double> v(static_cast<size_t>(c->size()));
  for (int64_t k = 0; k < c->size(); ++k) v[k] = c->At(k);
  return std::optional<std::vector<double>>(std::move(v));
}

// Every input float32 of static shape, or a constant read when the kernel is made; one output, of
// static shape; no subgraphs.
bool StaticFloat32(const KernelInfo& info) {
  if (info.num_outputs != 1 || !info.OutputShape(0) || !info.graphs.empty()) return false;
  for (size_t i = 0; i < info.input_types.size(); ++i)
    if (info.HasInput(i) && !info.ConstantInput(i) && (info.InputType(i) != DType::kFloat32 || !info.InputShape(i))) return false;
  return true;
}

// A strided view over `shape` (`in_strides` per dim) with its size-1 dims dropped and each dim
// merged into the next where the two walk the input as one (stride[d] == stride[d+1] * shape[d+1]):
// ShuffleNet's channel shuffle, [1,116,2,14,14] read with perm (0,2,1,3,4), is [116,2,196], so
// it copies runs of 196 floats instead of 14.
struct StridedView {
  std::vector<int64_t> shape, strides;
};
StridedView Merged(const std::vector<int64_t>& shape, const std::vector<int64_t>& in_strides) {
  StridedView v;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!v.shape.empty() && v.strides.back() == in_strides[d] * shape[d]) {
      v.shape.back() *= shape[d];
      v.strides.back() = in_strides[d];
    } else {
      v.shape.push_back(shape[d]);
      v.strides.push_back(in_strides[d]);
    }
  }
  return v;
}

// A walk over the outer coordinates `dims` of `view` (the last of them fastest), from outer index
// `o` on, keeping the input offset (from `base`) and the output offset (the output row-major over
// the whole view, `out_strides`): divisions once where it starts, additions per step after.
class OuterCursor {
 public:
  OuterCursor(const std::vector<size_t>& dims, const StridedView& view, const std::vector<int64_t>& out_strides, int64_t base, int64_t o)
      : dims_(dims), view_(view), out_strides_(out_strides), coord_(dims.size(), 0), in_(base) {
    for (size_t k = dims.size(); k-- > 0;) {
      const size_t d = dims[k];
      coord_[k] = o % view.shape[d];
      o /= view.shape[d];
      in_ += coord_[k] * view.strides[d];
      out_ += coord_[k] * out_strides[d];
    }
  }
  int64_t in() const { return in_; }
  int64_t out() const { return out_; }
  void Next() {
    for (size_t k = dims_.size(); k-- > 0;) {
      const size_t d = dims_[k];
      in_ += view_.strides[d];
      out_ += out_strides_[d];
      if (++coord_[k] < view_.shape[d]) return;
      in_ -= coord_[k] * view_.strides[d];
      out_ -= coord_[k] * out_strides_[d];
      coord_[k] = 0;
    }
  }

 private:
  const std::vector<size_t>& dims_;
  const StridedView& view_;
  const std::vector<int64_t>& out_strides_;
  std::vector<int64_t> coord_;
  int64_t in_ = 0, out_ = 0;
};

// Copies a strided view: out[i] = in[base + sum(coord_d * stride_d)] over view.shape, on the
// threads. A view whose innermost dimension has stride 1 is copied a run at a time. One that reads
// stride 1 along another dimension (a Transpose moving the last axis: NCHW <-> NHWC) transposes
// those two as matrices (engine/backends/simd/transpose_matrix.h): read column by column,
// ConvNeXt's 56x56x48 permutes took 85-125 us each, now 56-74 (ONNX Runtime's: 82-98).
void StridedCopy(const float* in, int64_t base, const StridedView& view, float* out) {
  const size_t rank = view.shape.size();
  if (rank == 0) {
    *out = in[base];
    return;
  }
  const size_t last = rank - 1;
  std::vector<int64_t> out_strides(rank, 1);
  for (size_t d = last; d-- > 0;) out_strides[d] = out_strides[d + 1] * view.shape[d + 1];
  const int64_t total = out_strides[0] * view.shape[0];
  if (total == 0) return;
  constexpr int64_t kElementsPerTask = 16384;
  size_t unit = last;  // the dimension read with stride 1, if any other than the last
  for (size_t d = 0; d < last; ++d)
    if (view.strides[d] == 1 && view.strides[last] != 1) unit = d;
  if (unit == last) {  // runs of the innermost dimension (copied, or gathered where its stride is not 1)
    const int64_t inner = view.shape[last], inner_stride = view.strides[last], rows = total / inner;
    std::vector<size_t> outer_dims;
    for (size_t d = 0; d < last; ++d) outer_dims.push_back(d);
    ParallelFor(rows, std::max<int64_t>(1, kElementsPerTask / inner), [&](int64_t begin, int64_t end) {
      for (OuterCursor row(outer_dims, view, out_strides, base, begin); begin < end; ++begin, row.Next()) {
        float* o = out + row.out();
        if (inner_stride == 1) std::memcpy(o, in + row.in(), inner * sizeof(float));
        else for (int64_t k = 0; k < inner; ++k) o[k] = in[row.in() + k * inner_stride];
      }
    });
    return;
  }
  constexpr int64_t kRowsPerItem = 16;
  std::vector<size_t> outer_dims;
  for (size_t d = 0; d < last; ++d)
    if (d != unit) outer_dims.push_back(d);
  const int64_t A = view.shape[unit], B = view.shape[last], a_out_stride = out_strides[unit];
  const int64_t a_items = (A + kRowsPerItem - 1) / kRowsPerItem, items = total / (A * B) * a_items;
  ParallelFor(items, std::max<int64_t>(1, kElementsPerTask / (kRowsPerItem * B)), [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const OuterCursor at(outer_dims, view, out_strides, base, item / a_items);  // a block of 16 x B: divisions are cheap beside it
      const int64_t a0 = item % a_items * kRowsPerItem;
      TransposeMatrix(in + at.in() + a0, view.strides[last], std::min(kRowsPerItem, A - a0), B, out + at.out() + a0 * a_out_stride, a_out_stride);
    }
  });
}

Result<std::unique_ptr<OpKernel>> Transpose(const KernelInfo& info) {
  const auto& in_shape = InShape(info, 0);
  const size_t rank = in_shape.size();
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
  perm = info.attrs.Ints("perm", perm);
  const auto in_strides = RowMajorStrides(in_shape);
  std::vector<int64_t> out_shape(rank), strides(rank);
  for (size_t d = 0; d < rank; ++d) {
    out_shape[d] = in_shape[perm[d]];
    strides[d] = in_strides[perm[d]];
  }
  return MakeArena(info, [view = Merged(out_shape, strides)](const std::vector<const float*>& in, float* out) { StridedCopy(in[0], 0, view, out); });
}

// DepthToSpace (DCR or CRD) on NCHW: each output row (n, c, h, i) interleaves `b` input rows of W
// floats, read in order; rows split among the threads.
Result<std::unique_ptr<OpKernel>> DepthToSpace(const KernelInfo& info) {
  const auto& in_shape = InShape(info, 0);
  const int64_t b = info.attrs.Int("blocksize", 0);
  if (in_shape.size() != 4 || b <= 0 || in_shape[1] % (b * b) != 0) return info.Bad("takes NCHW with channels a multiple of blocksize^2");
  const bool crd = info.attrs.String("mode", "DCR") == "CRD";
  const int64_t N = in_shape[0], C = in_shape[1] / (b * b), H = in_shape[2], W = in_shape[3];
  return MakeArena(info, [=](const std::vector<const float*>& in, float* out) {
    const int64_t rows = N * C * H * b, plane = H * W;
    ParallelFor(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, W * b)), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t i = r % b, h = (r / b) % H, c = (r / (b * H)) % C, n = r / (b * H * C);
        float* y = out + r * W * b;
        for (int64_t j = 0; j < b; ++j) {
          const int64_t channel = crd ? (c * b + i) * b + j : (i * b + j) * C + c;
          const float* x = in[0] + (n * C * b * b + channel) * plane + h * W;
          for (int64_t w = 0; w < W; ++w) y[w * b + j] = x[w];
        }
      }
    });
  });
}

// SpaceToDepth on NCHW: the input read as [N, C, H/b, b, W/b, b] in the order [N, b, b, C, H/b, W/b].
Result<std::unique_ptr<OpKernel>> SpaceToDepth(const KernelInfo& info) {
  const auto& in_shape = InShape(info, 0);
  const int64_t b = info.attrs.Int("blocksize", 0);
  if (in_shape.size() != 4 || b <= 0 || in_shape[2] % b != 0 || in_shape[3] % b != 0) return info.Bad("takes NCHW with height and width multiples of blocksize");
  const int64_t N = in_shape[0], C = in_shape[1], H = in_shape[2] / b, W = in_shape[3] / b;
  const auto s = RowMajorStrides({N, C, H, b, W, b});
  return MakeArena(info, [view = Merged({N, b, b, C, H, W}, {s[0], s[3], s[5], s[1], s[2], s[4]})](const std::vector<const float*>& in, float* out) {
    StridedCopy(in[0], 0, view, out);
  });
}

Result<std::unique_ptr<OpKernel>> Slice(const KernelInfo& info) {
  const auto& shape = InShape(info, 0);
  const auto& out_shape = OutShape(info);
  const size_t rank = shape.size();
  auto starts = ConstantValues(info, 1), ends = ConstantValues(info, 2), axes = ConstantValues(info, 3), steps = ConstantValues(info, 4);
  for (auto* r : {&starts, &ends, &axes, &steps})
    if (!r->ok()) return r->status();
  // The constants as integers (a start or end past int64's range is clamped by the walk alike).
  auto ints = [](const std::optional<std::vector<double>>& values) -> std::optional<std::vector<int64_t>> {
    if (!values) return std::nullopt;
    std::vector<int64_t> out;
    for (double v : *values) out.push_back(static_cast<int64_t>(std::max(-9.0e18, std::min(9.0e18, v))));
    return out;
  };
  auto walk = WalkOfSlice(shape, ints(*starts).value_or(std::vector<int64_t>{}), ints(*ends).value_or(std::vector<int64_t>{}), ints(*axes),
                          ints(*steps));
  if (!walk.ok()) return info.Bad(walk.status().message());
  const auto in_strides = RowMajorStrides(shape);
  int64_t base = 0;
  std::vector<int64_t> strides(rank);
  for (size_t d = 0; d < rank; ++d) {
    base += walk->first[d] * in_strides[d];
    strides[d] = walk->step[d] * in_strides[d];
  }
  return MakeArena(info, [view = Merged(out_shape, strides), base](const std::vector<const float*>& in, float* out) { StridedCopy(in[0], base, view, out); });
}

Result<std::unique_ptr<OpKernel>> Concat(const KernelInfo& info) {
  const auto& out_shape = OutShape(info);
  const int64_t axis = PositiveAxis(info.attrs.Int("axis", 0), out_shape.size());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out_shape[d];
  for (size_t d = axis + 1; d < out_shape.size(); ++d) inner *= out_shape[d];
  std::vector<int64_t> chunks;
  for (size_t i = 0; i < info.input_types.size(); ++i) chunks.push_back(InShape(info, i)[axis] * inner);
  int64_t row = 0;  // the output elements of one outer index
  for (int64_t c : chunks) row += c;
  if (outer * row < (int64_t{1} << 16))  // small: one thread copies it all
    return MakeArena(info, [outer, chunks](const std::vector<const float*>& in, float* out) {
      for (int64_t o = 0; o < outer; ++o)
        for (size_t i = 0; i < chunks.size(); ++i) {
          std::memcpy(out, in[i] + o * chunks[i], chunks[i] * sizeof(float));
          out += chunks[i];
        }
    });
  if (outer > 64)  // many rows: each task copies whole rows
    return MakeArena(info, [outer, chunks, row](const std::vector<const float*>& in, float* out) {
      ParallelFor(outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, row)), [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          float* to = out + o * row;
          for (size_t i = 0; i < chunks.size(); ++i) {
            std::memcpy(to, in[i] + o * chunks[i], chunks[i] * sizeof(float));
            to += chunks[i];
          }
        }
      });
    });
  // Few large rows (channels of an NCHW map): pieces of at most 32Ki elements, on the threads.
  struct Piece {
    size_t input;
    int64_t from, to, count;
  };
  constexpr int64_t kPiece = 32768;
  std::vector<Piece> pieces;
  int64_t at = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t i = 0; i < chunks.size(); ++i)
      for (int64_t done = 0; done < chunks[i]; done += kPiece) {
        const int64_t count = std::min(kPiece, chunks[i] - done);
        pieces.push_back({i, o * chunks[i] + done, at, count});
        at += count;
      }
  return MakeArena(info, [pieces](const std::vector<const float*>& in, float* out) {
    ParallelFor(static_cast<int64_t>(pieces.size()), 1, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) std::memcpy(out + pieces[k].to, in[pieces[k].input] + pieces[k].from, pieces[k].count * sizeof(float));
    });
  });
}

// Gather with indices computed at run time (an embedding lookup of token ids): int64 or int32, one
// row of `inner` floats copied per index, on the threads; an index outside [-extent, extent) is
// the run's error, as the reference reports it.
Result<std::unique_ptr<OpKernel>> GatherAtRunTime(const KernelInfo& info, int64_t outer, int64_t inner, int64_t extent) {
  const int64_t count = Tensor::NumElements(InShape(info, 1));
  const bool wide = info.InputType(1) == DType::kInt64;
  auto fault = std::make_shared<RunFault>();
  ArenaFunction f;
  f.runs_on_any_thread = true;
  f.run = [=](const std::vector<const float*>& in, float* out) {
    fault->Clear();
    const auto* idx64 = reinterpret_cast<const int64_t*>(in[1]);
    const auto* idx32 = reinterpret_cast<const int32_t*>(in[1]);
    ParallelFor(outer * count, std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)), [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        const int64_t o = item / count, j = item % count;
        int64_t k = wide ? idx64[j] : idx32[j];
        if (!Wrap(&k, extent)) {
          fault->Record(wide ? idx64[j] : idx32[j]);
          continue;
        }
        std::memcpy(out + item * inner, in[0] + (o * extent + k) * inner, inner * sizeof(float));
      }
    });
  };
  f.verdict = RunFault::Verdict(fault, info, "index", "its dimension", extent);
  return ArenaKernel(info, std::move(f));
}

Result<std::unique_ptr<OpKernel>> Gather(const KernelInfo& info) {
  const auto& shape = InShape(info, 0);
  const int64_t axis = PositiveAxis(info.attrs.Int("axis", 0), shape.size());
  if (axis < 0 || axis >= static_cast<int64_t>(shape.size())) return info.Bad("axis outside the input's rank");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t extent = shape[axis];
  if (!info.ConstantInput(1)) return GatherAtRunTime(info, outer, inner, extent);
  auto indices = ConstantValues(info, 1);
  if (!indices.ok()) return indices.status();
  std::vector<int64_t> index;
  for (double v : **indices) {
    int64_t k = static_cast<int64_t>(v);
    if (k < 0) k += extent;
    if (k < 0 || k >= extent) return info.Bad("index " + std::to_string(static_cast<int64_t>(v)) + " is out of range");
    index.push_back(k);
  }
  // Consecutive indices read one run of the input (an unfold's windows, a slice written as a Gather).
  struct Run {
    int64_t from, length;
  };
  std::vector<Run> runs;
  for (int64_t k : index) {
    if (!runs.empty() && runs.back().from + runs.back().length == k) ++runs.back().length;
    else runs.push_back({k, 1});
  }
  const int64_t count = static_cast<int64_t>(index.size());
  return MakeArena(info, [outer, inner, extent, count, runs](const std::vector<const float*>& in, float* out) {
    ParallelFor(outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, count * inner)), [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        float* to = out + o * count * inner;
        for (const Run& run : runs) {
          std::memcpy(to, in[0] + (o * extent + run.from) * inner, run.length * inner * sizeof(float));
          to += run.length * inner;
        }
      }
    });
  });
}

// Where output position `o` of a dimension of `extent` input elements, `before` of them added in
// front (negative: cut), reads from under padding `mode`; -1: the constant fill. Reflect mirrors
// without repeating the edge, and again beyond the far one (numpy's "reflect", as ONNX's reference).
int64_t PadSource(int64_t o, int64_t before, int64_t extent, const std::string& mode) {
  int64_t i = o - before;
  if (i >= 0 && i < extent) return i;
  if (mode == "constant") return -1;
  if (mode == "edge") return i < 0 ? 0 : extent - 1;
  const int64_t period = 2 * (extent - 1);  // reflect
  if (period == 0) return 0;
  i = ((i % period) + period) % period;
  return i < extent ? i : period - i;
}

// Pad in every mode (constant, reflect, edge), pads negative or not, over the axes given: each
// output row (every dimension but the last) reads one input row or is the fill; its interior is
// one copy, its borders the few positions each side.
Result<std::unique_ptr<OpKernel>> Pad(const KernelInfo& info) {
  const std::string mode = info.attrs.String("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") return info.Bad("mode '" + mode + "' is not constant, reflect or edge");
  auto pads = ConstantValues(info, 1), value = ConstantValues(info, 2), axes_given = ConstantValues(info, 3);
  if (!pads.ok()) return pads.status();
  if (!value.ok()) return value.status();
  if (!axes_given.ok()) return axes_given.status();
  if (!*pads) return info.Bad("the pads input is missing");
  const auto& shape = InShape(info, 0);
  const auto& out_shape = OutShape(info);
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) return info.Bad("a scalar has nothing to pad");
  std::vector<int64_t> axes;
  if (*axes_given)
    for (double a : **axes_given) axes.push_back(a < 0 ? static_cast<int64_t>(a) + rank : static_cast<int64_t>(a));
  else
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  if ((**pads).size() != 2 * axes.size()) return info.Bad("pads must hold a begin and an end per axis");
  std::vector<int64_t> before(rank, 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    if (axes[k] < 0 || axes[k] >= rank) return info.Bad("axis outside the input's rank");
    before[axes[k]] = static_cast<int64_t>((**pads)[k]);
  }
  for (int64_t d = 0; d < rank; ++d)
    if (mode != "constant" && shape[d] == 0 && out_shape[d] > 0) return info.Bad(mode + " padding of an empty dimension");
  // Per dimension, the input position each output position reads (-1: the fill).
  std::vector<std::vector<int64_t>> source(rank);
  for (int64_t d = 0; d < rank; ++d)
    for (int64_t o = 0; o < out_shape[d]; ++o) source[d].push_back(PadSource(o, before[d], shape[d], mode));
  const float fill = *value && !(**value).empty() ? static_cast<float>((**value)[0]) : 0.f;
  const std::vector<int64_t> in_strides = RowMajorStrides(shape);
  const int64_t width = out_shape.back(), rows = width ? Tensor::NumElements(out_shape) / width : 0;
  // The last dimension's interior: output positions [first, first + run) read input [from, from + run).
  const int64_t pad_last = before.back(), extent_last = shape.back();
  const int64_t first = std::clamp<int64_t>(pad_last, 0, width), from = std::max<int64_t>(-pad_last, 0);
  const int64_t run = std::max<int64_t>(0, std::min(extent_last - from, width - first));
  return MakeArena(info, [source, in_strides, out_shape, fill, width, rows, first, run, from](const std::vector<const float*>& in, float* out) {
    const size_t outer_rank = out_shape.size() - 1;
    const std::vector<int64_t>& last = source.back();
    ParallelFor(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, width)), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        float* row = out + r * width;
        int64_t offset = 0, rest = r;
        bool filled = false;
        for (size_t d = outer_rank; d-- > 0;) {
          const int64_t i = source[d][rest % out_shape[d]];
          rest /= out_shape[d];
          if (i < 0) filled = true;
          offset += i * in_strides[d];
        }
        if (filled) {
          std::fill(row, row + width, fill);
          continue;
        }
        const float* src = in[0] + offset;
        for (int64_t o = 0; o < first; ++o) row[o] = last[o] < 0 ? fill : src[last[o]];
        if (run) std::memcpy(row + first, src + from, run * sizeof(float));
        for (int64_t o = first + run; o < width; ++o) row[o] = last[o] < 0 ? fill : src[last[o]];
      }
    });
  });
}

// Expand: the input broadcast to the output's shape.
Result<std::unique_ptr<OpKernel>> Expand(const KernelInfo& info) {
  const auto& out_shape = OutShape(info);
  const auto& in_shape = InShape(info, 0);
  if (in_shape.size() > out_shape.size()) return info.Bad("the input has a higher rank than the output");
  const auto strides = BroadcastStrides(in_shape, out_shape);
  return MakeArena(info, [view = Merged(out_shape, strides)](const std::vector<const float*>& in, float* out) { StridedCopy(in[0], 0, view, out); });
}

// Where(condition, x, z) with numpy broadcasting: rows of the output's last axis on the threads,
// each operand read along the row with stride 1 or 0. The condition is bool: its own bytes, in
// the arena's contract for inputs of another type than float32 (op_kernel.h).
Result<std::unique_ptr<OpKernel>> Where(const KernelInfo& info) {
  const auto& out_shape = OutShape(info);
  const size_t rank = out_shape.size();
  std::vector<std::vector<int64_t>> strides;
  for (int i = 0; i < 3; ++i) {
    if (InShape(info, i).size() > rank) return info.Bad("an input has a higher rank than the output");
    strides.push_back(BroadcastStrides(InShape(info, i), out_shape));
  }
  const int64_t inner = rank ? out_shape.back() : 1, rows = inner ? Tensor::NumElements(out_shape) / inner : 0;
  return MakeArena(info, [strides, out_shape, rank, inner, rows](const std::vector<const float*>& in, float* out) {
    const bool* c = reinterpret_cast<const bool*>(in[0]);
    ParallelFor(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, inner)), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        int64_t offset[3];
        BroadcastRowOffsets(r, out_shape, strides, offset);
        const auto step = [&](int i) { return rank ? strides[i].back() : int64_t{0}; };
        SelectFloatRow(c + offset[0], step(0), in[1] + offset[1], step(1), in[2] + offset[2], step(2), out + r * inner, inner);
      }
    });
  });
}

// y[p] = the sum of plane's taps of position p, for each of `positions`.
void SamplePlane(const float* plane, const GridSampleTaps& taps, const std::vector<float>& weights, int64_t positions, float* y) {
  for (int64_t p = 0; p < positions; ++p) {
    float v = 0.f;
    for (int64_t t = taps.first[p]; t < taps.first[p + 1]; ++t) v += plane[taps.offsets[t]] * weights[t];
    y[p] = v;
  }
}

// GridSample (opset 16, 2-D) in float: bilinear sampling fused (below); other modes find each
// image's taps once a run (grid_sample_taps.h), then sum its channels' planes; images on the
// threads, or one image's channels (an optical flow's lookups: 545 us each on the reference's
// double loop, one thread).
Result<std::unique_ptr<OpKernel>> GridSample(const KernelInfo& info) {
  const auto &x = InShape(info, 0), &grid = InShape(info, 1);
  if (x.size() != 4 || grid.size() != 4 || grid[3] != 2 || grid[0] != x[0]) return info.Bad("takes X [N, C, H, W] and grid [N, Hout, Wout, 2]");
  GridSampleGeometry g;
  if (!MakeGridSampleGeometry(x, grid, info.attrs.String("mode", "bilinear"), info.attrs.String("padding_mode", "zeros"),
                              info.attrs.Int("align_corners", 0) != 0, &g))
    return info.Bad("mode or padding_mode is not ONNX's");
  const int64_t N = x[0], C = x[1];
  if (g.mode == GridSampleGeometry::Mode::kBilinear && g.padding != GridSampleGeometry::Padding::kReflection && g.H * g.W < (int64_t{1} << 31)) {
    // Bilinear, zeros or border padding: a vector of positions at a time (grid_sample_bilinear.h),
    // runs of positions of every image on the threads.
    GridSampleBilinearShape shape;
    shape.channels = C, shape.h = g.H, shape.w = g.W, shape.positions = g.Ho * g.Wo;
    shape.align_corners = g.align_corners, shape.border = g.padding == GridSampleGeometry::Padding::kBorder;
    return MakeArena(info, [shape, N](const std::vector<const float*>& in, float* out) {
      constexpr int64_t kRun = 256;  // positions a task samples: whole vectors on every target
      const int64_t runs = (shape.positions + kRun - 1) / kRun;
      ParallelFor(N * runs, std::max<int64_t>(1, 16 / std::max<int64_t>(1, shape.channels)), [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          const int64_t n = t / runs, first = t % runs * kRun;
          GridSampleBilinearPositions(shape, in[0] + n * shape.channels * shape.h * shape.w, in[1] + n * shape.positions * 2,
                                      out + n * shape.channels * shape.positions, first, std::min(shape.positions, first + kRun));
        }
      });
    });
  }
  if (g.mode == GridSampleGeometry::Mode::kBilinear) {  // reflection padding
    // Bilinear: each position's taps (BilinearGridSampleTaps, as the lists below hold them) found
    // where they are summed, over every channel, the positions of all images on the threads (a
    // spatial transformer's 4 images of 3 channels: finding the taps into lists cost more than summing them).
    return MakeArena(info, [g, N, C](const std::vector<const float*>& in, float* out) {
      const int64_t positions = g.Ho * g.Wo, plane = g.H * g.W;
      ParallelFor(N * positions, std::max<int64_t>(64, 4096 / std::max<int64_t>(1, C)), [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          const int64_t n = t / positions, p = t % positions;
          const float* at = in[1] + t * 2;
          int64_t offsets[4];
          double exact[4];
          const int taps = BilinearGridSampleTaps(g, UnnormalizedGridCoordinate(g, at[0], g.W), UnnormalizedGridCoordinate(g, at[1], g.H), offsets, exact);
          float weights[4];  // as the lists' weights are rounded
          for (int k = 0; k < taps; ++k) weights[k] = static_cast<float>(exact[k]);
          const float* image = in[0] + n * C * plane;
          float* y = out + n * C * positions + p;
          for (int64_t c = 0; c < C; ++c) {
            const float* channel = image + c * plane;
            float v = 0.f;
            for (int k = 0; k < taps; ++k) v += channel[offsets[k]] * weights[k];
            y[c * positions] = v;
          }
        }
      });
    });
  }
  return MakeArena(info, [g, N, C](const std::vector<const float*>& in, float* out) {
    const int64_t positions = g.Ho * g.Wo, plane = g.H * g.W;
    // Image n's taps, and their weights in float.
    auto find_taps = [&](int64_t n, GridSampleTaps* taps, std::vector<float>* weights) {
      const float* grid_n = in[1] + n * positions * 2;
      FindGridSampleTaps(g, [grid_n](int64_t i) { return static_cast<double>(grid_n[i]); }, taps);
      weights->assign(taps->weights.begin(), taps->weights.end());
    };
    if (N != 1) {  // images on the threads, or none (a flow's correlation lookup: 256 images of one channel)
      // Finding a position's taps costs about what summing 16 channels of them does.
      const int64_t work = std::max<int64_t>(1, positions * (16 + C));
      ParallelFor(N, std::max<int64_t>(1, 16384 / work), [&](int64_t begin, int64_t end) {
        GridSampleTaps taps;
        std::vector<float> weights;
        for (int64_t n = begin; n < end; ++n) {
          find_taps(n, &taps, &weights);
          for (int64_t c = 0; c < C; ++c) SamplePlane(in[0] + (n * C + c) * plane, taps, weights, positions, out + (n * C + c) * positions);
        }
      });
      return;
    }
    GridSampleTaps taps;  // one image: its channels on the threads
    std::vector<float> weights;
    find_taps(0, &taps, &weights);
    ParallelFor(C, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, positions)), [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) SamplePlane(in[0] + c * plane, taps, weights, positions, out + c * positions);
    });
  });
}

// GatherElements (torch.gather) on float32 data with run-time int64 or int32 indices (passed as
// their own elements; gather_elements_rows.h). An index outside its dimension is the run's error
// (ArenaFunction::verdict), as the reference reports it.
Result<std::unique_ptr<OpKernel>> GatherElements(const KernelInfo& info) {
  const auto& x_shape = InShape(info, 0);
  const auto& idx_shape = InShape(info, 1);
  const int64_t rank = static_cast<int64_t>(x_shape.size());
  const int64_t axis = PositiveAxis(info.attrs.Int("axis", 0), x_shape.size());
  if (rank == 0 || axis < 0 || axis >= rank) return info.Bad("axis outside the input's rank");
  if (static_cast<int64_t>(idx_shape.size()) != rank || OutShape(info) != idx_shape) return info.Bad("indices must have the input's rank and the output's shape");
  for (int64_t k = 0; k < rank; ++k)
    if (k != axis && idx_shape[k] > x_shape[k]) return info.Bad("indices must fit the input's shape but along axis");
  const bool wide = info.InputType(1) == DType::kInt64;
  const std::vector<int64_t> strides = RowMajorStrides(x_shape);
  const int64_t dim = x_shape[axis];
  auto fault = std::make_shared<RunFault>();
  ArenaFunction f;
  f.runs_on_any_thread = true;
  f.run = [=](const std::vector<const float*>& in, float* out) {
    fault->Clear();
    if (const auto bad = GatherElementsRows(out, in[0], in[1], wide, idx_shape, strides, axis, dim)) fault->Record(*bad);
  };
  f.verdict = RunFault::Verdict(fault, info, "index", "its dimension", dim);
  return ArenaKernel(info, std::move(f));
}

bool StaticGatherElements(const KernelInfo& info) {
  if (info.num_outputs != 1 || !info.OutputShape(0) || !info.graphs.empty() || info.input_types.size() != 2) return false;
  return info.InputType(0) == DType::kFloat32 && (info.InputType(1) == DType::kInt64 || info.InputType(1) == DType::kInt32) && info.InputShape(0) &&
         info.InputShape(1);
}

// Gather: the data float32 of static shape (or a constant), the indices a constant, or int64 or
// int32 of static shape read at run time.
bool StaticGather(const KernelInfo& info) {
  if (info.num_outputs != 1 || !info.OutputShape(0) || !info.graphs.empty() || info.input_types.size() != 2) return false;
  if (info.InputType(0) != DType::kFloat32 || !info.InputShape(0)) return false;
  return info.ConstantInput(1) || ((info.InputType(1) == DType::kInt64 || info.InputType(1) == DType::kInt32) && info.InputShape(1));
}

// Every input of Where float32 but the bool condition, each of static shape or a constant; one
// output, of static shape.
bool StaticWhere(const KernelInfo& info) {
  if (info.num_outputs != 1 || !info.OutputShape(0) || !info.graphs.empty() || info.input_types.size() != 3) return false;
  for (size_t i = 0; i < 3; ++i)
    if (info.InputType(i) != (i == 0 ? DType::kBool : DType::kFloat32) || !info.InputShape(i)) return false;
  return true;
}

// Cubic Resize of the last two axes (bicubic upsampling, as torch's interpolate(mode="bicubic")
// exports it): per output coordinate four input taps and their weights (cubic_coeff_a; taps past
// the edge read the edge, or with exclude_outside weigh nothing and the rest are renormalized, as
// ONNX's reference); each output row the vertical sum of four rows filtered horizontally.
Result<std::unique_ptr<OpKernel>> ResizeCubicPlanes(const KernelInfo& info, const std::vector<int64_t>& in_shape, const std::vector<int64_t>& out_shape,
                                                    const std::optional<std::vector<double>>& scales, const std::string& transform) {
  const size_t rank = in_shape.size();
  if (rank < 2) return info.Bad("cubic resizing of fewer than two axes");
  for (size_t d = 0; d + 2 < rank; ++d)
    if (in_shape[d] != out_shape[d]) return info.Bad("cubic resizing of an axis other than the last two");
  const double a = info.attrs.Float("cubic_coeff_a", -0.75f);
  const bool exclude_outside = info.attrs.Int("exclude_outside", 0) != 0;
  struct Taps {
    int64_t at[4];
    float w[4];
  };
  auto axis_taps = [&](size_t d) {
    const int64_t in = in_shape[d], out = out_shape[d];
    const bool scaled = scales && scales->size() == rank && (*scales)[d] > 0;
    const double scale = scaled ? (*scales)[d] : static_cast<double>(out) / in;
    const double resized_length = scaled ? in * scale : static_cast<double>(out);
    std::vector<Taps> taps(static_cast<size_t>(out));
    for (int64_t o = 0; o < out; ++o) {
      const double x = ResizeSourceCoordinate(o, in, out, scale, resized_length, transform);
      int64_t base = static_cast<int64_t>(std::floor(x));
      double t = x - base;
      if (t == 0) t = 1, base -= 1;  // an exact tap: ONNX's reference takes the four nearest, the lower first
      const double s[4] = {1 + t, t, 1 - t, 2 - t};
      double w[4], sum = 0;
      for (int k = 0; k < 4; ++k) {
        const double d = s[k];
        w[k] = d <= 1 ? ((a + 2) * d - (a + 3)) * d * d + 1 : ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
        const int64_t i = base - 1 + k;
        if (exclude_outside && (i < 0 || i >= in)) w[k] = 0;
        sum += w[k];
      }
      for (int k = 0; k < 4; ++k) {
        taps[o].at[k] = std::clamp<int64_t>(base - 1 + k, 0, in - 1);
        taps[o].w[k] = static_cast<float>(exclude_outside && sum != 0 ? w[k] / sum : w[k]);
      }
    }
    return taps;
  };
  const std::vector<Taps> ys = axis_taps(rank - 2), xs = axis_taps(rank - 1);
  const int64_t out_h = out_shape[rank - 2], out_w = out_shape[rank - 1], in_h = in_shape[rank - 2], in_w = in_shape[rank - 1];
  const int64_t planes = Tensor::NumElements(out_shape) / std::max<int64_t>(out_h * out_w, 1);
  return MakeArena(info, [ys, xs, out_h, out_w, in_h, in_w, planes](const std::vector<const float*>& in, float* out) {
    ParallelFor(planes * out_h, std::max<int64_t>(1, 2048 / std::max<int64_t>(1, out_w)), [&](int64_t begin, int64_t end) {
      std::vector<float> filtered(static_cast<size_t>(4 * out_w));
      for (int64_t r = begin; r < end; ++r) {
        const int64_t p = r / out_h, oy = r % out_h;
        const float* src = in[0] + p * in_h * in_w;
        const Taps& ty = ys[oy];
        for (int k = 0; k < 4; ++k) {
          const float* row = src + ty.at[k] * in_w;
          float* f = filtered.data() + k * out_w;
          for (int64_t ox = 0; ox < out_w; ++ox) {
            const Taps& tx = xs[ox];
            f[ox] = tx.w[0] * row[tx.at[0]] + tx.w[1] * row[tx.at[1]] + tx.w[2] * row[tx.at[2]] + tx.w[3] * row[tx.at[3]];
          }
        }
        float* dst = out + r * out_w;
        for (int64_t ox = 0; ox < out_w; ++ox)
          dst[ox] = ty.w[0] * filtered[ox] + ty.w[1] * filtered[out_w + ox] + ty.w[2] * filtered[2 * out_w + ox] + ty.w[3] * filtered[3 * out_w + ox];
      }
    });
  });
}

// Resize (opset 11+): nearest or (multi)linear along every axis whose size changes, cubic along the
// last two, with ONNX's coordinate transformations half_pixel, pytorch_half_pixel, align_corners and
// asymmetric.
Result<std::unique_ptr<OpKernel>> Resize(const KernelInfo& info) {
  const auto& in_shape = InShape(info, 0);
  const auto& out_shape = OutShape(info);
  const std::string mode = info.attrs.String("mode", "nearest");
  const std::string transform = info.attrs.String("coordinate_transformation_mode", "half_pixel");
  const std::string nearest_mode = info.attrs.String("nearest_mode", "round_prefer_floor");
  if (mode != "nearest" && mode != "linear" && mode != "cubic") return info.Bad("mode '" + mode + "' is not supported (nearest, linear and cubic are)");
  if (transform != "half_pixel" && transform != "pytorch_half_pixel" && transform != "align_corners" && transform != "asymmetric")
    return info.Bad("coordinate_transformation_mode '" + transform + "' is not supported");
  if (in_shape.size() != out_shape.size()) return info.Bad("the output's rank differs from the input's");
  if (!info.attrs.Ints("axes").empty() || info.attrs.Int("antialias", 0) != 0) return info.Bad("the axes and antialias attributes are not supported");
  auto scales = ConstantValues(info, 2);
  if (!scales.ok()) return scales.status();
  if (mode == "cubic") return ResizeCubicPlanes(info, in_shape, out_shape, *scales, transform);
  const size_t rank = in_shape.size();
  // Per output axis and coordinate: the two input indices and the second one's weight.
  using Tap = ResizeTap;
  std::vector<std::vector<Tap>> taps(rank);
  for (size_t d = 0; d < rank; ++d) {
    const bool scaled = *scales && (**scales).size() == rank && (**scales)[d] > 0;
    taps[d] = ResizeAxisTaps(in_shape[d], out_shape[d], scaled ? (**scales)[d] : 0.0, mode, transform, nearest_mode);
  }
  std::vector<size_t> resized;  // the axes with two distinct taps somewhere
  for (size_t d = 0; d < rank; ++d)
    if (ResizeTapsBlend(taps[d])) resized.push_back(d);
  const auto in_strides = RowMajorStrides(in_shape);
  const auto out_strides = RowMajorStrides(out_shape);
  const int64_t count = Tensor::NumElements(out_shape);
  // Planes (the usual NCHW upsampling): only the last two axes change, so each output row mixes
  // two input rows, with no index arithmetic per element.
  bool planar = rank >= 2;
  for (size_t d = 0; planar && d + 2 < rank; ++d)
    for (int64_t o = 0; planar && o < out_shape[d]; ++o) planar = taps[d][o].lo == o && (taps[d][o].hi == o || taps[d][o].w == 0.f);
  if (planar) {
    const int64_t out_h = out_shape[rank - 2], out_w = out_shape[rank - 1], in_h = in_shape[rank - 2], in_w = in_shape[rank - 1];
    const int64_t planes = count / std::max<int64_t>(out_h * out_w, 1);
    const bool nearest = std::all_of(taps[rank - 2].begin(), taps[rank - 2].end(), [](const Tap& t) { return t.hi == t.lo; }) &&
                         std::all_of(taps[rank - 1].begin(), taps[rank - 1].end(), [](const Tap& t) { return t.hi == t.lo; });
    std::vector<int32_t> x_lo, x_hi, y_lo, y_hi;
    std::vector<float> x_w, y_w;
    for (const Tap& t : taps[rank - 1]) x_lo.push_back(static_cast<int32_t>(t.lo)), x_hi.push_back(static_cast<int32_t>(t.hi)), x_w.push_back(t.w);
    for (const Tap& t : taps[rank - 2]) y_lo.push_back(static_cast<int32_t>(t.lo)), y_hi.push_back(static_cast<int32_t>(t.hi)), y_w.push_back(t.w);
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, out_w));
    if (nearest) {  // each output row gathers one input row, or copies the row above when both read the same one
      return MakeArena(info, [x_lo, y_lo, out_h, out_w, in_h, in_w, planes, grain](const std::vector<const float*>& in, float* out) {
        ParallelFor(planes * out_h, grain, [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t p = r / out_h, oy = r % out_h;
            float* row = out + r * out_w;
            if (r > begin && oy > 0 && y_lo[oy] == y_lo[oy - 1]) {
              std::copy(row - out_w, row, row);
              continue;
            }
            const float* from = in[0] + (p * in_h + y_lo[oy]) * in_w;
            for (int64_t ox = 0; ox < out_w; ++ox) row[ox] = from[x_lo[ox]];
          }
        });
      });
    }
    // Bilinear: each input row a task's rows read is filtered horizontally once (two rows kept), and
    // each output row blends its two filtered rows.
    return MakeArena(info, [x_lo, x_hi, x_w, y_lo, y_hi, y_w, out_h, out_w, in_h, in_w, planes, grain](const std::vector<const float*>& in, float* out) {
      ParallelFor(planes * out_h, grain, [&](int64_t begin, int64_t end) {
        std::vector<float> buffers(static_cast<size_t>(2 * out_w));
        float* filtered[2] = {buffers.data(), buffers.data() + out_w};
        int64_t holds[2] = {-1, -1};  // the input row (plane * in_h + y) each buffer holds
        auto row_of = [&](int64_t source, int64_t keep) -> const float* {
          for (int k = 0; k < 2; ++k)
            if (holds[k] == source) return filtered[k];
          const int k = holds[0] == keep ? 1 : 0;
          const float* from = in[0] + source * in_w;
          float* f = filtered[k];
          for (int64_t ox = 0; ox < out_w; ++ox) f[ox] = (1.f - x_w[ox]) * from[x_lo[ox]] + x_w[ox] * from[x_hi[ox]];
          holds[k] = source;
          return f;
        };
        for (int64_t r = begin; r < end; ++r) {
          const int64_t p = r / out_h, oy = r % out_h;
          const int64_t lo = p * in_h + y_lo[oy], hi = p * in_h + y_hi[oy];
          const float* top = row_of(lo, -1);
          const float* bottom = row_of(hi, lo);
          const float w = y_w[oy];
          float* dst = out + r * out_w;
          for (int64_t ox = 0; ox < out_w; ++ox) dst[ox] = (1.f - w) * top[ox] + w * bottom[ox];
        }
      });
    });
  }
  return MakeArena(info, [taps, resized, in_strides, out_strides, out_shape, count, rank](const std::vector<const float*>& in, float* out) {
    std::vector<const Tap*> at(rank);
    for (int64_t i = 0; i < count; ++i) {
      int64_t base = 0;
      for (size_t d = 0; d < rank; ++d) {
        at[d] = &taps[d][(i / out_strides[d]) % out_shape[d]];
        base += at[d]->lo * in_strides[d];
      }
      // Multilinear: the weighted sum over the corners of the resized axes.
      float value = 0.f;
      for (uint32_t corner = 0; corner < (1u << resized.size()); ++corner) {
        float weight = 1.f;
        int64_t offset = base;
        for (size_t k = 0; k < resized.size(); ++k) {
          const size_t d = resized[k];
          const Tap& t = *at[d];
          if ((corner >> k) & 1u) {
            weight *= t.w;
            offset += (t.hi - t.lo) * in_strides[d];
          } else {
            weight *= 1.f - t.w;
          }
        }
        if (weight != 0.f) value += weight * in[0][offset];
      }
      out[i] = value;
    }
  });
}

Result<std::unique_ptr<OpKernel>> Clip(const KernelInfo& info) {
  auto lo = ConstantValues(info, 1), hi = ConstantValues(info, 2);
  if (!lo.ok()) return lo.status();
  if (!hi.ok()) return hi.status();
  const float min = *lo ? static_cast<float>((**lo)[0]) : -INFINITY, max = *hi ? static_cast<float>((**hi)[0]) : INFINITY;
  const int64_t count = Tensor::NumElements(OutShape(info));
  return MakeArena(info, [min, max, count](const std::vector<const float*>& in, float* out) {
    const float* x = in[0];
    for (int64_t i = 0; i < count; ++i) out[i] = std::min(std::max(x[i], min), max);
  }, true);
}

// out = f(x) elementwise, f one of engine/backends/simd/unary_float_simd.h's functions with the
// node's attributes, on the threads.
Result<std::unique_ptr<OpKernel>> SimdUnary(const KernelInfo& info) {
  const auto f = UnaryFloatFunctionOf(info.op_type, [&](const char* name, float fallback) { return info.attrs.Float(name, fallback); });
  if (!f) return info.Bad("no float32 SIMD form");
  const int64_t count = Tensor::NumElements(OutShape(info));
  return MakeArena(info, [f = *f, count](const std::vector<const float*>& in, float* out) { UnaryFloatSimd(f, in[0], out, count); }, true);
}

// PRelu: x where x >= 0, slope * x below, the slope broadcast to x (one value, or one per channel
// as torch's PReLU(num_parameters=C) exports it). A row whose slope is one value runs as LeakyRelu
// on SIMD; a slope that varies along the row, element by element.
Result<std::unique_ptr<OpKernel>> PRelu(const KernelInfo& info) {
  const auto& shape = OutShape(info);
  if (InShape(info, 0) != shape) return info.Bad("the output's shape differs from the input's");
  std::vector<int64_t> slope_shape = InShape(info, 1);
  // A 1-D slope of one value per channel (PRelu-6 and earlier, kept by the version converter)
  // applies along axis 1, as the reference takes it.
  if (slope_shape.size() == 1 && shape.size() > 2 && slope_shape[0] == shape[1] && slope_shape[0] != shape.back()) slope_shape.resize(shape.size() - 1, 1);
  if (slope_shape.size() > shape.size()) return info.Bad("the slope has a higher rank than the input");
  for (size_t k = 0; k < slope_shape.size(); ++k)
    if (const int64_t d = slope_shape[slope_shape.size() - 1 - k]; d != 1 && d != shape[shape.size() - 1 - k])
      return info.Bad("the slope does not broadcast to the input");
  const std::vector<std::vector<int64_t>> strides = {BroadcastStrides(slope_shape, shape)};
  const int64_t width = shape.empty() ? 1 : shape.back(), rows = width ? Tensor::NumElements(shape) / width : 0;
  const int64_t along = shape.empty() ? 0 : strides[0].back();  // the slope's step along a row
  return MakeArena(
      info,
      [shape, strides, width, rows, along](const std::vector<const float*>& in, float* out) {
        ParallelFor(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, width)), [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            int64_t offset = 0;
            if (!shape.empty()) BroadcastRowOffsets(r, shape, strides, &offset);
            const float* x = in[0] + r * width;
            const float* slope = in[1] + offset;
            float* y = out + r * width;
            if (along == 0) {
              UnaryFloatSimd(UnaryFloatFunction{UnaryFloatKind::kLeakyRelu, *slope, 0, 0}, x, y, width);
              continue;
            }
            for (int64_t i = 0; i < width; ++i) y[i] = x[i] < 0 ? slope[i * along] * x[i] : x[i];
          }
        });
      },
      true);
}

constexpr int64_t kRun = 64;  // CumSum: the positions after the axis one task sums

// CumSum along a constant axis, exclusive and reverse as the attributes say: each task a run of
// the positions after the axis (contiguous), summed step by step along it in double, as the
// reference sums.
Result<std::unique_ptr<OpKernel>> CumSum(const KernelInfo& info) {
  auto axis_value = ConstantValues(info, 1);
  if (!axis_value.ok()) return axis_value.status();
  if (!*axis_value || (**axis_value).size() != 1) return info.Bad("takes a constant scalar axis");
  const auto& shape = InShape(info, 0);
  const int64_t axis = PositiveAxis(static_cast<int64_t>((**axis_value)[0]), shape.size());
  if (axis < 0 || axis >= static_cast<int64_t>(shape.size())) return info.Bad("axis outside the input's rank");
  const bool exclusive = info.attrs.Int("exclusive", 0) != 0, reverse = info.attrs.Int("reverse", 0) != 0;
  int64_t inner = 1;
  for (size_t k = static_cast<size_t>(axis) + 1; k < shape.size(); ++k) inner *= shape[k];
  const int64_t dim = shape[axis], outer = dim * inner ? Tensor::NumElements(shape) / (dim * inner) : 0;
  const int64_t runs = (inner + kRun - 1) / kRun;
  return MakeArena(info, [exclusive, reverse, inner, dim, outer, runs](const std::vector<const float*>& in, float* out) {
    ParallelFor(outer * runs, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, dim * kRun)), [&](int64_t begin, int64_t end) {
      double sum[kRun];
      for (int64_t t = begin; t < end; ++t) {
        const int64_t o = t / runs, first = (t % runs) * kRun, n = std::min(kRun, inner - first);
        std::fill(sum, sum + n, 0.0);
        for (int64_t step = 0; step < dim; ++step) {
          const int64_t at = (o * dim + (reverse ? dim - 1 - step : step)) * inner + first;
          const float* x = in[0] + at;
          float* y = out + at;
          for (int64_t i = 0; i < n; ++i) {
            if (exclusive) y[i] = static_cast<float>(sum[i]);
            sum[i] += x[i];
            if (!exclusive) y[i] = static_cast<float>(sum[i]);
          }
        }
      }
    });
  });
}

// fn(o, first, count) for blocks of at most 64 of the `inner` columns of each of `outer` [dim, inner]
// blocks, on the threads: a softmax or log-sum-exp down the columns of an axis that is not the last,
// dim x 64 floats staying in the first-level cache.
template <class ColumnBlock>
void ForEachColumnBlock(int64_t outer, int64_t inner, const ColumnBlock& fn) {
  constexpr int64_t kColumns = 64;
  const int64_t blocks = (inner + kColumns - 1) / kColumns;
  ParallelFor(outer * blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t o = t / blocks, first = (t % blocks) * kColumns;
      fn(o, first, std::min(kColumns, inner - first));
    }
  });
}

// LogSoftmax (opset 13) along any axis, on Highway (softmax_rows_simd.h): over the last axis rows on
// the threads; over another (WaveNet's log-softmax over its channels) blocks of columns on the threads.
Result<std::unique_ptr<OpKernel>> LogSoftmax(const KernelInfo& info) {
  const auto& shape = OutShape(info);
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) return info.Bad("takes a tensor of rank 1 or more");
  const int64_t axis = PositiveAxis(info.attrs.Int("axis", -1), shape.size());
  if (axis < 0 || axis >= rank) return info.Bad("the axis is outside the input's rank");
  const int64_t dim = shape[axis], total = Tensor::NumElements(shape);
  if (axis == rank - 1) {
    const int64_t rows = dim ? total / dim : 0;
    return MakeArena(info, [dim, rows](const std::vector<const float*>& in, float* out) {
      SoftmaxRowsOptions options;
      options.log = true;
      ParallelFor(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, dim)), [&](int64_t begin, int64_t end) {
        SoftmaxRowsSimd(in[0] + begin * dim, out + begin * dim, end - begin, dim, dim, dim, options);
      });
    });  // not over its input: the plan would take that for an elementwise step, free of layout
  }
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d) inner *= shape[d];
  const int64_t outer = dim && inner ? total / (dim * inner) : 0;
  return MakeArena(info, [dim, inner, outer](const std::vector<const float*>& in, float* out) {
    ForEachColumnBlock(outer, inner, [&](int64_t o, int64_t first, int64_t count) {
      SoftmaxColumnsSimd(in[0] + o * dim * inner, out + o * dim * inner, dim, inner, first, count, /*log=*/true);
    });
  });
}

// ReduceLogSumExp over one block of axes (outer, reduced, inner), on Highway (softmax_rows_simd.h):
// rows on the threads where the block is the last axes, blocks of 64 columns otherwise (a Sinkhorn
// iteration's log-sum-exp over the rows and the columns of a score matrix). Axes from the attribute
// (before opset 18) or a constant input; other axes run the typed kernel.
Result<std::unique_ptr<OpKernel>> ReduceLogSumExp(const KernelInfo& info) {
  const auto& shape = InShape(info, 0);
  std::vector<int64_t> axes = info.attrs.Ints("axes", {});
  if (info.HasInput(1)) {
    auto given = ConstantValues(info, 1);
    if (!given.ok()) return given.status();
    if (!*given) return info.Bad("takes constant axes");
    axes.clear();
    for (double a : **given) axes.push_back(static_cast<int64_t>(a));
  }
  std::string why;
  const auto plan = PlanReduction(shape, axes, info.attrs.Int("keepdims", 1) != 0, info.attrs.Int("noop_with_empty_axes", 0) != 0, &why);
  if (!plan) return info.Bad(why);
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t first = rank, last = -1;
  for (int64_t k = 0; k < rank; ++k)
    if (plan->reduced[k]) first = std::min(first, k), last = k;
  if (last < 0) return info.Bad("reduces no axis");
  for (int64_t k = first; k <= last; ++k)
    if (!plan->reduced[k]) return info.Bad("reduces axes that are not one block");
  int64_t outer = 1, reduced = 1, inner = 1;
  for (int64_t k = 0; k < rank; ++k) (k < first ? outer : k <= last ? reduced : inner) *= shape[k];
  if (reduced == 0) return info.Bad("reduces an empty block");
  if (inner == 1) {
    return MakeArena(info, [outer, reduced](const std::vector<const float*>& in, float* out) {
      ParallelFor(outer, std::max<int64_t>(1, 16384 / reduced), [&](int64_t begin, int64_t end) { LogSumExpRowsSimd(in[0] + begin * reduced, end - begin, reduced, out + begin); });
    });
  }
  return MakeArena(info, [outer, reduced, inner](const std::vector<const float*>& in, float* out) {
    ForEachColumnBlock(outer, inner, [&](int64_t o, int64_t first, int64_t count) {
      LogSumExpColumnsSimd(in[0] + o * reduced * inner, reduced, inner, first, count, out + o * inner + first);
    });
  });
}

// FakeQuantizeLinear (engine/passes/fake_quant_fusion.h): QuantizeLinear's inputs, per-tensor
// scale and zero point constants, the zero point's type uint8 (or left out) or int8.
Result<std::unique_ptr<OpKernel>> FakeQuantize(const KernelInfo& info) {
  auto scale = ConstantValues(info, 1), zero = ConstantValues(info, 2);
  if (!scale.ok()) return scale.status();
  if (!zero.ok()) return zero.status();
  if (!*scale || (**scale).size() != 1 || (*zero && (**zero).size() != 1)) return info.Bad("takes a per-tensor scale and zero point");
  const bool signed8 = info.HasInput(2) && info.InputType(2) == DType::kInt8;
  if (info.HasInput(2) && !signed8 && info.InputType(2) != DType::kUInt8) return info.Bad("the zero point must be uint8 or int8");
  const float zp = *zero ? static_cast<float>((**zero)[0]) : 0.f;
  const UnaryFloatFunction f{UnaryFloatKind::kFakeQuantize, static_cast<float>((**scale)[0]), (signed8 ? -128.f : 0.f) - zp, (signed8 ? 127.f : 255.f) - zp};
  const int64_t count = Tensor::NumElements(OutShape(info));
  return MakeArena(info, [f, count](const std::vector<const float*>& in, float* out) { UnaryFloatSimd(f, in[0], out, count); }, true);
}

// Pow by one constant exponent, on the threads: squares and cubes as products (a cube in double,
// rounded once, as the reference's double pow rounds it), 0.5 as a square root, 1 and -1 as a copy
// and a reciprocal; any other exponent by std::pow.
Result<std::unique_ptr<OpKernel>> Pow(const KernelInfo& info) {
  auto exponent = ConstantValues(info, 1);
  if (!exponent.ok()) return exponent.status();
  if (!*exponent || (**exponent).size() != 1) return info.Bad("the exponent must be one constant value");
  const float e = static_cast<float>((**exponent)[0]);
  const int64_t count = Tensor::NumElements(OutShape(info));
  auto elementwise = [&info, count](auto f) {
    return MakeArena(info, [count, f](const std::vector<const float*>& in, float* out) {
      ParallelForChunks(count, 4096, [&](int64_t first, int64_t n) {
        const float* x = in[0] + first;
        float* y = out + first;
        for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
      });
    }, true);
  };
  if (e == 2.f) return elementwise([](float x) { return x * x; });  // RMSNorm's square
  if (e == 3.f) return elementwise([](float x) { return static_cast<float>(static_cast<double>(x) * x * x); });
  if (e == 1.f) return elementwise([](float x) { return x; });
  if (e == -1.f) return elementwise([](float x) { return 1.f / x; });
  if (e == 0.5f) return elementwise([](float x) { return x == 0.f ? 0.f : std::sqrt(x); });  // pow(-0, 0.5) is +0
  return elementwise([e](float x) { return std::pow(x, e); });
}

// Inference BatchNormalization as x * scale + shift per channel; `relu`: FusedBatchNormalization,
// Relu after it.
Result<std::unique_ptr<OpKernel>> BatchNorm(const KernelInfo& info, bool relu) {
  if (relu && info.attrs.String("activation", "Relu") != "Relu") return info.Bad("activation '" + info.attrs.String("activation", "") + "' is not Relu");
  const auto& shape = InShape(info, 0);
  if (shape.size() < 2) return info.Bad("the input needs a channel dimension");
  const int64_t channels = shape[1], outer = shape[0];
  const int64_t inner = outer && channels ? Tensor::NumElements(shape) / (outer * channels) : 0;
  std::vector<std::vector<double>> p;  // scale, bias, mean, variance
  for (size_t i = 1; i < 5; ++i) {
    auto values = ConstantValues(info, i);
    if (!values.ok()) return values.status();
    if (!*values || static_cast<int64_t>((*values)->size()) != channels)
      return info.Bad("scale, bias, mean and variance must be " + std::to_string(channels) + " constants");
    p.push_back(**values);
  }
  const ChannelAffine affine = BatchNormAsAffine(p[0], p[1], p[2], p[3], info.attrs.Float("epsilon", 1e-5f));
  const std::vector<float> scale(affine.scale.begin(), affine.scale.end()), shift(affine.shift.begin(), affine.shift.end());
  return MakeArena(info, [outer, channels, inner, scale, shift, relu](const std::vector<const float*>& in, float* out) {
    // The channels of every image split among the threads, each a few thousand elements at least.
    ParallelFor(outer * channels, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, inner)), [&](int64_t begin, int64_t end) {
      for (int64_t oc = begin; oc < end; ++oc) {
        const int64_t c = oc % channels;
        const float* x = in[0] + oc * inner;
        float* y = out + oc * inner;
        const float a = scale[c], b = shift[c];
        if (relu) {
          for (int64_t i = 0; i < inner; ++i) y[i] = std::max(x[i] * a + b, 0.0f);
        } else {
          for (int64_t i = 0; i < inner; ++i) y[i] = x[i] * a + b;
        }
      }
    });
  }, true);
}

Result<std::unique_ptr<OpKernel>> Copy(const KernelInfo& info) {
  const int64_t count = Tensor::NumElements(OutShape(info));
  return MakeArena(info, [count](const std::vector<const float*>& in, float* out) {
    if (out != in[0]) std::memcpy(out, in[0], count * sizeof(float));
  }, true);
}

// Dropout in inference: a copy; with training_mode a constant false, or none.
Result<std::unique_ptr<OpKernel>> InferenceDropout(const KernelInfo& info) {
  auto training = ConstantValues(info, 2);
  if (!training.ok()) return training.status();
  if (*training && !(*training)->empty() && (**training)[0] != 0) return info.Bad("training mode draws at random");
  return Copy(info);
}

Result<std::unique_ptr<OpKernel>> CastToFloat(const KernelInfo& info) {
  if (info.attrs.Int("to", 1) != 1) return info.Bad("only a cast to float32 runs in the arena");
  return Copy(info);
}

}  // namespace

void RegisterFloat32ArenaKernels(KernelRegistry* r) {
  const std::vector<DType> f32 = {DType::kFloat32};
  auto add = [&](const char* op, int since, KernelFactory make, int type_input = 0) {
    r->Add({op, since, INT_MAX, f32, type_input, std::move(make), false, "float32", StaticFloat32});
  };
  add("Transpose", 1, Transpose);
  add("Slice", 10, Slice);
  add("DepthToSpace", 1, DepthToSpace);
  add("SpaceToDepth", 1, SpaceToDepth);
  add("Concat", 4, Concat);
  r->Add({"Gather", 1, INT_MAX, f32, 0, Gather, false, "float32", StaticGather});
  add("Pad", 11, Pad);
  add("Expand", 8, Expand);
  r->Add({"Where", 9, INT_MAX, f32, 1, Where, false, "float32", StaticWhere});
  r->Add({"GatherElements", 11, INT_MAX, f32, 0, GatherElements, false, "float32", StaticGatherElements});
  add("Resize", 11, Resize);
  add("GridSample", 16, GridSample);
  add("Clip", 11, Clip);
  add("Pow", 7, Pow);
  for (const auto& [op, since] : std::vector<std::pair<const char*, int>>{
           {"Abs", 6}, {"Neg", 6}, {"Exp", 6}, {"Log", 6}, {"Sqrt", 6}, {"Reciprocal", 6}, {"Floor", 6}, {"Ceil", 6}, {"Round", 11},
           {"Sign", 9}, {"Sin", 7}, {"Cos", 7}, {"Relu", 6}, {"LeakyRelu", 6}, {"Elu", 6}, {"Selu", 6}, {"Celu", 12}, {"ThresholdedRelu", 10}, {"Shrink", 9},
           {"Sigmoid", 6}, {"HardSigmoid", 6}, {"HardSwish", 14}, {"Tanh", 6}, {"Softplus", 1}, {"Softsign", 1}})
    add(op, since, SimdUnary);
  add("FakeQuantizeLinear", 1, FakeQuantize);  // fake_quant_fusion.h
  add("LogSoftmax", 13, LogSoftmax);
  add("ReduceLogSumExp", 1, ReduceLogSumExp);
  add("PRelu", 9, PRelu);
  add("CumSum", 11, CumSum);
  add("BatchNormalization", 9, [](const KernelInfo& info) { return BatchNorm(info, false); });
  add("FusedBatchNormalization", 1, [](const KernelInfo& info) { return BatchNorm(info, true); });  // batch_norm_relu_fusion.h
  add("InstanceNormalization", 6, [](const KernelInfo& info) { return Float32GroupedNorm(info, true); });
  add("GroupNormalization", 18, [](const KernelInfo& info) { return Float32GroupedNorm(info, false); });
  add("FusedGroupNormalization", 1, [](const KernelInfo& info) { return Float32GroupedNorm(info, false); });  // group_norm_fusion.h
  add("Identity", 1, Copy);
  add("Dropout", 1, InferenceDropout);
  add("Cast", 6, CastToFloat);
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) add(op, 1, Copy);
}

}  // namespace tilebank::engine::kernels
