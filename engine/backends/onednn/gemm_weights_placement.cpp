#include "engine/backends/onednn/gemm_weights_placement.h"

#include <dnnl.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "engine/core/run_queue_watch.h"
#include "engine/backends/measured_choice_cache.h"
#include "engine/core/sample_stats.h"

namespace tilebank::engine {
namespace {

constexpr size_t kPastAlignmentBytes = 16;
constexpr int kChoiceRounds = 3;

}  // namespace

PlacedGemmWeights PlacedGemmWeights::Place(const std::function<void(float* to)>& fill, int64_t M, int64_t K, int64_t N, bool trans_b) {
  const size_t bytes = static_cast<size_t>(K * N) * sizeof(float);
  PlacedGemmWeights placed;
  placed.buffer_ = std::shared_ptr<void>(std::aligned_alloc(64, (bytes + kPastAlignmentBytes + 63) / 64 * 64), &std::free);
  if (!placed.buffer_) throw std::bad_alloc();
  char* const start = static_cast<char*>(placed.buffer_.get());
  float* const aligned = reinterpret_cast<float*>(start);
  float* const past = reinterpret_cast<float*>(start + kPastAlignmentBytes);
  const std::string key = "onednn gemm weights placement v1|" + std::to_string(M) + "," + std::to_string(K) + "," + std::to_string(N) + (trans_b ? "|T" : "|N");
  const auto known = RecallMeasuredChoice(key);
  placed.past_alignment_ = known && *known == "past";
  placed.data_ = placed.past_alignment_ ? past : aligned;
  fill(placed.data_);
  if (known) return placed;
  std::vector<float> a(static_cast<size_t>(M * K), 0.f), c(static_cast<size_t>(M * N));
  auto product = [&](const float* b) {
    return dnnl_sgemm('N', trans_b ? 'T' : 'N', M, N, K, 1.f, a.data(), K, b, trans_b ? K : N, 0.f, c.data(), N) == dnnl_success;
  };
  bool at_past = false;  // where the weights are now
  auto move_to = [&](bool to_past) {
    if (to_past != at_past) std::memmove(to_past ? past : aligned, to_past ? aligned : past, bytes);
    at_past = to_past;
  };
  const RunQueueWatch watch;
  const std::vector<double> fastest = FastestOfAlternated(kChoiceRounds, 3, 1,
                                                          {[&] {
                                                             move_to(false);
                                                             return product(aligned);
                                                           },
                                                           [&] {
                                                             move_to(true);
                                                             return product(past);
                                                           }});
  placed.past_alignment_ = fastest[1] < fastest[0];
  move_to(placed.past_alignment_);
  placed.data_ = placed.past_alignment_ ? past : aligned;
  RememberMeasuredChoice(key, placed.past_alignment_ ? "past" : "aligned", &watch);
  return placed;
}

}  // namespace tilebank::engine
