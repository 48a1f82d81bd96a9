// The fast paths of the registry's MaxPool and AveragePool:
// - float32 over [N, C, ...] of 1 to 3 spatial dimensions on the own planar pool loop
//   (engine/backends/onednn/planar_pool.h): the pools the templates do not take (3-D ones; a 3-D
//   UNet's MaxPool3d took 15 ms on the reference loops, in double, one thread);
// - MaxPool on 8-bit tensors (the QDQ fusion's pool between a DequantizeLinear and a QuantizeLinear
//   of one scale, engine/passes/qdq_fusion.h): oneDNN's max pooling over u8 or s8, read and written
//   channels-first, or channels-last where the fusion hands the tensor over so ("nhwc").
// What neither takes (a second output, dilations, ceil_mode, storage_order, windows that hold only
// padding) runs the reference kernel.
#include <mutex>

#include "engine/backends/onednn/onednn_common.h"
#include "engine/backends/onednn/planar_pool.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/onednn_qlinear_kernels.h"
#include "engine/kernels/spatial_window.h"

namespace tilebank::engine::kernels {
namespace {

using dnnl::memory;

class FastPool : public OpKernel {
 public:
  FastPool(KernelInfo info, std::unique_ptr<OpKernel> reference, bool average)
      : info_(std::move(info)), reference_(std::move(reference)), nhwc_(info_.attrs.Int("nhwc", 0) != 0), average_(average) {}

  Status Compute(const KernelInputs& in, std::vector<TypedTensor>* out) const override {
    const TypedTensor* x = in.empty() ? nullptr : in[0];
    const bool plain_options = x && out->size() == 1 && info_.attrs.Int("ceil_mode", 0) == 0 && info_.attrs.Int("storage_order", 0) == 0;
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
  // The own loop over row-major float32; an error where a window is dilated or holds only padding.
  Status OwnPool(const TypedTensor& x, std::vector<TypedTensor>* out) const {
    auto window = SpatialWindow::Resolve(info_, {x.shape.begin() + 2, x.shape.end()}, {});
    if (!window.ok()) return window.status();
    std::vector<PoolAxisParts> axes;
    for (size_t i = 0; i < window->rank(); ++i)
      axes.push_back({window->in[i], window->out[i], window->kernel[i], window->strides[i], window->pad_begin[i], window->pad_end[i], window->dilations[i]});
    auto own = OwnPoolWindowOfAxes(!average_, average_ && info_.attrs.Int("count_include_pad", 0) != 0, axes);
    if (!own.ok()) return own.status();
    std::vector<int64_t> y_shape = {x.shape[0], x.shape[1]};
    y_shape.insert(y_shape.end(), window->out.begin(), window->out.end());
    TypedTensor& y = (*out)[0];
    ReshapeForOverwrite(&y, DType::kFloat32, y_shape);
    PlanarPool(*own, x.shape[0] * x.shape[1]).Run(x.data<float>(), y.data<float>());
    return Status::Ok();
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
