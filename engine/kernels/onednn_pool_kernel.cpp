// The fast paths of the registry's MaxPool and AveragePool:
// - float32 over [N, C, ...] of 1 to 3 spatial dimensions on the own planar pool loop
//   (engine/backends/onednn/planar_pool.h): the pools the templates do not take (3-D ones; a 3-D
//   UNet's MaxPool3d took 15 ms on the reference loops, in double, one thread);
// - MaxPool on 8-bit tensors (the QDQ fusion's pool between a DequantizeLinear and a QuantizeLinear
//   of one scale, engine/passes/qdq_fusion.h): oneDNN's max pooling over u8 or s8, read and written
//   channels-first, or channels-last where the fusion hands the tensor over so ("nhwc").
// - float32 MaxPool with its Indices output (torch.onnx's max_pool2d(return_indices=True), SegNet's
//   unpooling), any window of 1 to 3 spatial axes (dilations, ceil_mode, storage_order), on an own
//   loop over each axis's taps, planes on the threads (a SegNet-style encoder's 2x2 pool of 32 planes
//   of 256x256 took 7.6 ms on the reference).
// What none takes (dilations, ceil_mode or storage_order without Indices, windows that hold only
// padding) runs the reference kernel.
#include <algorithm>
#include <array>
#include <limits>
#include <mutex>
#include <optional>
#include <utility>

#include "engine/backends/onednn/onednn_common.h"
#include "engine/backends/onednn/planar_pool.h"
#include "engine/core/parallel_for.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/onednn_qlinear_kernels.h"
#include "engine/kernels/spatial_window.h"

namespace tilebank::engine::kernels {
namespace {

using dnnl::memory;

class FastPool : public OpKernel {
 public:
  FastPool(KernelInfo info, std::unique_ptr<OpKernel> reference, bool average)
      : info_(std::move(info)), reference_(std::move(reference)), nhwc_(info_.attrs.Int("nhwc", 0) != 0), average_(average) {
    // A float32 pool of static shape on the own loop: made once, run over the caller's buffers.
    const auto& x_shape = info_.InputShape(0);
    if (x_shape && info_.InputType(0) == DType::kFloat32 && info_.num_outputs == 1 && PlainOptions() && !nhwc_ && x_shape->size() >= 3 &&
        x_shape->size() <= 5)
      if (auto pool = PlanarPoolOf(*x_shape); pool.ok()) static_pool_.emplace(std::move(pool->first));
  }

  bool ComputeOnBuffers(const std::vector<const float*>& in, float* out) const override {
    if (!static_pool_ || in.empty() || !in[0]) return false;
    static_pool_->Run(in[0], out);
    return true;
  }

  Status Compute(const KernelInputs& in, std::vector<TypedTensor>* out) const override {
    const TypedTensor* x = in.empty() ? nullptr : in[0];
    if (x && out->size() == 2 && !average_ && x->dtype == DType::kFloat32 && x->rank() >= 3) return MaxWithIndices(in, out);
    const bool plain_options = x && out->size() == 1 && PlainOptions();
    if (plain_options && x->dtype == DType::kFloat32 && x->rank() >= 3 && x->rank() <= 5 && !nhwc_ && OwnPool(*x, out).ok()) return Status::Ok();
    const bool takes = plain_options && !average_ && (x->dtype == DType::kUInt8 || x->dtype == DType::kInt8) && x->rank() == 4;
    if (takes) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (CatchOneDnnErrors([&]() -> Status { return Pool(*x, out); }).ok()) return Status::Ok();
    }
    if (nhwc_) return info_.Bad("a channels-last 8-bit tensor that oneDNN's pooling does not take");  // the fusion marks only what it takes
    return reference_->Compute(in, out);
  }

 private:
  bool PlainOptions() const { return info_.attrs.Int("ceil_mode", 0) == 0 && info_.attrs.Int("storage_order", 0) == 0; }

  // The own loop over row-major float32 input of `x_shape`, and the output's shape; an error where a
  // window is dilated or holds only padding.
  Result<std::pair<PlanarPool, std::vector<int64_t>>> PlanarPoolOf(const std::vector<int64_t>& x_shape) const {
    auto window = SpatialWindow::Resolve(info_, {x_shape.begin() + 2, x_shape.end()}, {});
    if (!window.ok()) return window.status();
    std::vector<PoolAxisParts> axes;
    for (size_t i = 0; i < window->rank(); ++i)
      axes.push_back({window->in[i], window->out[i], window->kernel[i], window->strides[i], window->pad_begin[i], window->pad_end[i], window->dilations[i]});
    auto own = OwnPoolWindowOfAxes(!average_, average_ && info_.attrs.Int("count_include_pad", 0) != 0, axes);
    if (!own.ok()) return own.status();
    std::vector<int64_t> y_shape = {x_shape[0], x_shape[1]};
    y_shape.insert(y_shape.end(), window->out.begin(), window->out.end());
    return std::make_pair(PlanarPool(*own, x_shape[0] * x_shape[1]), std::move(y_shape));
  }

  Status OwnPool(const TypedTensor& x, std::vector<TypedTensor>* out) const {
    auto pool = PlanarPoolOf(x.shape);
    if (!pool.ok()) return pool.status();
    TypedTensor& y = (*out)[0];
    ReshapeForOverwrite(&y, DType::kFloat32, pool->second);
    pool->first.Run(x.data<float>(), y.data<float>());
    return Status::Ok();
  }

  // MaxPool's Y and Indices (each window's first maximum, numbered over the whole input, row-major
  // or column-major by storage_order; a window of padding alone gives -inf and the plane's first
  // element) over 1 to 3 spatial axes, planes on the threads; more axes run the reference.
  Status MaxWithIndices(const KernelInputs& in, std::vector<TypedTensor>* out) const {
    const TypedTensor& x = *in[0];
    if (x.rank() > 5) return reference_->Compute(in, out);
    auto window = SpatialWindow::Resolve(info_, {x.shape.begin() + 2, x.shape.end()}, {}, info_.attrs.Int("ceil_mode", 0) != 0);
    if (!window.ok()) return window.status();
    const std::array<PoolAxis, 3> axes = PoolAxes(*window);
    std::vector<int64_t> shape = {x.shape[0], x.shape[1]};
    shape.insert(shape.end(), window->out.begin(), window->out.end());
    ReshapeForOverwrite(&(*out)[0], DType::kFloat32, shape);
    ReshapeForOverwrite(&(*out)[1], DType::kInt64, shape);
    const float* xs = x.data<float>();
    float* ys = (*out)[0].data<float>();
    int64_t* is = (*out)[1].data<int64_t>();
    const bool column_major = info_.attrs.Int("storage_order", 0) != 0;
    const int64_t in_size = window->spatial_size_in, out_size = window->spatial_size_out, taps = window->kernel_size;
    ParallelFor(x.shape[0] * x.shape[1], std::max<int64_t>(1, 16384 / std::max<int64_t>(1, out_size * taps)), [=](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane)
        MaxPlaneWithIndices(axes, xs + plane * in_size, ys + plane * out_size, is + plane * out_size, plane * in_size, column_major);
    });
    return Status::Ok();
  }

  // One spatial axis of the window: sizes, and per output position the kernel positions that fall
  // inside the input, [first[o], end[o]).
  struct PoolAxis {
    int64_t in = 1, out = 1, stride = 1, pad = 0, dilation = 1;
    std::vector<int64_t> first = {0}, end = {1};
  };

  // The window's axes as three (leading ones of size 1).
  static std::array<PoolAxis, 3> PoolAxes(const SpatialWindow& sw) {
    std::array<PoolAxis, 3> axes;
    const size_t lead = 3 - sw.rank();
    for (size_t a = 0; a < sw.rank(); ++a) {
      PoolAxis& axis = axes[lead + a];
      axis = {sw.in[a], sw.out[a], sw.strides[a], sw.pad_begin[a], sw.dilations[a], {}, {}};
      for (int64_t o = 0; o < axis.out; ++o) {
        int64_t first = 0, end = 0;
        for (int64_t k = 0; k < sw.kernel[a]; ++k) {
          const int64_t i = o * axis.stride - axis.pad + k * axis.dilation;
          if (i < 0) first = k + 1;
          if (i < axis.in) end = k + 1;
        }
        axis.first.push_back(first);
        axis.end.push_back(std::max(first, end));
      }
    }
    return axes;
  }

  // One plane's maxima and their spatial offsets (plus `plane_offset`). Each output row runs its
  // windows inside the input tap by tap across the row (independent lanes the compiler vectorizes;
  // the first maximum in tap order kept as one window alone keeps it), the border windows one by one.
  static void MaxPlaneWithIndices(const std::array<PoolAxis, 3>& axes, const float* xp, float* yp, int64_t* ip, int64_t plane_offset, bool column_major) {
    const PoolAxis &ad = axes[0], &ah = axes[1], &aw = axes[2];
    const int64_t H = ah.in, W = aw.in, OW = aw.out, sw = aw.stride, pw = aw.pad, dw = aw.dilation;
    const int64_t* kw_first = aw.first.data();
    const int64_t* kw_end = aw.end.data();
    const int64_t KW = aw.out > 0 ? *std::max_element(aw.end.begin(), aw.end.end()) : 0;
    int64_t lo = 0;  // [lo, hi): the outputs whose windows hold every kernel position along W
    while (lo < OW && (kw_first[lo] != 0 || kw_end[lo] != KW)) ++lo;
    int64_t hi = lo;
    while (hi < OW && kw_first[hi] == 0 && kw_end[hi] == KW) ++hi;
    for (int64_t od = 0; od < ad.out; ++od) {
      const int64_t kd0 = ad.first[od], kd1 = ad.end[od], id0 = od * ad.stride - ad.pad;
      for (int64_t oh = 0; oh < ah.out; ++oh) {
        const int64_t kh0 = ah.first[oh], kh1 = ah.end[oh], ih0 = oh * ah.stride - ah.pad;
        float* __restrict yr = yp + (od * ah.out + oh) * OW;
        int64_t* __restrict ir = ip + (od * ah.out + oh) * OW;
        auto one = [&](int64_t ow) {
          const int64_t kw0 = kw_first[ow], kw1 = kw_end[ow], iw0 = ow * sw - pw;
          float best = -std::numeric_limits<float>::infinity();
          int64_t arg = -1;
          for (int64_t kd = kd0; kd < kd1; ++kd)
            for (int64_t kh = kh0; kh < kh1; ++kh) {
              const int64_t row = ((id0 + kd * ad.dilation) * H + ih0 + kh * ah.dilation) * W + iw0;
              for (int64_t kw = kw0; kw < kw1; ++kw) {
                const int64_t at = row + kw * dw;
                const bool take = arg < 0 || xp[at] > best;
                best = take ? xp[at] : best;
                arg = take ? at : arg;
              }
            }
          yr[ow] = best;
          ir[ow] = arg;
        };
        for (int64_t ow = 0; ow < lo; ++ow) one(ow);
        for (int64_t ow = hi; ow < OW; ++ow) one(ow);
        if (kd0 >= kd1 || kh0 >= kh1 || KW == 0) {  // rows of padding alone
          for (int64_t ow = lo; ow < hi; ++ow) yr[ow] = -std::numeric_limits<float>::infinity(), ir[ow] = -1;
        } else {
          bool first = true;
          for (int64_t kd = kd0; kd < kd1; ++kd)
            for (int64_t kh = kh0; kh < kh1; ++kh) {
              const int64_t row = ((id0 + kd * ad.dilation) * H + ih0 + kh * ah.dilation) * W - pw;
              for (int64_t kw = 0; kw < KW; ++kw, first = false) {
                const int64_t base = row + kw * dw;
                if (first) {
                  for (int64_t ow = lo; ow < hi; ++ow) yr[ow] = xp[base + ow * sw], ir[ow] = base + ow * sw;
                } else {
                  for (int64_t ow = lo; ow < hi; ++ow) {
                    const float v = xp[base + ow * sw];
                    const bool take = v > yr[ow];
                    yr[ow] = take ? v : yr[ow];
                    ir[ow] = take ? base + ow * sw : ir[ow];
                  }
                }
              }
            }
        }
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t arg = ir[ow];
          if (arg < 0) arg = 0;
          else if (column_major) arg = arg / (H * W) + ad.in * (arg / W % H + H * (arg % W));
          ir[ow] = plane_offset + arg;
        }
      }
    }
  }

  struct Plan {
    std::vector<int64_t> x_shape, y_shape;
    DType type;
    memory::desc src, dst;  // 8-bit, channels-first or channels-last
    dnnl::pooling_forward pool;
  };

  Status Prepare(const TypedTensor& x) const {
    auto window = SpatialWindow::Resolve(info_, {x.shape.begin() + 2, x.shape.end()}, {});
    if (!window.ok()) return window.status();
    for (int64_t d : window->dilations)
      if (d != 1) return Status::Refused("dilated pooling");
    Plan p;
    p.x_shape = x.shape, p.type = x.dtype;
    p.y_shape = {x.shape[0], x.shape[1], window->out[0], window->out[1]};
    const auto dt = x.dtype == DType::kUInt8 ? memory::data_type::u8 : memory::data_type::s8;
    const auto tag = nhwc_ ? memory::format_tag::nhwc : memory::format_tag::nchw;
    p.src = memory::desc(memory::dims(p.x_shape.begin(), p.x_shape.end()), dt, tag);
    p.dst = memory::desc(memory::dims(p.y_shape.begin(), p.y_shape.end()), dt, tag);
    dnnl::pooling_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max, p.src, p.dst,
                                     memory::dims(window->strides.begin(), window->strides.end()), memory::dims(window->kernel.begin(), window->kernel.end()),
                                     memory::dims(window->pad_begin.begin(), window->pad_begin.end()),
                                     memory::dims(window->pad_end.begin(), window->pad_end.end()));
    dnnl::pooling_forward::primitive_desc pd(desc, OneDnnCpuEngine());
    TB_RETURN_IF_ERROR(RefuseReference(pd));
    p.pool = dnnl::pooling_forward(pd);
    plan_ = std::move(p);
    return Status::Ok();
  }

  Status Pool(const TypedTensor& x, std::vector<TypedTensor>* out) const {
    if (!plan_ || plan_->x_shape != x.shape || plan_->type != x.dtype) {
      plan_.reset();
      TB_RETURN_IF_ERROR(Prepare(x));
    }
    const Plan& p = *plan_;
    TypedTensor& y = (*out)[0];
    ReshapeForOverwrite(&y, p.type, p.y_shape);
    dnnl::engine& engine = OneDnnCpuEngine();
    memory src(p.src, engine, const_cast<std::byte*>(x.bytes.data()));
    memory dst(p.dst, engine, y.bytes.data());
    dnnl::stream stream(engine);
    ExecuteAndWait(p.pool, stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    return Status::Ok();
  }

  KernelInfo info_;
  std::unique_ptr<OpKernel> reference_;
  std::optional<PlanarPool> static_pool_;  // see the constructor
  bool nhwc_;
  bool average_;  // AveragePool (float32 only); else MaxPool
  mutable std::mutex mutex_;
  mutable std::optional<Plan> plan_;
};

}  // namespace

std::unique_ptr<OpKernel> WrapFastPool(const KernelInfo& info, std::unique_ptr<OpKernel> reference, bool average) {
  return std::make_unique<FastPool>(info, std::move(reference), average);
}

}  // namespace tilebank::engine::kernels
