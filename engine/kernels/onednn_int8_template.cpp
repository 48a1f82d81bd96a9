// int8.onednn: the QDQ fusion's QLinearConv and QLinearMatMul (engine/passes/qdq_fusion.h) on
// oneDNN's int8 convolution and matmul, as a template OPAT tunes. Its one knob, "impl", names the
// oneDNN implementation (impl_info_str: "brgconv_1x1:avx512_core_amx_int8", "jit_int8:avx512_core_vnni",
// "x64:gemm_s8u8s32:jit", ...) among those that take the op on this host; the default is oneDNN's
// own first choice. The policy reaches the registry kernel the model runs as its "onednn_impl"
// attribute (engine/kernels/onednn_qlinear_kernels.h), so a tuned choice is the one that runs.
// The kernel is timed on operands made from the description (engine/kernels/quantized_op_operands.h).
#include <map>
#include <mutex>

#include "engine/kernels/onednn_int8_template.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/onednn_qlinear_kernels.h"
#include "engine/kernels/quantized_op_operands.h"

namespace tilebank::engine {
namespace {

// The names oneDNN offers for this op here (empty when it offers none). Support, space and default
// policy all ask, for every int8 node a model binds: the answer is kept per description.
std::vector<std::string> ImplementationsFor(const OpSpec& op) {
  static std::mutex mutex;
  static std::map<std::string, std::vector<std::string>> known;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = known.find(op.canonical.text); it != known.end()) return it->second;
  }
  const auto operands = kernels::QuantizedOperands(op, {});  // x, w and the bias zeros: only their shapes matter here
  auto names = kernels::OneDnnInt8Implementations(kernels::QuantizedKernelInfo(op, ""), PointersTo(operands));
  std::vector<std::string> found = names.ok() ? *names : std::vector<std::string>{};
  std::lock_guard<std::mutex> lock(mutex);
  return known.emplace(op.canonical.text, std::move(found)).first->second;
}

// The registry's kernel for the op with one oneDNN implementation, on the runner's floats made into
// the node's operands (Prepare, untimed); Run is the kernel's Compute, as the model executor calls it.
class QuantizedOpKernel : public Kernel {
 public:
  QuantizedOpKernel(OpSpec op, std::unique_ptr<kernels::OpKernel> kernel) : op_(std::move(op)), kernel_(std::move(kernel)) {}

  Status Prepare(const std::vector<const Tensor*>& inputs) override {
    operands_ = kernels::QuantizedOperands(op_, inputs);
    pointers_ = PointersTo(operands_);
    outputs_.assign(1, TypedTensor());
    return Status::Ok();
  }
  Status Run() override { return kernel_->Compute(pointers_, &outputs_); }
  Status Fetch(Tensor* output) override {
    if (outputs_.empty() || outputs_[0].bytes.empty()) return Status::InvalidInput("the kernel has not run");
    *output = Tensor(outputs_[0].shape);
    for (int64_t i = 0; i < output->size(); ++i) output->data[i] = static_cast<float>(outputs_[0].At(i));
    return Status::Ok();
  }

 private:
  OpSpec op_;
  std::unique_ptr<kernels::OpKernel> kernel_;
  std::vector<TypedTensor> operands_, outputs_;
  kernels::KernelInputs pointers_;
};

class OneDnnInt8Impl : public OpTemplate {
 public:
  const char* id() const override { return "int8.onednn"; }
  std::vector<std::string> OpTypes() const override { return {"QLinearConv", "QLinearMatMul"}; }
  Status SupportsInstance(const OpSpec& op) const override {
    const auto eight_bit = [](const std::string& t) { return t == "uint8" || t == "int8"; };
    if (op.inputs.size() < 8 || op.outputs.empty()) return Status::InvalidInput(std::string(id()) + ": " + op.op_type + " takes 8 or 9 inputs");
    if (!eight_bit(op.inputs[0].dtype) || op.inputs[3].dtype != "int8" || !eight_bit(op.outputs[0].dtype))
      return Status::InvalidInput(std::string(id()) + ": runs 8-bit activations, int8 weights and an 8-bit result");
    if (ImplementationsFor(op).empty()) return Status::InvalidInput(std::string(id()) + ": oneDNN has no int8 implementation for this op here");
    return Status::Ok();
  }
  SearchSpace Space(const OpSpec& op) const override {
    SearchSpace space;
    KnobDomain impl{"impl", {}, TuneMode::kSchedule};
    for (auto& name : ImplementationsFor(op)) impl.values.emplace_back(std::move(name));
    if (!impl.values.empty()) space.knobs.push_back(std::move(impl));
    return space;
  }
  Policy DefaultPolicy(const OpSpec& op) const override {
    const auto names = ImplementationsFor(op);
    return MakePolicy({{"impl", names.empty() ? std::string("reference") : names.front()}});
  }
  Result<std::unique_ptr<Kernel>> Build(const OpSpec& op, const Policy& policy) const override {
    auto kernel = kernels::KernelRegistry::Default().Create(kernels::QuantizedKernelInfo(op, TextKnob(policy, "impl", "")));
    if (!kernel.ok()) return kernel.status();
    return std::unique_ptr<Kernel>(new QuantizedOpKernel(op, std::move(kernel.value())));
  }
};

}  // namespace

const OpTemplate& OneDnnInt8Template() {
  static const OneDnnInt8Impl t;
  return t;
}

}  // namespace tilebank::engine
