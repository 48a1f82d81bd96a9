// FusedGemm (tilebank's own op, written by engine/passes/dynamic_gemm_fusion.h): Y = act(A B' + bias),
// A's last dimension K and its other dimensions rows, B [K, N] ([N, K] with transB), the bias a row of
// N (optional), act one of KnownFusedActivation's. Its table: the reference (double) and oneDNN's
// matmul with B packed once (onednn_gemm_kernel.h).
#include <cmath>

#include "engine/kernels/fused_activation.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/onednn_gemm_kernel.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

Result<std::unique_ptr<OpKernel>> ReferenceFusedGemm(const KernelInfo& info) {
  const std::string activation = info.attrs.String("activation", "");
  if (!KnownFusedActivation(activation)) return info.Bad("activation '" + activation + "' is none FusedGemm knows");
  const bool trans_b = info.attrs.Int("transB", 0) != 0;
  return FunctionKernel([info, activation, trans_b](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 2 || !in[0] || !in[1] || in[0]->rank() < 1 || in[1]->rank() != 2) return info.Bad("takes A of rank 1 or more and a 2-D B");
    const TypedTensor &a = *in[0], &b = *in[1];
    const TypedTensor* bias = in.size() > 2 ? in[2] : nullptr;
    const int64_t K = a.shape.back(), N = b.shape[trans_b ? 0 : 1];
    if (b.shape[trans_b ? 1 : 0] != K) return info.Bad("A " + ShapeText(a.shape) + " and B " + ShapeText(b.shape) + " do not multiply");
    if (bias && (bias->size() != N || bias->rank() < 1 || bias->shape.back() != N)) return info.Bad("the bias " + ShapeText(bias->shape) + " is no row of " + std::to_string(N));
    const int64_t M = K ? a.size() / K : Tensor::NumElements(std::vector<int64_t>(a.shape.begin(), a.shape.end() - 1));
    std::vector<int64_t> shape(a.shape.begin(), a.shape.end() - 1);
    shape.push_back(N);
    const std::vector<double> av = AsDoubles(a), bv = AsDoubles(b);
    std::vector<double> y(static_cast<size_t>(M * N));
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double acc = bias ? bias->At(n) : 0.0;
        for (int64_t k = 0; k < K; ++k) acc += av[m * K + k] * bv[trans_b ? n * K + k : k * N + n];
        y[m * N + n] = ApplyFusedActivation(activation, acc);
      }
    (*out)[0] = FromDoubles(a.dtype, shape, y);
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> OneDnnFusedGemm(const KernelInfo& info) {
  auto reference = ReferenceFusedGemm(info);
  if (!reference.ok()) return reference.status();
  return MakeOneDnnFusedGemm(info, std::move(reference.value()));
}

}  // namespace

void RegisterFusedGemmKernels(KernelRegistry* r) {
  r->Add({"FusedGemm", 1, INT_MAX, FloatTypes(), 0, ReferenceFusedGemm});
  r->Add({"FusedGemm", 1, INT_MAX, {DType::kFloat32}, 0, OneDnnFusedGemm, false, "onednn"});
}

}  // namespace tilebank::engine::kernels
