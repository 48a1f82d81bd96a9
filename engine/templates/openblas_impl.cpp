// impl.openblas: MatMul, BatchMatMul and Gemm through OpenBLAS's cblas_sgemm (one call per batch).
#include <cblas.h>

#include <cstring>

#include "engine/gemm_problem.h"
#include "engine/templates/templates.h"

namespace tilebank::engine {

namespace {

class OpenBlasKernel : public Kernel {
 public:
  explicit OpenBlasKernel(GemmProblem p, std::vector<int64_t> out_shape) : p_(p), out_(std::move(out_shape)) {}
  Status Prepare(const std::vector<const Tensor*>& inputs) override {
    a_ = inputs[0]->data;
    b_ = inputs[1]->data;
    // Gemm's bias broadcast to [M, N] once: beta * C is the initial value sgemm accumulates onto.
    bias_.assign(p_.M * p_.N, 0.f);
    if (p_.bias != BiasShape::kNone) {
      const auto& c = inputs[2]->data;
      for (int64_t m = 0; m < p_.M; ++m)
        for (int64_t n = 0; n < p_.N; ++n)
          bias_[m * p_.N + n] = p_.bias == BiasShape::kScalar ? c[0] : p_.bias == BiasShape::kRow ? c[n] : p_.bias == BiasShape::kColumn ? c[m] : c[m * p_.N + n];
    }
    out_.data.assign(p_.batch * p_.M * p_.N, 0.f);
    return Status::Ok();
  }
  Status Run() override {
    const bool has_bias = p_.bias != BiasShape::kNone && p_.beta != 0.f;
    for (int64_t b = 0; b < p_.batch; ++b) {
      float* c = out_.data.data() + b * p_.M * p_.N;
      if (has_bias) std::memcpy(c, bias_.data(), bias_.size() * sizeof(float));
      cblas_sgemm(CblasRowMajor, p_.trans_a ? CblasTrans : CblasNoTrans, p_.trans_b ? CblasTrans : CblasNoTrans, int(p_.M),
                  int(p_.N), int(p_.K), p_.alpha, a_.data() + (p_.a_batched ? b * p_.M * p_.K : 0), int(p_.trans_a ? p_.M : p_.K),
                  b_.data() + (p_.b_batched ? b * p_.K * p_.N : 0), int(p_.trans_b ? p_.K : p_.N), has_bias ? p_.beta : 0.f, c, int(p_.N));
    }
    return Status::Ok();
  }
  Status Fetch(Tensor* output) override {
    *output = out_;
    return Status::Ok();
  }

 private:
  GemmProblem p_;
  Tensor out_;
  std::vector<float> a_, b_, bias_;
};

class OpenBlasImpl : public OpTemplate {
 public:
  const char* id() const override { return "impl.openblas"; }
  bool Implements(const std::string& op_type) const override { return IsCubeOp(op_type) && op_type != "Conv"; }
  Status SupportsInstance(const OpSpec& op) const override {
    auto p = AnalyzeGemm(op);
    return p.ok() ? Status::Ok() : p.status();
  }
  SearchSpace Space(const OpSpec&) const override { return {}; }
  Policy DefaultPolicy(const OpSpec&) const override { return MakePolicy({{"library", std::string("openblas")}}); }
  Result<std::unique_ptr<Kernel>> Build(const OpSpec& op, const Policy&) const override {
    auto p = AnalyzeGemm(op);
    if (!p.ok()) return p.status();
    return std::unique_ptr<Kernel>(new OpenBlasKernel(p.value(), op.outputs[0].shape));
  }
};

}  // namespace

const OpTemplate& OpenBlasImpl() {
  static const class OpenBlasImpl t;
  return t;
}

}  // namespace tilebank::engine
