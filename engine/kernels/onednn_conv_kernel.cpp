// The fast path of the registry's float32 Conv, FusedConv and ConvTranspose: oneDNN's convolution and
// deconvolution in 1, 2 or 3 spatial dims (grouped, dilated, padded), the convolution in the layouts
// oneDNN prefers for this host or row-major (whichever ran faster with the reorders, timed once), the deconvolution on row-major activations where oneDNN has a
// kernel for them, the weights reordered once per input shape. Anything it cannot take (another rank,
// a oneDNN error such as ConvTranspose's output_padding beyond its pads) runs the reference kernel
// of conv_kernels.cpp, which computes the same. FusedConv's residual and activation are the
// convolution's post-ops (sum, then eltwise).
#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>

#include "engine/backends/measured_choice_cache.h"
#include "engine/core/run_queue_watch.h"
#include "engine/backends/onednn/call_scratch.h"
#include "engine/backends/onednn/caller_scratchpad.h"
#include "engine/backends/onednn/onednn_common.h"
#include "engine/core/sample_stats.h"
#include "engine/kernels/conv_kernels.h"
#include "engine/kernels/fused_activation.h"
#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine::kernels {
namespace {

using dnnl::memory;

class OneDnnConv : public OpKernel {
 public:
  OneDnnConv(KernelInfo info, std::unique_ptr<OpKernel> reference, bool transposed)
      : info_(std::move(info)), reference_(std::move(reference)), transposed_(transposed), activation_(info_.attrs.String("activation", "")) {
    // Constant weights under a source of static shape: the packed copy Prepare makes serves every
    // run, whatever data the weights' tensor holds later.
    const bool static_source = !info_.input_shapes.empty() && info_.input_shapes[0].has_value();
    holds_weights_ = static_source && Constant(1);
  }

  // The weights, and a constant bias (copied at Prepare), once prepared.
  bool HoldsConstantInput(int k) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return holds_weights_ && plan_.has_value() && (k == 1 || (k == 2 && plan_->bias && Constant(2)));
  }

  // The weights packed at load, one layer at a time, so that the caller may free its copy before
  // the next layer's is packed (Prepare reads the source's shape only).
  void PrepareAhead(const KernelInputs& in) const override {
    if (!holds_weights_ || !RunsOnOneDnn(in)) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!CatchOneDnnErrors([&]() -> Status { return Prepare(in); }).ok()) plan_.reset();
  }

  // Where the weights were packed for the node's static shapes: the plan over the caller's buffers
  // (a bias computed at run time read from its own). A constant residual takes Compute.
  bool ComputeOnBuffers(const std::vector<const float*>& in, float* out) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!holds_weights_ || !plan_ || in.size() < 2 || !in[0]) return false;
    const float* z = in.size() > 3 ? in[3] : nullptr;
    const float* bias = in.size() > 2 && !Constant(2) ? in[2] : nullptr;
    if (plan_->residual != (z != nullptr)) return false;
    return CatchOneDnnErrors([&]() -> Status {
             RunPlan(in[0], z, out, bias);
             return Status::Ok();
           })
        .ok();
  }

  Status Compute(const KernelInputs& in, std::vector<TypedTensor>* out) const override {
    if (!RunsOnOneDnn(in)) return reference_->Compute(in, out);
    std::lock_guard<std::mutex> lock(mutex_);
    Status s = CatchOneDnnErrors([&]() -> Status { return Convolve(in, out); });
    if (s.ok()) return s;
    plan_.reset();  // not held: HoldsConstantInput says so only after a run on the packed copy
    if (in[1]->bytes.empty() && in[1]->size() > 0) return info_.Bad("its weights were released after a run that no longer succeeds");
    return reference_->Compute(in, out);
  }

 private:
  struct Plan {
    std::vector<int64_t> x_shape, w_shape, y_shape;
    const void* w_data = nullptr;  // the weights the reordered copy was made from
    dnnl::primitive conv;
    memory weights, bias, src, dst;  // src and dst: oneDNN's layouts, when they are not row-major; in CallScratch, placed per call
    bool src_plain = true, dst_plain = true;
    // Made once: a reorder made per call cost more than it moved (DCGAN: 40-70 us for 64-256 KiB).
    dnnl::reorder src_in, dst_out, residual_in;  // row-major to src, dst to row-major, row-major to dst
    dnnl::stream stream;
    CallerScratchpad scratchpad;
    bool residual = false;  // FusedConv's input 3, added by the sum post-op: written into dst first
    memory::desc user_w_md;  // W as ONNX lays it out, in oneDNN's dims (weights computed at run time are packed from it per call)
  };

  static dnnl::reorder PlainReorder(const memory::desc& from, const memory::desc& to) {
    dnnl::engine& engine = OneDnnCpuEngine();
    return dnnl::reorder(dnnl::reorder::primitive_desc(engine, from, engine, to));
  }
  bool Constant(size_t k) const { return k < info_.constant_input.size() && info_.constant_input[k]; }
  // FusedConv's residual input (added before the activation), or null.
  static const TypedTensor* Residual(const KernelInputs& in) { return in.size() > 3 ? in[3] : nullptr; }
  // Float32 tensors of rank 3 to 5: what oneDNN runs; anything else goes to the reference kernel.
  static bool RunsOnOneDnn(const KernelInputs& in) {
    return in.size() >= 2 && in[0] && in[1] && in[0]->rank() >= 3 && in[0]->rank() <= 5 && in[1]->rank() == in[0]->rank() &&
           in[0]->dtype == DType::kFloat32 && in[1]->dtype == DType::kFloat32 && (in.size() <= 2 || !in[2] || in[2]->dtype == DType::kFloat32) &&
           (!Residual(in) || Residual(in)->dtype == DType::kFloat32);
  }

  // The post-ops: the residual's sum, then the activation. The scratchpad is the running thread's
  // (caller_scratchpad.h), shared with the impl.onednn kernels', not a pool of oneDNN's own beside it
  // (a deconvolution's GEMM columns: 1.7 MiB for Demucs's).
  dnnl::primitive_attr PostOps(bool residual) const {
    dnnl::post_ops ops;
    if (residual) ops.append_sum(1.0f);
    AppendFusedActivation(activation_, &ops);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    UseCallerScratchpad(&attr);
    return attr;
  }

  // What the two primitives take: the output's shape, the window and W as oneDNN's weights (grouped:
  // [G, out/G, in/G, k...]) with the strides ONNX's layout has in those dims.
  struct Geometry {
    std::vector<int64_t> y_shape, w_dims, w_strides;
    memory::dims strides, dilates, pad_l, pad_r;
  };

  // Conv: W is [M, C/G, k...], already oneDNN's order.
  Result<Geometry> ConvGeometry(const TypedTensor& x, const TypedTensor& w) const {
    auto window = SpatialWindow::Resolve(info_, {x.shape.begin() + 2, x.shape.end()}, {w.shape.begin() + 2, w.shape.end()});
    if (!window.ok()) return window.status();
    const int64_t N = x.shape[0], C = x.shape[1], M = w.shape[0], group = info_.attrs.Int("group", 1);
    if (group < 1 || C % group || M % group || w.shape[1] != C / group) return info_.Bad("X, W and group do not agree");
    Geometry g;
    g.y_shape = {N, M};
    g.y_shape.insert(g.y_shape.end(), window->out.begin(), window->out.end());
    g.w_dims = w.shape;
    if (group > 1) {
      g.w_dims[0] = M / group;
      g.w_dims.insert(g.w_dims.begin(), group);
    }
    g.w_strides = Strides(g.w_dims);
    g.strides.assign(window->strides.begin(), window->strides.end());
    for (int64_t d : window->dilations) g.dilates.push_back(d - 1);  // oneDNN counts the gaps
    g.pad_l.assign(window->pad_begin.begin(), window->pad_begin.end());
    g.pad_r.assign(window->pad_end.begin(), window->pad_end.end());
    return g;
  }

  // ConvTranspose: W is [C, M/G, k...], so oneDNN's [G, M/G, C/G, k...] reads it with the in and
  // out strides swapped. oneDNN's right pads are what makes its output ONNX's size (output_padding
  // and output_shape folded in).
  Result<Geometry> DeconvGeometry(const TypedTensor& x, const TypedTensor& w) const {
    const std::vector<int64_t> in(x.shape.begin() + 2, x.shape.end());
    auto window = ResolveTransposed(info_, in, {w.shape.begin() + 2, w.shape.end()});
    if (!window.ok()) return window.status();
    const int64_t N = x.shape[0], C = x.shape[1], group = info_.attrs.Int("group", 1);
    if (group < 1 || C % group || w.shape[0] != C) return info_.Bad("X, W and group do not agree");
    const int64_t Mg = w.shape[1], Cg = C / group;
    const size_t n = in.size();
    const std::vector<int64_t> kernel(w.shape.begin() + 2, w.shape.end());
    const int64_t K = Tensor::NumElements(kernel);
    Geometry g;
    g.y_shape = {N, Mg * group};
    g.y_shape.insert(g.y_shape.end(), window->out.begin(), window->out.end());
    g.w_dims = {group, Mg, Cg};
    g.w_strides = {Cg * Mg * K, K, Mg * K};
    g.w_dims.insert(g.w_dims.end(), kernel.begin(), kernel.end());
    const std::vector<int64_t> spatial = Strides(kernel);
    g.w_strides.insert(g.w_strides.end(), spatial.begin(), spatial.end());
    if (group == 1) {
      g.w_dims.erase(g.w_dims.begin());
      g.w_strides.erase(g.w_strides.begin());
    }
    for (size_t d = 0; d < n; ++d) {
      const int64_t extent = window->dilations[d] * (kernel[d] - 1) + 1;
      g.strides.push_back(window->strides[d]);
      g.dilates.push_back(window->dilations[d] - 1);
      g.pad_l.push_back(window->pads[d]);
      g.pad_r.push_back(window->strides[d] * (in[d] - 1) + extent - window->pads[d] - window->out[d]);
    }
    return g;
  }

  Status Prepare(const KernelInputs& in) const {
    const TypedTensor &x = *in[0], &w = *in[1];
    auto geometry = transposed_ ? DeconvGeometry(x, w) : ConvGeometry(x, w);
    if (!geometry.ok()) return geometry.status();
    const Geometry& g = *geometry;
    Plan p;
    p.x_shape = x.shape, p.w_shape = w.shape, p.w_data = w.bytes.data(), p.y_shape = g.y_shape;
    p.residual = Residual(in) != nullptr;
    if (p.residual && Residual(in)->shape != g.y_shape) return info_.Bad("the residual " + ShapeText(Residual(in)->shape) + " is not the output's shape");
    const dnnl::primitive_attr attr = PostOps(p.residual);
    const int64_t M = g.y_shape[1];
    auto any = [](const std::vector<int64_t>& dims) { return memory::desc(memory::dims(dims.begin(), dims.end()), memory::data_type::f32, memory::format_tag::any); };
    const bool has_bias = in.size() > 2 && in[2];
    const memory::desc bias_md = has_bias ? RowMajorDesc({M}) : memory::desc();
    dnnl::engine& engine = OneDnnCpuEngine();
    memory::desc src_md, weights_md, dst_md;
    if (transposed_) {
      // Row-major activations first: the kernel takes and gives them so, and the reorders around a
      // blocked deconvolution cost more than it gains (UNet's 2x2 upsampling: 0.78 against 0.57 ms);
      // oneDNN's choice when it has only a reference implementation for them.
      dnnl::primitive_attr own_scratchpad;  // no post-ops
      UseCallerScratchpad(&own_scratchpad);
      auto deconvolution = [&](const memory::desc& src, const memory::desc& dst) {
        return dnnl::deconvolution_forward::primitive_desc(
            dnnl::deconvolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, src, any(g.w_dims),
                                              bias_md, dst, g.strides, g.dilates, g.pad_l, g.pad_r),
            own_scratchpad, engine);
      };
      dnnl::deconvolution_forward::primitive_desc pd = deconvolution(RowMajorDesc(x.shape), RowMajorDesc(g.y_shape));
      if (std::string(pd.impl_info_str()).find("ref") != std::string::npos) {
        pd = deconvolution(any(x.shape), any(g.y_shape));
      } else {
        // ...but a DCGAN's 4x4 stride-2 layers run 1.7-1.9x faster blocked, reorders and all
        // (512 -> 256 channels at 4x4: 0.61 against 0.33 ms), and its last (64 -> 3) 2x slower:
        // the two timed once per instance and host, and remembered.
        dnnl::deconvolution_forward::primitive_desc blocked = deconvolution(any(x.shape), any(g.y_shape));
        if ((blocked.src_desc() != RowMajorDesc(x.shape) || blocked.dst_desc() != RowMajorDesc(g.y_shape)) &&
            !PlainIsFaster<dnnl::deconvolution_forward>("registry deconv layout v3", blocked, pd, x.shape, g, has_bias, false))
          pd = blocked;
      }
      p.conv = dnnl::deconvolution_forward(pd);
      p.scratchpad.Describe(pd.scratchpad_desc());
      src_md = pd.src_desc(), weights_md = pd.weights_desc(), dst_md = pd.dst_desc();
    } else {
      auto convolution = [&](const memory::desc& src, const memory::desc& dst) {
        return dnnl::convolution_forward::primitive_desc(
            dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, any(g.w_dims), bias_md, dst,
                                            g.strides, g.dilates, g.pad_l, g.pad_r),
            attr, engine);
      };
      dnnl::convolution_forward::primitive_desc pd = convolution(any(x.shape), any(g.y_shape));
      // oneDNN's preferred layouts cost two reorders a call here (the registry hands tensors over
      // row-major): against its row-major kernel, when it has one, timed once per instance and host
      // and remembered (a TCN's Conv1d: the reorders took as long as the convolution).
      if (pd.src_desc() != RowMajorDesc(x.shape) || pd.dst_desc() != RowMajorDesc(g.y_shape)) {
        try {
          dnnl::convolution_forward::primitive_desc plain = convolution(RowMajorDesc(x.shape), RowMajorDesc(g.y_shape));
          if (std::string(plain.impl_info_str()).find("ref") == std::string::npos &&
              PlainIsFaster<dnnl::convolution_forward>("registry conv layout v3", pd, plain, x.shape, g, has_bias, p.residual))
            pd = plain;
        } catch (const dnnl::error&) {  // no row-major kernel: the preferred layouts
        }
      }
      p.conv = dnnl::convolution_forward(pd);
      p.scratchpad.Describe(pd.scratchpad_desc());
      src_md = pd.src_desc(), weights_md = pd.weights_desc(), dst_md = pd.dst_desc();
    }
    dnnl::stream stream(engine);
    p.user_w_md = memory::desc(memory::dims(g.w_dims.begin(), g.w_dims.end()), memory::data_type::f32, memory::dims(g.w_strides.begin(), g.w_strides.end()));
    memory user_w(p.user_w_md, engine, const_cast<std::byte*>(w.bytes.data()));
    p.weights = memory(weights_md, engine);
    dnnl::reorder(user_w, p.weights).execute(stream, user_w, p.weights);
    if (has_bias && Constant(2)) {  // a bias computed at run time is read at each call (RunPlan)
      p.bias = memory(bias_md, engine);
      std::memcpy(p.bias.get_data_handle(), in[2]->bytes.data(), static_cast<size_t>(M) * sizeof(float));
    }
    stream.wait();
    p.src_plain = src_md == RowMajorDesc(x.shape);
    p.dst_plain = dst_md == RowMajorDesc(p.y_shape);
    if (!p.src_plain) p.src = memory(src_md, engine, DNNL_MEMORY_NONE), p.src_in = PlainReorder(RowMajorDesc(x.shape), src_md);
    if (!p.dst_plain) {
      p.dst = memory(dst_md, engine, DNNL_MEMORY_NONE), p.dst_out = PlainReorder(dst_md, RowMajorDesc(p.y_shape));
      if (p.residual) p.residual_in = PlainReorder(RowMajorDesc(p.y_shape), dst_md);
    }
    p.stream = dnnl::stream(engine);
    plan_ = std::move(p);
    return Status::Ok();
  }

  // Whether `plain` (row-major activations) runs faster than `preferred` with its two reorders, on
  // zeros: remembered per instance and host (engine/backends/measured_choice_cache.h).
  template <class Primitive>
  bool PlainIsFaster(const char* kind, const typename Primitive::primitive_desc& preferred, const typename Primitive::primitive_desc& plain,
                     const std::vector<int64_t>& x_shape, const Geometry& g, bool has_bias, bool residual) const {
    std::string key = std::string(kind) + "|x";
    for (int64_t d : x_shape) key += "," + std::to_string(d);
    key += "|w";
    for (int64_t d : g.w_dims) key += "," + std::to_string(d);
    for (const memory::dims* v : {&g.strides, &g.dilates, &g.pad_l, &g.pad_r}) {
      key += "|";
      for (int64_t d : *v) key += std::to_string(d) + ",";
    }
    key += has_bias ? "|bias" : "|";
    if (residual || !activation_.empty()) key += "|post " + std::string(residual ? "sum," : "") + activation_;
    if (const auto known = RecallMeasuredChoice(key)) return *known == "plain";
    dnnl::engine& engine = OneDnnCpuEngine();
    dnnl::stream stream(engine);
    const memory::desc user_x = RowMajorDesc(x_shape), user_y = RowMajorDesc(g.y_shape);
    memory x(user_x, engine), y(user_y, engine);
    std::memset(x.get_data_handle(), 0, user_x.get_size());
    std::memset(y.get_data_handle(), 0, user_y.get_size());  // what a sum post-op reads
    // One call of the primitive as the plan runs it (its reorders made once), on zeros.
    auto way = [&](const typename Primitive::primitive_desc& pd) -> std::function<bool()> {
      Primitive conv(pd);
      memory w(pd.weights_desc(), engine), b(pd.bias_desc(), engine), src = x, dst = y;
      std::memset(w.get_data_handle(), 0, pd.weights_desc().get_size());
      if (has_bias) std::memset(b.get_data_handle(), 0, pd.bias_desc().get_size());
      const bool reorder_src = pd.src_desc() != user_x, reorder_dst = pd.dst_desc() != user_y;
      if (reorder_src) src = memory(pd.src_desc(), engine);
      if (reorder_dst) dst = memory(pd.dst_desc(), engine);
      if (reorder_dst) std::memset(dst.get_data_handle(), 0, pd.dst_desc().get_size());
      memory z(user_y, engine);  // the residual, written into dst before each call as Convolve does
      if (residual) std::memset(z.get_data_handle(), 0, user_y.get_size());
      std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, dst}};
      if (has_bias) args[DNNL_ARG_BIAS] = b;
      CallerScratchpad scratchpad;
      scratchpad.Describe(pd.scratchpad_desc());
      dnnl::reorder src_in, residual_in, dst_out;  // as the plan makes them: once
      if (reorder_src) src_in = PlainReorder(user_x, pd.src_desc());
      if (reorder_dst) dst_out = PlainReorder(pd.dst_desc(), user_y);
      if (reorder_dst && residual) residual_in = PlainReorder(user_y, pd.dst_desc());
      return [=, &stream, &x, &y]() mutable {
        if (reorder_src) src_in.execute(stream, x, src);
        if (residual && reorder_dst) residual_in.execute(stream, z, dst);
        if (residual && !reorder_dst) std::memcpy(dst.get_data_handle(), z.get_data_handle(), user_y.get_size());
        scratchpad.AddTo(&args);
        conv.execute(stream, args);
        if (reorder_dst) dst_out.execute(stream, dst, y);
        stream.wait();
        return true;
      };
    };
    const RunQueueWatch watch;
    const std::vector<double> fastest = FastestOfAlternated(3, 4, 1, {way(plain), way(preferred)});
    const bool faster = fastest[0] < fastest[1];
    RememberMeasuredChoice(key, faster ? "plain" : "preferred", &watch);
    return faster;
  }

  Status Convolve(const KernelInputs& in, std::vector<TypedTensor>* out) const {
    if (!plan_ || plan_->x_shape != in[0]->shape || plan_->w_shape != in[1]->shape || (!holds_weights_ && plan_->w_data != in[1]->bytes.data()) ||
        plan_->residual != (Residual(in) != nullptr)) {
      plan_.reset();
      TB_RETURN_IF_ERROR(Prepare(in));
    }
    if (!Constant(1)) {  // weights computed at run time, perhaps into the same memory as last run's: packed again
      Plan& p = *plan_;
      memory user_w(p.user_w_md, OneDnnCpuEngine(), const_cast<std::byte*>(in[1]->bytes.data()));
      dnnl::reorder(user_w, p.weights).execute(p.stream, user_w, p.weights);
    }
    TypedTensor& y = (*out)[0];
    ReshapeForOverwrite(&y, DType::kFloat32, plan_->y_shape);  // last run's buffer: nothing allocated or cleared
    const TypedTensor* z = Residual(in);
    if (z && z->shape != plan_->y_shape) return info_.Bad("the residual " + ShapeText(z->shape) + " is not the output's shape");
    const bool runtime_bias = in.size() > 2 && in[2] && !Constant(2);
    RunPlan(in[0]->bytes.data(), z ? z->bytes.data() : nullptr, y.bytes.data(), runtime_bias ? in[2]->bytes.data() : nullptr);
    return Status::Ok();
  }

  // The plan's primitive over row-major x, the residual z (null without one) and y; `bias`: one
  // computed at run time ([M] floats), else the plan's constant one (if any).
  void RunPlan(const void* x, const void* z, void* y, const void* bias) const {
    Plan& p = *plan_;
    dnnl::engine& engine = OneDnnCpuEngine();
    dnnl::stream& stream = p.stream;
    memory user_x(RowMajorDesc(p.x_shape), engine, const_cast<void*>(x));
    memory user_y(RowMajorDesc(p.y_shape), engine, y);
    PlaceInCallScratch(p.src_plain ? nullptr : &p.src, p.dst_plain ? nullptr : &p.dst);
    if (!p.src_plain) p.src_in.execute(stream, user_x, p.src);
    if (z) {  // the sum post-op adds what dst holds
      if (p.dst_plain) std::memcpy(y, z, RowMajorDesc(p.y_shape).get_size());
      else {
        memory user_z(RowMajorDesc(p.y_shape), engine, const_cast<void*>(z));
        p.residual_in.execute(stream, user_z, p.dst);
      }
    }
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, p.src_plain ? user_x : p.src}, {DNNL_ARG_WEIGHTS, p.weights}, {DNNL_ARG_DST, p.dst_plain ? user_y : p.dst}};
    if (bias) args[DNNL_ARG_BIAS] = memory(RowMajorDesc({p.y_shape[1]}), engine, const_cast<void*>(bias));
    else if (p.bias) args[DNNL_ARG_BIAS] = p.bias;
    p.scratchpad.AddTo(&args);
    p.conv.execute(stream, args);
    if (!p.dst_plain) p.dst_out.execute(stream, p.dst, user_y);
    stream.wait();
  }

  KernelInfo info_;
  std::unique_ptr<OpKernel> reference_;
  bool transposed_;
  std::string activation_;  // FusedConv's ("" for Conv)
  mutable std::mutex mutex_;
  mutable std::optional<Plan> plan_;
  bool holds_weights_ = false;  // see the constructor
};

}  // namespace

Result<std::unique_ptr<OpKernel>> MakeOneDnnConv(const KernelInfo& info, std::unique_ptr<OpKernel> reference) {
  return std::unique_ptr<OpKernel>(new OneDnnConv(info, std::move(reference), false));
}

Result<std::unique_ptr<OpKernel>> MakeOneDnnConvTranspose(const KernelInfo& info, std::unique_ptr<OpKernel> reference) {
  return std::unique_ptr<OpKernel>(new OneDnnConv(info, std::move(reference), true));
}

}  // namespace tilebank::engine::kernels
