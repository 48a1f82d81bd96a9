#include "engine/backends/onednn/packed_gemm_kernel.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "engine/backends/onednn/own_conv_kernel.h"
#include "engine/backends/onednn/own_or_rival.h"
#include "engine/backends/onednn/row_major_sgemm.h"
#include "engine/backends/simd/packed_gemm.h"
#include "engine/core/parallel_for.h"

namespace tilebank::engine {

namespace {

// Whether a binary step's operand is one value per column, broadcast over the rows.
bool IsRowOperand(const std::vector<int64_t>& operand, int64_t N) {
  return !operand.empty() && operand.back() == N && Tensor::NumElements(operand) == N;
}

// The chain as the kernel runs it: Adds of a row before any activation go into the bias (their
// input indices in `row_inputs`), the rest into `steps`; the residual's input index, else -1.
struct ChainPlan {
  std::vector<int> row_inputs;
  std::vector<ConvEpilogueStep> steps;
  int residual_input = -1;
};

Result<ChainPlan> PlanChain(const GemmProblem& p, size_t anchor_inputs, const std::vector<ChainStep>& post_ops, const std::vector<int64_t>& out_shape) {
  ChainPlan plan;
  int input = static_cast<int>(anchor_inputs);
  for (const ChainStep& op : post_ops) {
    if (const auto activation = OwnEpilogueActivation(op)) {
      plan.steps.push_back(*activation);
      continue;
    }
    if (!op.has_operand || op.op_type != "Add")
      return Status::InvalidInput("the own packed GEMM fuses " + std::string(kOwnEpilogueActivations) + " and Adds, not " + op.op_type);
    if (plan.steps.empty() && IsRowOperand(op.operand_shape, p.N)) {
      plan.row_inputs.push_back(input++);
    } else if (op.operand_shape == out_shape && plan.residual_input < 0) {
      plan.steps.push_back({ConvEpilogueStep::Kind::kAddResidual, 0.f, 0.f});
      plan.residual_input = input++;
    } else {
      return Status::InvalidInput("the own packed GEMM fuses Adds of a row (before activations) and one of the output's shape, not of another");
    }
  }
  return plan;
}

class PackedGemmKernel : public Kernel {
 public:
  PackedGemmKernel(const GemmProblem& p, std::vector<int64_t> shape, ChainPlan plan, std::function<std::unique_ptr<Kernel>()> runtime_b_kernel)
      : p_(p), shape_(std::move(shape)), plan_(std::move(plan)), rows_(p.batch * p.M), weights_(p.K, p.N), runtime_b_kernel_(std::move(runtime_b_kernel)) {
    epilogue_.steps = plan_.steps;
    epilogue_.channels = p.N;
  }

  // Each tile reads its residual before writing it.
  int InPlaceInput() const override { return instead_ ? instead_->InPlaceInput() : plan_.residual_input; }
  bool RunsOnAnyThread() const override { return instead_ ? instead_->RunsOnAnyThread() : true; }  // own loops over ParallelFor, no scratch

  Status Prepare(const std::vector<const Tensor*>& in) override {
    std::vector<const Tensor*> constants = in;
    constants[0] = nullptr;
    if (plan_.residual_input >= 0) constants[plan_.residual_input] = nullptr;
    Bind(constants);
    a_ = in[0]->data;
    if (plan_.residual_input >= 0) residual_ = in[plan_.residual_input]->data;
    c_.assign(static_cast<size_t>(rows_ * p_.N), 0.f);
    return Status::Ok();
  }
  Status Run() override {
    Compute(a_.data(), residual_.empty() ? nullptr : residual_.data(), c_.data());
    return Status::Ok();
  }
  Status Fetch(Tensor* out) override {
    out->shape = shape_;
    out->data = c_;
    return Status::Ok();
  }
  Result<bool> BindDirect(const std::vector<std::vector<int64_t>>& shapes, const std::vector<const Tensor*>& constants) override {
    instead_.reset();
    if (runtime_b_kernel_ && !(constants.size() > 1 && constants[1])) {
      instead_ = runtime_b_kernel_();
      return instead_->BindDirect(shapes, constants);
    }
    Bind(constants);
    return true;
  }
  Status FinishLayouts() override { return instead_ ? instead_->FinishLayouts() : Status::Ok(); }
  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    if (instead_) return instead_->RunDirect(in, out);
    if (!b_constant_) FillWeights(in[1]);
    if (!runtime_rows_.empty() || gemm_c_runtime_) {
      bias_ = base_bias_;
      for (int input : runtime_rows_)
        for (int64_t n = 0; n < p_.N; ++n) bias_[static_cast<size_t>(n)] += in[input][n];
      if (gemm_c_runtime_)
        for (int64_t n = 0; n < p_.N; ++n) bias_[static_cast<size_t>(n)] += p_.beta * in[2][p_.bias == BiasShape::kScalar ? 0 : n];
    }
    const float* residual = plan_.residual_input >= 0 ? in[plan_.residual_input] : nullptr;
    Compute(in[0] ? in[0] : a_constant_.data(), residual || plan_.residual_input < 0 ? residual : residual_constant_.data(), out);
    return Status::Ok();
  }
  std::string Identity() const override {
    if (instead_) return instead_->Identity();
    std::string id = "own packed GEMM, panels of " + std::to_string(weights_.panel());
    for (const ConvEpilogueStep& s : plan_.steps) id += "," + std::to_string(static_cast<int>(s.kind));
    return id;
  }

 private:
  // `constants[i]`: input i's value where it never changes, else null. The weights packed (when
  // constant), the bias made of the Gemm's C and the constant rows, the run-time rows noted, a
  // constant A or residual kept (RunDirect is given null for them).
  void Bind(const std::vector<const Tensor*>& constants) {
    a_constant_ = constants[0] ? constants[0]->data : std::vector<float>();
    const int r = plan_.residual_input;
    residual_constant_ = r >= 0 && static_cast<size_t>(r) < constants.size() && constants[r] ? constants[r]->data : std::vector<float>();
    b_constant_ = constants.size() > 1 && constants[1];
    gemm_c_runtime_ = false;
    if (b_constant_) FillWeights(constants[1]->data.data());
    base_bias_.assign(static_cast<size_t>(weights_.padded_columns()), 0.f);
    bool has_bias = false;
    if (p_.bias != BiasShape::kNone && p_.beta != 0.f) {  // a Gemm's C: a scalar or a row (OwnPackedGemmRefuses)
      const Tensor* c = constants.size() > 2 ? constants[2] : nullptr;
      if (c) {
        for (int64_t n = 0; n < p_.N; ++n) base_bias_[static_cast<size_t>(n)] = p_.beta * c->data[p_.bias == BiasShape::kScalar ? 0 : static_cast<size_t>(n)];
      } else {
        gemm_c_runtime_ = true;
      }
      has_bias = true;
    }
    runtime_rows_.clear();
    for (int input : plan_.row_inputs) {
      has_bias = true;
      const Tensor* row = static_cast<size_t>(input) < constants.size() ? constants[input] : nullptr;
      if (!row) {
        runtime_rows_.push_back(input);
        continue;
      }
      for (int64_t n = 0; n < p_.N; ++n) base_bias_[static_cast<size_t>(n)] += row->data[static_cast<size_t>(n)];
    }
    bias_ = base_bias_;
    epilogue_.bias = has_bias ? bias_.data() : nullptr;
  }
  // B scaled by alpha (the product's scale, before the bias).
  void FillWeights(const float* b) {
    if (p_.trans_b) weights_.Fill(b, 1, p_.K, p_.alpha);
    else weights_.Fill(b, p_.N, 1, p_.alpha);
  }
  // The panels split among the threads, each share at least kSerialSgemmMacs multiply-adds.
  void Compute(const float* a, const float* residual, float* c) {
    if (epilogue_.bias) epilogue_.bias = bias_.data();
    epilogue_.residual = residual;
    const int64_t per_panel = std::max<int64_t>(1, rows_ * p_.K * weights_.panel());
    const int64_t grain = std::max<int64_t>(1, (kSerialSgemmMacs + per_panel - 1) / per_panel);
    ParallelFor(weights_.panels(), grain, [&](int64_t begin, int64_t end) { PackedGemm(PackedGemmA::Rows(a, p_.K, p_.K), rows_, weights_, epilogue_, c, p_.N, begin, end); });
  }

  GemmProblem p_;
  std::vector<int64_t> shape_;
  ChainPlan plan_;
  int64_t rows_;
  PackedGemmWeights weights_;
  ConvEpilogue epilogue_;
  bool b_constant_ = false, gemm_c_runtime_ = false;
  std::vector<float> base_bias_, bias_;  // padded to the panels; bias_ = base_bias_ + the run-time rows
  std::vector<int> runtime_rows_;        // the chain's rows added into the bias on each run (and a Gemm's C, input 2, where gemm_c_runtime_)
  std::vector<float> a_, residual_, c_;  // the measured path's
  std::vector<float> a_constant_, residual_constant_;
  std::function<std::unique_ptr<Kernel>()> runtime_b_kernel_;  // makes the kernel a run-time B is bound to, or null
  std::unique_ptr<Kernel> instead_;                            // that kernel, bound instead of this one
};

// What the own packed GEMM refuses in the product itself, its chain aside ("" when nothing).
std::string ProductRefusal(const GemmProblem& p) {
  if (p.b_batched) return "the own packed GEMM runs a B without a batch axis only";
  if (p.trans_a) return "the own packed GEMM reads A row-major, not transposed";
  if (p.bias != BiasShape::kNone && p.bias != BiasShape::kScalar && p.bias != BiasShape::kRow && p.beta != 0.f)
    return "the own packed GEMM adds a Gemm's C of one value or one row only";
  if (p.M * p.batch == 0 || p.N == 0 || p.K == 0) return "the own packed GEMM runs non-empty products only";
  return "";
}

}  // namespace

std::string OwnPackedGemmRefuses(const GemmProblem& p, const std::vector<ChainStep>& post_ops, const std::vector<int64_t>& out_shape) {
  if (std::string why = ProductRefusal(p); !why.empty()) return why;
  auto plan = PlanChain(p, 0, post_ops, out_shape);
  return plan.ok() ? "" : plan.status().message();
}

Result<std::unique_ptr<Kernel>> OwnPackedGemmKernel(const GemmProblem& p, const std::vector<int64_t>& out_shape, size_t anchor_inputs,
                                                    const std::vector<ChainStep>& post_ops, std::function<std::unique_ptr<Kernel>()> runtime_b_kernel) {
  if (std::string why = ProductRefusal(p); !why.empty()) return Status::InvalidInput(why);
  auto plan = PlanChain(p, anchor_inputs, post_ops, out_shape);  // the chain's refusal, if any
  if (!plan.ok()) return plan.status();
  return std::unique_ptr<Kernel>(new PackedGemmKernel(p, out_shape, std::move(plan.value()), std::move(runtime_b_kernel)));
}

bool OwnPackedGemmRunsFaster(const OpSpec& op, const std::vector<ChainStep>& post_ops, const std::function<std::unique_ptr<Kernel>()>& make_rival) {
  auto p = AnalyzeGemm(op);
  if (!p.ok()) return false;
  return OwnKernelRunsFaster("own packed gemm v2", op, post_ops, [&] { return OwnPackedGemmKernel(*p, op.outputs[0].shape, op.inputs.size(), post_ops); }, make_rival);
}

}  // namespace tilebank::engine
