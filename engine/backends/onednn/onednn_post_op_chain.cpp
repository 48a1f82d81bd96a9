#include "engine/backends/onednn/onednn_post_op_chain.h"

#include <algorithm>
#include <cfloat>
#include <cstring>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/core/search_space.h"
#include "engine/backends/onednn/onednn_common.h"
#include "engine/core/template_catalog.h"

namespace tilebank::engine {

using dnnl::memory;

bool IsOneDnnPostOp(const std::string& op_type) {
  static const std::set<std::string> types = {"Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSwish", "Swish", "Gelu", "GeluTanh", "Add", "Mul", "Sub", "Div"};
  return types.count(op_type) > 0;
}

bool IsSumCandidate(const ChainStep& step, const std::vector<int64_t>& output_shape) {
  return step.has_operand && step.op_type == "Add" && step.operand_shape == output_shape;
}

PostOpChain::PostOpChain(std::vector<ChainStep> ops, size_t first_operand_input, const std::vector<int64_t>& output_shape)
    : ops_(std::move(ops)), first_operand_input_(first_operand_input) {
  int slots = 0;
  for (const ChainStep& op : ops_) {
    slot_of_op_.push_back(op.has_operand ? slots++ : -1);
    if (sum_slot_ < 0 && IsSumCandidate(op, output_shape)) sum_slot_ = slot_of_op_.back();
  }
}

void PostOpChain::Attach(dnnl::primitive_attr& attr, const std::function<memory::dims(const std::vector<int64_t>&)>& operand_dims) {
  if (ops_.empty()) return;
  static const std::map<std::string, dnnl::algorithm> eltwise = {
      {"Relu", dnnl::algorithm::eltwise_relu},         {"LeakyRelu", dnnl::algorithm::eltwise_relu}, {"Clip", dnnl::algorithm::eltwise_clip_v2},
      {"Sigmoid", dnnl::algorithm::eltwise_logistic}, {"Tanh", dnnl::algorithm::eltwise_tanh},      {"HardSwish", dnnl::algorithm::eltwise_hardswish},
      {"Swish", dnnl::algorithm::eltwise_swish},
      {"Gelu", dnnl::algorithm::eltwise_gelu_erf},     {"GeluTanh", dnnl::algorithm::eltwise_gelu_tanh}};
  dnnl::post_ops chain;
  mds_.assign(static_cast<size_t>(std::count_if(slot_of_op_.begin(), slot_of_op_.end(), [](int s) { return s >= 0; })), memory::desc());
  for (size_t i = 0; i < ops_.size(); ++i) {
    const ChainStep& op = ops_[i];
    const int slot = slot_of_op_[i];
    if (slot >= 0 && slot == sum_slot_) {
      chain.append_sum(1.f);
    } else if (slot >= 0) {
      const memory::dims dims = operand_dims(op.operand_shape);
      memory::dims strides(dims.size(), 1);
      for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * dims[d + 1];
      mds_[slot] = memory::desc(dims, memory::data_type::f32, strides);
      chain.append_binary(OneDnnBinaryAlgorithm(op.op_type), mds_[slot]);
    } else {
      const bool clip = op.op_type == "Clip";
      chain.append_eltwise(1.f, eltwise.at(op.op_type), clip ? std::max(op.alpha, -FLT_MAX) : op.op_type == "Swish" ? 1.f : op.alpha, clip ? std::min(op.beta, FLT_MAX) : op.beta);
    }
  }
  attr.set_post_ops(chain);
}

void PostOpChain::Bind(const std::vector<const Tensor*>& in) {
  operands_.assign(mds_.size(), memory());
  runtime_.assign(mds_.size(), false);
  sum_source_ = nullptr;
  for (size_t slot = 0; slot < mds_.size(); ++slot) {
    const size_t input = first_operand_input_ + slot;
    const Tensor* t = input < in.size() ? in[input] : nullptr;
    if (static_cast<int>(slot) == sum_slot_) {
      runtime_[slot] = !t;
      if (t) sum_constant_ = t->data, sum_source_ = sum_constant_.data();
      continue;
    }
    if (mds_[slot].is_zero()) continue;
    runtime_[slot] = !t;
    operands_[slot] = t ? MemoryFromTensor(*t, mds_[slot]) : memory(mds_[slot], OneDnnCpuEngine(), DNNL_MEMORY_NONE);
  }
}

void PostOpChain::SetRuntime(const std::vector<const float*>& in) {
  for (size_t slot = 0; slot < runtime_.size(); ++slot) {
    if (!runtime_[slot]) continue;
    const float* data = in[first_operand_input_ + slot];
    if (static_cast<int>(slot) == sum_slot_) sum_source_ = data;
    else operands_[slot].set_data_handle(const_cast<float*>(data));
  }
}

void PostOpChain::LoadResidual(void* dst, size_t bytes) const {
  if (sum_source_ && sum_source_ != dst) std::memcpy(dst, sum_source_, bytes);
}

void PostOpChain::AddArgs(std::unordered_map<int, memory>& args) const {
  for (size_t i = 0; i < ops_.size(); ++i) {
    const int slot = slot_of_op_[i];
    if (slot >= 0 && slot != sum_slot_) args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1] = operands_[slot];
  }
}

void PostOpChain::RefuseReference(const std::string& impl) const {
  if (!ops_.empty() && impl.rfind("ref", 0) == 0)
    throw dnnl::error(dnnl_unimplemented, ("only a reference kernel fuses these: " + impl).c_str());
}

}  // namespace tilebank::engine
