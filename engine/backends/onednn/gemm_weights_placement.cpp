#include "engine/backends/onednn/gemm_weights_placement.h"

#include <dnnl.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "engine/backends/measured_choice_cache.h"
#include "engine/core/sample_stats.h"

namespace tilebank::engine {
namespace {

constexpr size_t kPastAlignmentBytes = 16;
constexpr int kChoiceRounds = 3;

// `floats` copied from `from` into a new 64-byte aligned buffer, at its start or kPastAlignmentBytes on.
std::pair<std::shared_ptr<void>, float*> Copy(const float* from, size_t floats, bool past_alignment) {
  const size_t bytes = (floats * sizeof(float) + kPastAlignmentBytes + 63) / 64 * 64;
  std::shared_ptr<void> buffer(std::aligned_alloc(64, bytes), &std::free);
  if (!buffer) throw std::bad_alloc();
  float* data = reinterpret_cast<float*>(static_cast<char*>(buffer.get()) + (past_alignment ? kPastAlignmentBytes : 0));
  std::memcpy(data, from, floats * sizeof(float));
  return {buffer, data};
}

}  // namespace

PlacedGemmWeights PlacedGemmWeights::Place(const float* weights, int64_t M, int64_t K, int64_t N, bool trans_b) {
  const size_t floats = static_cast<size_t>(K * N);
  const std::string key = "onednn gemm weights placement v1|" + std::to_string(M) + "," + std::to_string(K) + "," + std::to_string(N) + (trans_b ? "|T" : "|N");
  PlacedGemmWeights placed;
  if (const auto known = RecallMeasuredChoice(key)) {
    placed.past_alignment_ = *known == "past";
    std::tie(placed.buffer_, placed.data_) = Copy(weights, floats, placed.past_alignment_);
    return placed;
  }
  auto aligned = Copy(weights, floats, false), past = Copy(weights, floats, true);
  std::vector<float> a(static_cast<size_t>(M * K), 0.f), c(static_cast<size_t>(M * N));
  auto product = [&](const float* b) {
    return dnnl_sgemm('N', trans_b ? 'T' : 'N', M, N, K, 1.f, a.data(), K, b, trans_b ? K : N, 0.f, c.data(), N) == dnnl_success;
  };
  const std::vector<double> fastest =
      FastestOfAlternated(kChoiceRounds, 3, 1, {[&] { return product(aligned.second); }, [&] { return product(past.second); }});
  placed.past_alignment_ = fastest[1] < fastest[0];
  RememberMeasuredChoice(key, placed.past_alignment_ ? "past" : "aligned");
  std::tie(placed.buffer_, placed.data_) = placed.past_alignment_ ? past : aligned;
  return placed;
}

}  // namespace tilebank::engine
