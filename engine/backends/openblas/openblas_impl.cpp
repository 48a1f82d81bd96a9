// impl.openblas: MatMul, BatchMatMul and Gemm through OpenBLAS's cblas_sgemm (one call per batch).
//
// OpenBLAS is opened on first use instead of linked. Its pthread build keeps its worker threads
// spinning for 2^28 cycles (about 70 ms) after every call, so on a 2-core machine whatever kernel
// is measured next ran on one core and measured 2x slower (bench/opat_bench, docs/PERFORMANCE.md).
// OPENBLAS_THREAD_TIMEOUT shortens that spin, but OpenBLAS reads it once, when it is loaded;
// opening the library here lets us set it first (a value the user set is kept).
#include <cblas.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

#include "engine/backends/library_impls.h"
#include "engine/core/gemm_problem.h"
#include "engine/backends/halide/templates.h"

namespace tilebank::engine {

namespace {

using SgemmFunction = decltype(&cblas_sgemm);

// cblas_sgemm of the shared OpenBLAS, or the reason it cannot be opened.
Result<SgemmFunction> OpenBlasSgemm() {
  static const Result<SgemmFunction> sgemm = []() -> Result<SgemmFunction> {
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", /*overwrite=*/0);  // 2^4 cycles of spinning, then sleep
    void* library = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return Status::NotFound(std::string("cannot open OpenBLAS: ") + dlerror());
    auto* function = reinterpret_cast<SgemmFunction>(dlsym(library, "cblas_sgemm"));
    if (function == nullptr) return Status::NotFound("OpenBLAS has no cblas_sgemm");
    return function;
  }();
  return sgemm;
}

class OpenBlasKernel : public Kernel {
 public:
  OpenBlasKernel(SgemmFunction sgemm, GemmProblem p, std::vector<int64_t> out_shape)
      : sgemm_(sgemm), p_(p), out_(std::move(out_shape)) {}
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
  Status Run() override { return Multiply(a_.data(), b_.data(), out_.data.data()); }
  // sgemm reads and writes row-major memory as it is: the operands are the caller's, constants
  // (and the bias, broadcast to [M, N]) are copied once.
  Result<bool> BindDirect(const std::vector<std::vector<int64_t>>& shapes, const std::vector<const Tensor*>& constants) override {
    if (p_.bias != BiasShape::kNone && (constants.size() < 3 || !constants[2])) return false;
    std::vector<Tensor> placeholders(shapes.size());
    std::vector<const Tensor*> in;
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (i < constants.size() && constants[i]) in.push_back(constants[i]);
      else in.push_back(&(placeholders[i] = Tensor(std::vector<int64_t>{1})));
    }
    TB_RETURN_IF_ERROR(Prepare(in));
    out_.data.clear();
    const_a_ = constants.size() > 0 && constants[0];
    const_b_ = constants.size() > 1 && constants[1];
    return true;
  }
  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    return Multiply(const_a_ ? a_.data() : in[0], const_b_ ? b_.data() : in[1], out);
  }
  Status Fetch(Tensor* output) override {
    *output = out_;
    return Status::Ok();
  }

 private:
  Status Multiply(const float* a, const float* bm, float* out) const {
    const bool has_bias = p_.bias != BiasShape::kNone && p_.beta != 0.f;
    for (int64_t b = 0; b < p_.batch; ++b) {
      float* c = out + b * p_.M * p_.N;
      if (has_bias) std::memcpy(c, bias_.data(), bias_.size() * sizeof(float));
      sgemm_(CblasRowMajor, p_.trans_a ? CblasTrans : CblasNoTrans, p_.trans_b ? CblasTrans : CblasNoTrans, int(p_.M), int(p_.N),
             int(p_.K), p_.alpha, a + (p_.a_batched ? b * p_.M * p_.K : 0), int(p_.trans_a ? p_.M : p_.K),
             bm + (p_.b_batched ? b * p_.K * p_.N : 0), int(p_.trans_b ? p_.K : p_.N), has_bias ? p_.beta : 0.f, c, int(p_.N));
    }
    return Status::Ok();
  }

  bool const_a_ = false, const_b_ = false;
  SgemmFunction sgemm_;
  GemmProblem p_;
  Tensor out_;
  std::vector<float> a_, b_, bias_;
};

class OpenBlasLibraryTemplate : public OpTemplate {
 public:
  const char* id() const override { return "impl.openblas"; }
  std::vector<std::string> OpTypes() const override { return {"MatMul", "Gemm", "BatchMatMul"}; }
  Status SupportsInstance(const OpSpec& op) const override {
    auto p = AnalyzeGemm(op);
    return p.ok() ? Status::Ok() : p.status();
  }
  SearchSpace Space(const OpSpec&) const override { return {}; }
  Policy DefaultPolicy(const OpSpec&) const override { return MakePolicy({{"library", std::string("openblas")}}); }
  Result<std::unique_ptr<Kernel>> Build(const OpSpec& op, const Policy&) const override {
    auto p = AnalyzeGemm(op);
    if (!p.ok()) return p.status();
    auto sgemm = OpenBlasSgemm();
    if (!sgemm.ok()) return sgemm.status();
    return std::unique_ptr<Kernel>(new OpenBlasKernel(sgemm.value(), p.value(), op.outputs[0].shape));
  }
};

}  // namespace

const OpTemplate& OpenBlasImpl() {
  static const OpenBlasLibraryTemplate t;
  return t;
}

}  // namespace tilebank::engine
