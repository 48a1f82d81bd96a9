// C[M,N] = epilogue(A[M,K] B + bias) for a B known at load (a product's constant weights), packed
// once into panels: each panel two of the running CPU's widest vectors of columns, [K][panel]
// inside, so that a tile of rows by one panel keeps its sums in registers over K (or a chunk of K,
// below) and reads B in order. Hand-written with Highway (the best SIMD chosen at run time). On a 2-core Zen 3
// (AVX2) it ran transformer products at 145-180 GFLOP/s where oneDNN 2.6's GEMM ran 75-160
// (docs/PERFORMANCE.md).
#pragma once
#include <cstdint>

#include <hwy/aligned_allocator.h>

#include "engine/backends/simd/conv_epilogue.h"

namespace tilebank::engine {

class PackedGemmWeights {
 public:
  PackedGemmWeights() = default;
  // Room for B [K,N]; Fill puts it in.
  PackedGemmWeights(int64_t K, int64_t N);
  // B[k][n] = scale * b[k * row_stride + n * col_stride]: row-major [K,N] is (N, 1), a transposed
  // [N,K] read as B is (1, K). The columns past N are zero.
  void Fill(const float* b, int64_t row_stride, int64_t col_stride, float scale = 1.f);
  // A convolution's filters as B: B[t * channels + c][oc] = filters[(oc * channels + c) * taps + t]
  // from OIHW (K = channels * taps, N the filters), in blocks that stay in cache both sides.
  void FillFromFilters(const float* filters, int64_t channels, int64_t taps);
  int64_t K() const { return K_; }
  int64_t N() const { return N_; }
  int64_t panel() const { return panel_; }  // columns per panel
  int64_t panels() const { return (N_ + panel_ - 1) / panel_; }
  int64_t padded_columns() const { return panels() * panel_; }
  const float* data() const { return data_.get(); }
  size_t bytes() const { return static_cast<size_t>(padded_columns() * K_) * sizeof(float); }
  // Whether a panel is too large to stay in a core's cache (over 512 KiB: AVX-512's 32 columns over
  // K 4096), so that PackedGemm takes its K in chunks of 256 KiB.
  static constexpr int64_t kWholePanelBytes = 512 << 10, kChunkBytes = 256 << 10;
  bool chunks_k() const { return K_ * panel_ * static_cast<int64_t>(sizeof(float)) > kWholePanelBytes; }
  // Whether weights of depth K packed on this CPU would be taken in chunks.
  static bool ChunksK(int64_t K);

 private:
  int64_t K_ = 0, N_ = 0, panel_ = 0;
  hwy::AlignedFreeUniquePtr<float[]> data_;
};

// Where A's values lie: row r's k-th at data + Row(r) + offsets[k / segment] + k % segment, Row(r)
// rows[r] where a table of rows is given, else r * lda. A row-major [M][K] is one segment of K values
// at offset 0 (Rows); a convolution reads each output position's window as one segment of input
// channels per filter tap, at the tap's offset, each position's window starting where `rows` says.
struct PackedGemmA {
  const float* data = nullptr;
  int64_t lda = 0, segment = 0;
  const int64_t* offsets = nullptr;
  int64_t segments = 0;          // segments * segment = K
  const int64_t* rows = nullptr;  // M offsets from data, or null
  int64_t Row(int64_t r) const { return rows ? rows[r] : r * lda; }
  static PackedGemmA Rows(const float* a, int64_t lda, int64_t K) {
    static constexpr int64_t kNoOffset = 0;
    return {a, lda, K, &kNoOffset, 1};
  }
};

// The columns of panels [panel_begin, panel_end) of every row of C = A B through `e`: e.bias
// padded_columns() values (the columns' bias) or null; a kAddResidual step reads e.residual, [M][N]
// with rows `ldc` apart like C. C must not overlap A; it may be the residual. Threads split the
// panels or the rows (the calls write disjoint rows of disjoint panels). Where a panel's K rows
// would not stay in a core's cache (a 9x9 convolution of 256 channels: K 20736), K is taken in
// chunks, each chunk of the panel run over a group of rows (up to 32 KiB of their sums, kept on the
// stack) before the next (fixed-width vector targets; SVE and RVV run a row at a time over all of
// K). Allocates nothing: it may run on any thread.
void PackedGemm(const PackedGemmA& A, int64_t M, const PackedGemmWeights& w, const ConvEpilogue& e, float* C, int64_t ldc, int64_t panel_begin,
                int64_t panel_end);

}  // namespace tilebank::engine
