// Where a product's constant weights sit when oneDNN reads them as they are, row-major (its
// GEMM-based matmul, all oneDNN 2.6 has for float32 products without AVX-512). Its GEMM driver
// reads a B whose address is 32-byte aligned in place ("no-copy" kernels) and packs any other B
// first; which runs faster depends on the shape and the CPU. On a Zen 3 (AVX2), dnnl_sgemm medians:
// [64,256]x[256,1024] 437 us with B aligned against 245 with B 16 bytes past that, [128,1376]x[1376,
// 512] 2109 against 1688, but [16,512]x[512,512] 89 against 122. So the weights go to a 64-byte
// aligned buffer or 16 bytes past one, whichever ran the product faster, timed once per shape and
// host (engine/backends/measured_choice_cache.h).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

namespace tilebank::engine {

class PlacedGemmWeights {
 public:
  // B of row-major C[M,N] = A[M,K] B (`trans_b`: read from [N,K] transposed), written by
  // `fill(to)` (K * N floats) where the product ran faster. One buffer holds it, the choice timed by
  // moving the weights within it.
  static PlacedGemmWeights Place(const std::function<void(float* to)>& fill, int64_t M, int64_t K, int64_t N, bool trans_b);
  float* data() const { return data_; }
  bool past_alignment() const { return past_alignment_; }  // 16 bytes past a 64-byte boundary

 private:
  std::shared_ptr<void> buffer_;
  float* data_ = nullptr;
  bool past_alignment_ = false;
};

}  // namespace tilebank::engine
