// engine/backends/simd/packed_gemm.h, compiled once per instruction set Highway targets
// (hwy/foreach_target.h re-includes this file); HWY_DYNAMIC_DISPATCH picks the best the CPU
// supports on the first call.
//
// A tile is up to kRows rows by one panel (two vectors): 2 * kRows sums in registers, each step of
// K one broadcast of A per row and two loads of B. A panel too large for a core's cache is run in
// chunks of K, each over a group of rows (the sums kept aside on the stack between chunks), so that
// B is read once a group. The sums go through the epilogue in a block on
// the stack (the columns past N of a last panel are never stored, its residual never read there).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine/backends/simd/packed_gemm.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "engine/backends/simd/conv_epilogue-inl.h"
#include "engine/backends/simd/packed_gemm.h"
#include "engine/backends/simd/transpose_matrix.h"

HWY_BEFORE_NAMESPACE();
namespace tilebank::engine::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr size_t kMaxLanes = 16;
// Rows of a tile: 12 sums, 2 loads of B and a broadcast of A fill AVX2's 16 registers; AVX-512's 32
// hold 24 sums, each load of B then feeding twice the products.
#if HWY_TARGET <= HWY_AVX3
constexpr int kRows = 12;
#else
constexpr int kRows = 6;
#endif

int64_t PanelColumns() { return static_cast<int64_t>(2 * hn::Lanes(hn::CappedTag<float, kMaxLanes>())); }

#if !HWY_HAVE_SCALABLE  // a tile holds arrays of vectors, which sizeless vector types cannot be

// The rows of a tile, each a named pair of sums: arrays of vectors are kept in memory by GCC and
// stored on every step of K (a third of the speed).
#define TILEBANK_PACKED_GEMM_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

// The K values [begin, end) a tile sums in one call.
struct KSpan {
  int64_t begin, end;
};

// ROWS rows starting at `m` by the panel at `bp` (columns col0 on, `cols` of them real), over the
// K values of `span`. The sums start from the bias where span starts K, else from `partial`
// ([ROWS][panel], aligned); they go through the epilogue to C where span ends K, else to `partial`.
template <int ROWS, class D>
HWY_INLINE void Tile(D d, const PackedGemmA& a, int64_t m, KSpan span, int64_t K, const float* HWY_RESTRICT bp, float* HWY_RESTRICT partial,
                     const ConvEpilogue& e, const float* residual_rows, int64_t col0, int64_t cols, float* C, int64_t ldc) {
  static_assert(ROWS >= 1 && ROWS <= kRows, "a tile has one to kRows rows");
  const size_t N = hn::Lanes(d);
  const bool first = span.begin == 0, last = span.end == K;
  const auto bias_lo = e.bias ? hn::LoadU(d, e.bias + col0) : hn::Zero(d), bias_hi = e.bias ? hn::LoadU(d, e.bias + col0 + N) : hn::Zero(d);
#define TILEBANK_SUMS(R)                                                                      \
  auto lo##R = ROWS > R && !first ? hn::Load(d, partial + R * 2 * N) : bias_lo;               \
  auto hi##R = ROWS > R && !first ? hn::Load(d, partial + R * 2 * N + N) : bias_hi;           \
  const float* HWY_RESTRICT row##R = ROWS > R ? a.data + a.Row(m + R) : nullptr;
  TILEBANK_PACKED_GEMM_ROWS(TILEBANK_SUMS)
#undef TILEBANK_SUMS
  for (int64_t k = span.begin; k < span.end;) {
    const int64_t s = k / a.segment, j0 = k % a.segment, j1 = std::min(a.segment, j0 + (span.end - k)), at = a.offsets[s];
    for (int64_t j = j0; j < j1; ++j, bp += 2 * N) {
      const auto b0 = hn::Load(d, bp), b1 = hn::Load(d, bp + N);
#define TILEBANK_STEP(R)                        \
  if constexpr (ROWS > R) {                     \
    const auto av = hn::Set(d, row##R[at + j]); \
    lo##R = hn::MulAdd(av, b0, lo##R);          \
    hi##R = hn::MulAdd(av, b1, hi##R);          \
  }
      TILEBANK_PACKED_GEMM_ROWS(TILEBANK_STEP)
#undef TILEBANK_STEP
    }
    k += j1 - j0;
  }
  if (!last) {
#define TILEBANK_KEEP(R) \
  if constexpr (ROWS > R) hn::Store(lo##R, d, partial + R * 2 * N), hn::Store(hi##R, d, partial + R * 2 * N + N);
    TILEBANK_PACKED_GEMM_ROWS(TILEBANK_KEEP)
#undef TILEBANK_KEEP
    return;
  }
  const bool whole = cols == static_cast<int64_t>(2 * N);
  HWY_ALIGN float block[2 * kMaxLanes];
  HWY_ALIGN float residual_block[2 * kMaxLanes];
  // Row r's sums to C: stored as they are, or through the epilogue in a block.
  auto out = [&](int r, hn::Vec<D> sum_lo, hn::Vec<D> sum_hi) HWY_ATTR {
    float* c = C + r * ldc + col0;
    hn::Store(sum_lo, d, block), hn::Store(sum_hi, d, block + N);
    const float* residual = residual_rows ? residual_rows + r * ldc + col0 : nullptr;
    if (residual && !whole) {  // copied to a whole block: the residual has no padding to read
      std::memset(residual_block, 0, sizeof(residual_block));
      std::memcpy(residual_block, residual, static_cast<size_t>(cols) * sizeof(float));
      residual = residual_block;
    }
    ApplyConvEpilogueToBlock(d, block, 2, e, residual, N);
    std::memcpy(c, block, static_cast<size_t>(cols) * sizeof(float));
  };
  if (whole && e.steps.empty()) {  // stored as they are, inline: with a short K (attention's head width) stores weigh
#define TILEBANK_STORE(R) \
  if constexpr (ROWS > R) hn::StoreU(lo##R, d, C + R * ldc + col0), hn::StoreU(hi##R, d, C + R * ldc + col0 + N);
    TILEBANK_PACKED_GEMM_ROWS(TILEBANK_STORE)
#undef TILEBANK_STORE
    return;
  }
#define TILEBANK_OUT(R) \
  if constexpr (ROWS > R) out(R, lo##R, hi##R);
  TILEBANK_PACKED_GEMM_ROWS(TILEBANK_OUT)
#undef TILEBANK_OUT
}

#undef TILEBANK_PACKED_GEMM_ROWS

// The last `rows` (fewer than kRows) rows as one tile of that many.
template <int ROWS, class D>
HWY_INLINE void RemainderTile(D d, const PackedGemmA& a, int64_t m, int64_t rows, KSpan span, int64_t K, const float* HWY_RESTRICT bp,
                              float* HWY_RESTRICT partial, const ConvEpilogue& e, const float* residual_rows, int64_t col0, int64_t cols, float* C,
                              int64_t ldc) {
  if constexpr (ROWS >= 1) {
    if (rows == ROWS) return Tile<ROWS>(d, a, m, span, K, bp, partial, e, residual_rows, col0, cols, C, ldc);
    RemainderTile<ROWS - 1>(d, a, m, rows, span, K, bp, partial, e, residual_rows, col0, cols, C, ldc);
  }
}

#else  // a row and a vector at a time

template <class D>
HWY_INLINE void RowPanel(D d, const PackedGemmA& a, const float* HWY_RESTRICT row, const float* HWY_RESTRICT bp, const ConvEpilogue& e, int64_t col0,
                         int64_t cols, const float* residual, float* c) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t v = 0; v < 2 && v * N < cols; ++v) {
    const int64_t first = col0 + v * N, count = std::min(N, cols - v * N);
    auto acc = e.bias ? hn::LoadU(d, e.bias + first) : hn::Zero(d);
    for (int64_t s = 0, k = 0; s < a.segments; ++s)
      for (int64_t j = 0; j < a.segment; ++j, ++k) acc = hn::MulAdd(hn::Set(d, row[a.offsets[s] + j]), hn::Load(d, bp + k * 2 * N + v * N), acc);
    const auto mask = hn::FirstN(d, static_cast<size_t>(count));
    for (const ConvEpilogueStep& step : e.steps)
      acc = step.kind == ConvEpilogueStep::Kind::kAddResidual ? hn::Add(acc, hn::MaskedLoad(mask, d, residual + first)) : ApplyConvEpilogueStep(d, acc, step, nullptr);
    hn::BlendedStore(acc, mask, d, c + first);
  }
}

#endif  // !HWY_HAVE_SCALABLE

// The sums kept between chunks of K, on the stack: groups of at most this many bytes of rows each
// take every chunk in turn (so a chunk, sized for a core's L2, is read from memory once a group).
constexpr size_t kPartialBytes = 32 << 10;

void Panels(const PackedGemmA& a, int64_t M, const PackedGemmWeights& w, const ConvEpilogue& e, float* C, int64_t ldc, int64_t panel_begin,
            int64_t panel_end) {
  const hn::CappedTag<float, kMaxLanes> d;
  const int64_t K = w.K(), P = w.panel();
  HWY_ASSERT(P == static_cast<int64_t>(2 * hn::Lanes(d)));  // packed for the target that runs (both chosen by dispatch)
  const int64_t chunk = w.chunks_k() ? std::max<int64_t>(1, PackedGemmWeights::kChunkBytes / (P * static_cast<int64_t>(sizeof(float)))) : K;
  for (int64_t p = panel_begin; p < panel_end; ++p) {
    const float* bp = w.data() + p * K * P;
    const int64_t col0 = p * P, cols = std::min(P, w.N() - col0);
#if HWY_HAVE_SCALABLE
    (void)chunk;
    for (int64_t m = 0; m < M; ++m) RowPanel(d, a, a.data + a.Row(m), bp, e, col0, cols, e.residual ? e.residual + m * ldc : nullptr, C + m * ldc);
#else
    alignas(64) float partial[kPartialBytes / sizeof(float)];  // [group rows][P], used only where K is chunked
    const int64_t group = chunk < K ? static_cast<int64_t>(kPartialBytes / sizeof(float)) / P / kRows * kRows : M;
    HWY_ASSERT(chunk == K || group >= kRows);
    auto residual = [&](int64_t m) { return e.residual ? e.residual + m * ldc : nullptr; };
    for (int64_t g0 = 0; g0 < M; g0 += group) {
      const int64_t g1 = std::min(M, g0 + group);
      auto at = [&](int64_t row) { return chunk < K ? partial + (row - g0) * P : nullptr; };
      for (int64_t k0 = 0; k0 < K; k0 += chunk) {  // each chunk of the panel over the group's rows
        const KSpan span{k0, std::min(K, k0 + chunk)};
        const float* chunk_bp = bp + k0 * P;
        int64_t m = g0;
        for (; m + kRows <= g1; m += kRows) Tile<kRows>(d, a, m, span, K, chunk_bp, at(m), e, residual(m), col0, cols, C + m * ldc, ldc);
        if (m < g1) RemainderTile<kRows - 1>(d, a, m, g1 - m, span, K, chunk_bp, at(m), e, residual(m), col0, cols, C + m * ldc, ldc);
      }
    }
#endif
  }
}

}  // namespace tilebank::engine::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tilebank::engine {

HWY_EXPORT(PanelColumns);
HWY_EXPORT(Panels);

PackedGemmWeights::PackedGemmWeights(int64_t K, int64_t N) : K_(K), N_(N), panel_(HWY_DYNAMIC_DISPATCH(PanelColumns)()) {
  data_ = hwy::AllocateAligned<float>(static_cast<size_t>(padded_columns() * K));
  if (!data_) throw std::bad_alloc();
}

void PackedGemmWeights::FillFromFilters(const float* filters, int64_t channels, int64_t taps) {
  HWY_ASSERT(channels * taps == K_);
  for (int64_t p = 0; p < panels(); ++p) {
    float* panel = data_.get() + p * K_ * panel_;
    for (int64_t c = 0; c < channels; ++c)  // a channel's taps of the panel's filters: a few cache lines read, a column written
      for (int64_t j = 0; j < panel_; ++j) {
        const int64_t oc = p * panel_ + j;
        const float* from = oc < N_ ? filters + (oc * channels + c) * taps : nullptr;
        for (int64_t t = 0; t < taps; ++t) panel[(t * channels + c) * panel_ + j] = from ? from[t] : 0.f;
      }
  }
}

bool PackedGemmWeights::ChunksK(int64_t K) {
  return K * HWY_DYNAMIC_DISPATCH(PanelColumns)() * static_cast<int64_t>(sizeof(float)) > kWholePanelBytes;
}

void PackedGemmWeights::Fill(const float* b, int64_t row_stride, int64_t col_stride, float scale) {
  for (int64_t p = 0; p < panels(); ++p) {
    float* panel = data_.get() + p * K_ * panel_;
    const int64_t col0 = p * panel_, cols = std::min(panel_, N_ - col0);
    if (col_stride == 1) {  // a row's columns adjacent: copied
      for (int64_t k = 0; k < K_; ++k) {
        const float* from = b + k * row_stride + col0;
        float* to = panel + k * panel_;
        for (int64_t j = 0; j < cols; ++j) to[j] = scale * from[j];
        std::fill(to + cols, to + panel_, 0.f);
      }
      continue;
    }
    if (row_stride == 1) {  // a column's rows adjacent (a transposed B: attention's K^T): transposed in blocks
      TransposeMatrix(b + col0 * col_stride, col_stride, K_, cols, panel, panel_);
    } else {
      for (int64_t k = 0; k < K_; ++k)
        for (int64_t j = 0; j < cols; ++j) panel[k * panel_ + j] = b[k * row_stride + (col0 + j) * col_stride];
    }
    for (int64_t k = 0; k < K_; ++k) {
      float* to = panel + k * panel_;
      if (scale != 1.f)
        for (int64_t j = 0; j < cols; ++j) to[j] *= scale;
      std::fill(to + cols, to + panel_, 0.f);
    }
  }
}

void PackedGemm(const PackedGemmA& A, int64_t M, const PackedGemmWeights& w, const ConvEpilogue& e, float* C, int64_t ldc, int64_t panel_begin,
                int64_t panel_end) {
  HWY_DYNAMIC_DISPATCH(Panels)(A, M, w, e, C, ldc, panel_begin, panel_end);
}

}  // namespace tilebank::engine
#endif  // HWY_ONCE
