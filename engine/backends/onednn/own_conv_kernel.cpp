#include "engine/backends/onednn/own_conv_kernel.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include "engine/backends/onednn/onednn_common.h"

namespace tilebank::engine {

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

// Memory a run writes and no later call reads (the blocked copies of NCHW activations, a
// subclass's buffers): one buffer per thread, shared by every own convolution it runs, grown to
// the largest; `floats` of it, 64-byte aligned. Valid until the thread's next call.
float* RunScratch(size_t floats) {
  thread_local AlignedFloats scratch;
  if (scratch.size() < floats) scratch.resize(floats);
  return scratch.data();
}

size_t FloatsOf(const memory::desc& md) { return (md.get_size() / sizeof(float) + 15) / 16 * 16; }

}  // namespace

std::optional<ConvEpilogueStep> OwnEpilogueActivation(const ChainStep& op) {
  using Kind = ConvEpilogueStep::Kind;
  static const std::map<std::string, Kind> kActivations = {{"Relu", Kind::kRelu},       {"LeakyRelu", Kind::kLeakyRelu}, {"Clip", Kind::kClip},
                                                           {"Sigmoid", Kind::kSigmoid}, {"Swish", Kind::kSwish},         {"HardSwish", Kind::kHardSwish},
                                                           {"Tanh", Kind::kTanh},       {"GeluTanh", Kind::kGeluTanh},   {"Gelu", Kind::kGeluErf}};
  const auto it = op.has_operand ? kActivations.end() : kActivations.find(op.op_type);
  if (it == kActivations.end()) return std::nullopt;
  return ConvEpilogueStep{it->second, op.alpha, op.beta};  // LeakyRelu's slope, Clip's bounds
}

Status OwnConvEpilogueOf(const ConvProblem& p, const std::vector<ChainStep>& post_ops, const std::vector<int64_t>& out_shape, const std::string& who,
                         std::vector<ConvEpilogueStep>* steps, int* residual_input) {
  steps->clear();
  *residual_input = -1;
  int operand_input = p.bias ? 3 : 2;
  for (const ChainStep& op : post_ops) {
    if (op.has_operand) {
      if (op.op_type != "Add" || op.operand_shape != out_shape || *residual_input >= 0)
        return Status::InvalidInput(who + " fuses one Add of a tensor of the output's shape, not " + op.op_type + " of another");
      steps->push_back({ConvEpilogueStep::Kind::kAddResidual, 0.f, 0.f});
      *residual_input = operand_input++;
    } else if (const auto activation = OwnEpilogueActivation(op); activation && activation->kind != ConvEpilogueStep::Kind::kGeluErf) {
      steps->push_back(*activation);  // Gelu (erf) measured in products only: convolutions leave it to oneDNN
    } else {
      return Status::InvalidInput(who + " fuses Relu, LeakyRelu, Clip, Sigmoid, Swish, HardSwish, Tanh, GeluTanh and a residual Add, not " + op.op_type);
    }
  }
  return Status::Ok();
}

OwnConvKernel::OwnConvKernel(const ConvProblem& p, std::vector<int64_t> shape, int residual_input, tag inside, bool plain)
    : p_(p), shape_(std::move(shape)), residual_input_(residual_input), plain_(plain), inside_plain_(inside == tag::nchw), stream_(OneDnnCpuEngine()) {
  src_md_ = memory::desc({p.N, p.C, p.H, p.W}, dt::f32, inside);
  dst_md_ = memory::desc({p.N, p.OC, p.OH, p.OW}, dt::f32, inside);
}

// The measured path: as a model's neighbours hand them over, the source (and residual) are put in
// the policy's layout here, not in Run (NCHW for layout "plain", else the inside layout).
Status OwnConvKernel::Prepare(const std::vector<const Tensor*>& in) {
  TB_RETURN_IF_ERROR(Setup(*in[1], p_.bias ? in[2] : nullptr));
  return CatchOneDnnErrors([&] {
    handed_src_ = handed_dst_ = handed_residual_ = false;
    BindScratch();
    if (plain_) {
      measured_src_.assign(in[0]->data.begin(), in[0]->data.end());
      if (residual_input_ >= 0) measured_residual_.assign(in[residual_input_]->data.begin(), in[residual_input_]->data.end());
    } else {
      const float* src = Reordered(plain_src_, in[0]->data.data(), src_reorder_, blocked_src_);
      measured_src_.assign(src, src + src_md_.get_size() / sizeof(float));
      if (residual_input_ >= 0) {
        const float* residual = Reordered(plain_residual_, in[residual_input_]->data.data(), residual_reorder_, blocked_residual_);
        measured_residual_.assign(residual, residual + dst_md_.get_size() / sizeof(float));
      }
    }
    measured_dst_.assign((plain_ ? static_cast<size_t>(Tensor::NumElements(shape_)) : dst_md_.get_size() / sizeof(float)), 0.f);
    handed_src_ = handed_dst_ = handed_residual_ = !plain_;
    return Status::Ok();
  });
}

Status OwnConvKernel::Run() {
  std::vector<const float*> in(std::max(3, residual_input_ + 1), nullptr);
  in[0] = measured_src_.data();
  if (residual_input_ >= 0) in[residual_input_] = measured_residual_.data();
  return RunDirect(in, measured_dst_.data());
}

Status OwnConvKernel::Fetch(Tensor* out) {
  return CatchOneDnnErrors([&] {
    *out = Tensor(shape_);
    if (plain_) {
      out->data.assign(measured_dst_.begin(), measured_dst_.end());
      return Status::Ok();
    }
    const memory::desc plain_md({p_.N, p_.OC, p_.OH, p_.OW}, dt::f32, tag::nchw);
    memory blocked(dst_md_, OneDnnCpuEngine(), measured_dst_.data()), plain(plain_md, OneDnnCpuEngine(), out->data.data());
    dnnl::reorder(blocked, plain).execute(stream_, blocked, plain);
    stream_.wait();
    return Status::Ok();
  });
}

Result<bool> OwnConvKernel::BindDirect(const std::vector<std::vector<int64_t>>&, const std::vector<const Tensor*>& constants) {
  if (constants.size() < 2 || !constants[1] || (p_.bias && (constants.size() < 3 || !constants[2]))) return false;
  TB_RETURN_IF_ERROR(Setup(*constants[1], p_.bias ? constants[2] : nullptr));
  if (residual_input_ >= 0 && static_cast<size_t>(residual_input_) < constants.size() && constants[residual_input_])
    residual_constant_ = constants[residual_input_]->data;
  return true;
}

HandoverLayout OwnConvKernel::NativeLayout(int input) const {
  if (plain_) return {};
  if (input == 0) return HandoverLayoutOf(src_md_);
  if (input == -1 || input == residual_input_) return HandoverLayoutOf(dst_md_);
  return {};
}

Status OwnConvKernel::UseNativeLayouts(const std::vector<bool>& inputs, bool output) {
  handed_src_ = !inputs.empty() && inputs[0];
  handed_dst_ = output;
  handed_residual_ = residual_input_ >= 0 && static_cast<size_t>(residual_input_) < inputs.size() && inputs[residual_input_];
  if (plain_ && (handed_src_ || handed_dst_ || handed_residual_)) return Status::InvalidInput("this convolution's policy keeps its activations in NCHW");
  return Status::Ok();
}

Status OwnConvKernel::RunDirect(const std::vector<const float*>& in, float* out) {
  return CatchOneDnnErrors([&]() -> Status {
    BindScratch();
    const float* src = in[0];
    if (!handed_src_ && !inside_plain_) src = Reordered(plain_src_, src, src_reorder_, blocked_src_);
    const float* residual = nullptr;
    if (residual_input_ >= 0) {
      residual = in[residual_input_] ? in[residual_input_] : residual_constant_.data();
      if ((!handed_residual_ || !in[residual_input_]) && !inside_plain_) residual = Reordered(plain_residual_, residual, residual_reorder_, blocked_residual_);
    }
    const bool direct_dst = handed_dst_ || inside_plain_;
    float* dst = direct_dst ? out : static_cast<float*>(blocked_dst_.get_data_handle());
    TB_RETURN_IF_ERROR(Compute(src, residual, dst));
    if (!direct_dst) {
      plain_dst_.set_data_handle(out);
      dst_reorder_.execute(stream_, {{DNNL_ARG_FROM, blocked_dst_}, {DNNL_ARG_TO, plain_dst_}});
      stream_.wait();
    }
    return Status::Ok();
  });
}

std::string OwnConvKernel::Identity() const {
  return "own " + Algorithm() + "|" + HandoverLayoutOf(src_md_).key + "|" + (plain_ ? "plain" : "inside") + "|handed " + std::to_string(handed_src_) +
         std::to_string(handed_dst_) + std::to_string(handed_residual_);
}

// The subclass's packed weights, and the reorders from and to NCHW.
Status OwnConvKernel::Setup(const Tensor& weights, const Tensor* bias) {
  TB_RETURN_IF_ERROR(PackWeights(weights, bias));
  if (inside_plain_) return Status::Ok();  // nothing to reorder
  return CatchOneDnnErrors([&]() -> Status {
    const memory::desc plain_src({p_.N, p_.C, p_.H, p_.W}, dt::f32, tag::nchw), plain_dst({p_.N, p_.OC, p_.OH, p_.OW}, dt::f32, tag::nchw);
    plain_src_ = memory(plain_src, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
    plain_dst_ = memory(plain_dst, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
    blocked_src_ = memory(src_md_, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
    blocked_dst_ = memory(dst_md_, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
    src_reorder_ = dnnl::reorder(plain_src_, blocked_src_);
    dst_reorder_ = dnnl::reorder(blocked_dst_, plain_dst_);
    if (residual_input_ >= 0) {
      plain_residual_ = memory(plain_dst, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
      blocked_residual_ = memory(dst_md_, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
      residual_reorder_ = dnnl::reorder(plain_residual_, blocked_residual_);
    }
    return Status::Ok();
  });
}

// The run's buffers in this thread's scratch: the subclass's, and those of the inside-layout
// source, destination and residual this run reorders through (not handed over).
void OwnConvKernel::BindScratch() {
  const bool constant_residual = !residual_constant_.empty();
  std::vector<memory*> parts = RunBuffers();
  if (!inside_plain_) {
    for (memory* m : {handed_src_ ? nullptr : &blocked_src_, handed_dst_ ? nullptr : &blocked_dst_,
                      residual_input_ >= 0 && (!handed_residual_ || constant_residual) ? &blocked_residual_ : nullptr})
      if (m) parts.push_back(m);
  }
  size_t total = 0;
  for (memory* m : parts) total += FloatsOf(m->get_desc());
  float* at = RunScratch(total);
  for (memory* m : parts) m->set_data_handle(at), at += FloatsOf(m->get_desc());
}

// `data` (NCHW) reordered into `blocked`; its data.
const float* OwnConvKernel::Reordered(memory& plain, const float* data, dnnl::reorder& reorder, memory& blocked) {
  plain.set_data_handle(const_cast<float*>(data));
  reorder.execute(stream_, {{DNNL_ARG_FROM, plain}, {DNNL_ARG_TO, blocked}});
  stream_.wait();
  return static_cast<const float*>(blocked.get_data_handle());
}

}  // namespace tilebank::engine
