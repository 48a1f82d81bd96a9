// The fast path of the registry's float32 Conv: oneDNN's convolution in 1, 2 or 3 spatial dims
// (grouped, dilated, padded), in the layouts oneDNN prefers for this host, the weights reordered
// once per input shape. Anything it cannot take (another rank, a oneDNN error) runs the reference
// kernel of conv_kernels.cpp, which computes the same.
#include <mutex>

#include "engine/impl/onednn_common.h"
#include "engine/kernels/conv_kernels.h"
#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine::kernels {
namespace {

using dnnl::memory;

class OneDnnConv : public OpKernel {
 public:
  OneDnnConv(KernelInfo info, std::unique_ptr<OpKernel> reference) : info_(std::move(info)), reference_(std::move(reference)) {}

  Status Compute(const KernelInputs& in, std::vector<TypedTensor>* out) const override {
    if (in.size() < 2 || !in[0] || !in[1] || in[0]->rank() < 3 || in[0]->rank() > 5 || in[1]->rank() != in[0]->rank() ||
        in[0]->dtype != DType::kFloat32 || in[1]->dtype != DType::kFloat32 || (in.size() > 2 && in[2] && in[2]->dtype != DType::kFloat32))
      return reference_->Compute(in, out);
    std::lock_guard<std::mutex> lock(mutex_);
    Status s = CatchOneDnnErrors([&]() -> Status { return Convolve(in, out); });
    if (!s.ok()) return reference_->Compute(in, out);
    return s;
  }

 private:
  struct Plan {
    std::vector<int64_t> x_shape, w_shape, y_shape;
    const void* w_data = nullptr;  // the weights the reordered copy was made from
    dnnl::convolution_forward::primitive_desc pd;
    dnnl::convolution_forward conv;
    memory weights, bias, src, dst;  // src and dst: oneDNN's layouts, when they are not row-major
    bool src_plain = true, dst_plain = true;
  };

  Status Prepare(const KernelInputs& in) const {
    const TypedTensor &x = *in[0], &w = *in[1];
    auto window = SpatialWindow::Resolve(info_, {x.shape.begin() + 2, x.shape.end()}, {w.shape.begin() + 2, w.shape.end()});
    if (!window.ok()) return window.status();
    const int64_t N = x.shape[0], C = x.shape[1], M = w.shape[0], group = info_.attrs.Int("group", 1);
    if (group < 1 || C % group || M % group || w.shape[1] != C / group) return info_.Bad("X, W and group do not agree");
    Plan p;
    p.x_shape = x.shape, p.w_shape = w.shape, p.w_data = w.bytes.data();
    p.y_shape = {N, M};
    p.y_shape.insert(p.y_shape.end(), window->out.begin(), window->out.end());
    std::vector<int64_t> w_dims = w.shape;
    if (group > 1) {
      w_dims[0] = M / group;
      w_dims.insert(w_dims.begin(), group);
    }
    memory::dims strides(window->strides.begin(), window->strides.end()), dilates, pad_l(window->pad_begin.begin(), window->pad_begin.end()),
        pad_r(window->pad_end.begin(), window->pad_end.end());
    for (int64_t d : window->dilations) dilates.push_back(d - 1);  // oneDNN counts the gaps
    auto any = [](const std::vector<int64_t>& dims) { return memory::desc(memory::dims(dims.begin(), dims.end()), memory::data_type::f32, memory::format_tag::any); };
    const bool has_bias = in.size() > 2 && in[2];
    const memory::desc bias_md = has_bias ? RowMajorDesc({M}) : memory::desc();
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, any(x.shape), any(w_dims), bias_md,
                                         any(p.y_shape), strides, dilates, pad_l, pad_r);
    dnnl::engine& engine = OneDnnCpuEngine();
    p.pd = dnnl::convolution_forward::primitive_desc(desc, engine);
    p.conv = dnnl::convolution_forward(p.pd);
    dnnl::stream stream(engine);
    memory user_w(RowMajorDesc(w_dims), engine, const_cast<std::byte*>(w.bytes.data()));
    p.weights = memory(p.pd.weights_desc(), engine);
    dnnl::reorder(user_w, p.weights).execute(stream, user_w, p.weights);
    if (has_bias) {
      p.bias = memory(bias_md, engine);
      std::memcpy(p.bias.get_data_handle(), in[2]->bytes.data(), static_cast<size_t>(M) * sizeof(float));
    }
    stream.wait();
    p.src_plain = p.pd.src_desc() == RowMajorDesc(x.shape);
    p.dst_plain = p.pd.dst_desc() == RowMajorDesc(p.y_shape);
    if (!p.src_plain) p.src = memory(p.pd.src_desc(), engine);
    if (!p.dst_plain) p.dst = memory(p.pd.dst_desc(), engine);
    plan_ = std::move(p);
    return Status::Ok();
  }

  Status Convolve(const KernelInputs& in, std::vector<TypedTensor>* out) const {
    if (!plan_ || plan_->x_shape != in[0]->shape || plan_->w_shape != in[1]->shape || plan_->w_data != in[1]->bytes.data()) {
      plan_.reset();
      TB_RETURN_IF_ERROR(Prepare(in));
    }
    Plan& p = *plan_;
    dnnl::engine& engine = OneDnnCpuEngine();
    dnnl::stream stream(engine);
    TypedTensor y(DType::kFloat32, p.y_shape);
    memory user_x(RowMajorDesc(p.x_shape), engine, const_cast<std::byte*>(in[0]->bytes.data()));
    memory user_y(RowMajorDesc(p.y_shape), engine, y.bytes.data());
    if (!p.src_plain) dnnl::reorder(user_x, p.src).execute(stream, user_x, p.src);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, p.src_plain ? user_x : p.src}, {DNNL_ARG_WEIGHTS, p.weights}, {DNNL_ARG_DST, p.dst_plain ? user_y : p.dst}};
    if (p.bias) args[DNNL_ARG_BIAS] = p.bias;
    p.conv.execute(stream, args);
    if (!p.dst_plain) dnnl::reorder(p.dst, user_y).execute(stream, p.dst, user_y);
    stream.wait();
    (*out)[0] = std::move(y);
    return Status::Ok();
  }

  KernelInfo info_;
  std::unique_ptr<OpKernel> reference_;
  mutable std::mutex mutex_;
  mutable std::optional<Plan> plan_;
};

}  // namespace

Result<std::unique_ptr<OpKernel>> MakeOneDnnConv(const KernelInfo& info, std::unique_ptr<OpKernel> reference) {
  return std::unique_ptr<OpKernel>(new OneDnnConv(info, std::move(reference)));
}

}  // namespace tilebank::engine::kernels
