#include "engine/backends/onednn/own_or_rival.h"

#include <dnnl.hpp>

#include <chrono>
#include <cstdint>

#include "engine/backends/measured_choice_cache.h"
#include "engine/core/run_queue_watch.h"
#include "engine/core/sample_stats.h"
#include "engine/core/tensor.h"

namespace tilebank::engine {

namespace {

// Rounds of the two alternated at bind, each their fastest of 3 runs.
constexpr int kOwnOrRivalRounds = 3;

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

bool OwnKernelRunsFaster(const std::string& key, const OpSpec& op, const std::vector<ChainStep>& post_ops,
                         const std::function<Result<std::unique_ptr<Kernel>>()>& make_own, const std::function<std::unique_ptr<Kernel>()>& make_rival,
                         double runs_paying_for_making) {
  std::string instance = key + "|" + op.canonical.text;
  for (const ChainStep& s : post_ops) instance += "|" + s.op_type + (s.has_operand ? ":" + std::to_string(Tensor::NumElements(s.operand_shape)) : "");
  if (const auto known = RecallMeasuredChoice(instance)) return *known == "own";
  // Inputs of the op's shapes and the chain's operands, small values of either sign.
  std::vector<Tensor> values;
  for (const auto& input : op.inputs) values.emplace_back(input.shape);
  for (const ChainStep& s : post_ops)
    if (s.has_operand) values.emplace_back(s.operand_shape);
  uint32_t state = 12345;
  for (Tensor& t : values)
    for (float& v : t.data) v = static_cast<float>((state = state * 1664525u + 1013904223u) >> 8) / 16777216.f - 0.5f;
  std::vector<const Tensor*> in;
  for (const Tensor& t : values) in.push_back(&t);
  // Making each kernel: built and given its weights (the measured path's Prepare also copies the
  // inputs in, for both alike). oneDNN's is made as its default implementation: where a model's
  // bind would take a cheaper one (a 1-D convolution's plain JIT kernel), its making is overstated.
  const auto own_start = std::chrono::steady_clock::now();
  auto own = make_own();
  if (!own.ok()) return false;  // refused: no verdict was ever remembered for it
  if (!(*own)->Prepare(in).ok()) return false;
  const double own_making = SecondsSince(own_start);
  bool faster = true;  // where oneDNN cannot run the chain, the own kernel runs it
  const RunQueueWatch watch;
  std::unique_ptr<Kernel> rival;
  bool rival_runs = false;
  const auto rival_start = std::chrono::steady_clock::now();
  try {  // oneDNN throws where it has no primitive for the instance and chain: the rival cannot run it
    rival = make_rival();
    rival_runs = rival->Prepare(in).ok();
  } catch (const dnnl::error&) {
  }
  const double rival_making = SecondsSince(rival_start);
  if (rival_runs) {
    const std::vector<double> fastest = FastestOfAlternated(kOwnOrRivalRounds, 3, 1, {[&] { return (*own)->Run().ok(); }, [&] { return rival->Run().ok(); }});
    faster = runs_paying_for_making > 0 ? fastest[0] + own_making / runs_paying_for_making < fastest[1] + rival_making / runs_paying_for_making
                                        : fastest[0] < fastest[1];
  }
  RememberMeasuredChoice(instance, faster ? "own" : "rival", &watch);
  return faster;
}

}  // namespace tilebank::engine
