// What `tilebank run` and `tune --model` share: a model loaded (import, folding, executor bound
// to the bank's policies), its inputs (ONNX test data or seeded random values), and the whole
// model timed as the anchors are (warm-up, repeats, median and interquartile spread).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/runtime/executor.h"
#include "repo/bank.h"

namespace tilebank::engine::model {

// Import (engine/ir/onnx_import.h) and fold constants: the graph a model's executors bind.
// `phases`, when given, gets the read, libonnx's passes and the graph's building added to it.
Result<Graph> ImportModel(const std::string& path, const std::map<std::string, std::vector<int64_t>>& input_shapes,
                          const std::vector<std::vector<int64_t>>& shapes_by_position = {}, LoadPhases* phases = nullptr);
// Binds the graph to the bank's operator and graph entries; `bank` may be null (every node gets
// its op class's built-in choice). Pass a copy to bind one graph more than once.
Result<std::unique_ptr<Executor>> BindToBank(Graph graph, const Bank* bank, LoadOptions options = {});
// `options` with what the environment sets for a load (TILEBANK_BRANCHES); an invalid value is an error naming it.
Status ReadLoadEnvironment(LoadOptions* options);
// ImportModel then BindToBank; failures name the model.
Result<std::unique_ptr<Executor>> LoadModel(const std::string& path, const std::map<std::string, std::vector<int64_t>>& input_shapes,
                                            const Bank* bank, const std::vector<std::vector<int64_t>>& shapes_by_position = {},
                                            LoadOptions options = {});

// The bank's current (not stale) entry for an op, else the current entry of the nearest shape of
// the same operator (repo/lookup.h), as the executor asks for it; null without a bank. An entry
// whose policy computes in a precision `precision` does not allow is no answer.
PolicyLookup BankLookup(const Bank* bank, PrecisionMode precision = PrecisionMode::kAllowFp32ToBf16);
// The bank's current (not stale) graph entry for a subgraph: its "fuse" knob, source "bank";
// nullopt (the built-in fusion) otherwise, also without a bank.
FusionLookup BankFusionLookup(const Bank* bank);

// Seeded uniform values in [-1, 1] for every input.
std::vector<Tensor> RandomInputs(const Graph& graph, uint64_t seed);
// input_<i>.pb of an ONNX test-data directory, one per model input.
Result<std::vector<Tensor>> ReadInputs(const Graph& graph, const std::string& data_dir);
// The same for every dtype: floating inputs uniform in [-1, 1], integer and bool ones 0 or 1 (an
// index or a mask any model accepts); strings empty; sequences and optionals empty.
std::vector<TypedTensor> RandomTypedInputs(const Graph& graph, uint64_t seed);
Result<std::vector<TypedTensor>> ReadTypedInputs(const Graph& graph, const std::string& data_dir);
// The shapes of a test-data directory's input_0.pb, input_1.pb, ... (up to the first missing one),
// for ImportModel's shapes_by_position; `kinds` (the model's inputs' kinds: ReadModelSignature)
// skips the sequences and optionals, which have none (an empty shape stands in).
Result<std::vector<std::vector<int64_t>>> InputFileShapes(const std::string& data_dir, const std::vector<ValueKind>& kinds = {});

struct ModelTiming {
  double median_ms = 0, spread_ms = 0;  // spread: interquartile range
  int runs = 0;
  std::vector<double> run_ms;           // each timed run, in the order they ran
  std::vector<double> node_median_us;   // per executor node
  std::vector<std::vector<double>> node_us;  // per executor node, each timed run's microseconds
};
// `warmup` untimed runs, then `repeats` timed ones.
Result<ModelTiming> TimeModel(Executor& executor, const std::vector<Tensor>& inputs, int warmup, int repeats);
Result<ModelTiming> TimeModel(Executor& executor, const std::vector<TypedTensor>& inputs, int warmup, int repeats);

// Two configurations of one model compared in one process: `warmup` untimed runs of each, then
// `rounds` rounds that run each once, the order alternating (ab, ba, ab, ...), so that a change
// in the machine's speed while they run (clock, another process, the cache) falls on both alike.
struct InterleavedTiming {
  ModelTiming a, b;  // a.run_ms[i] and b.run_ms[i] ran in round i, side by side
};
// The times of `runs` summed up as ModelTiming says (no per-node times): what tests hand a job's
// verdict in place of a measurement.
ModelTiming SummarizeRuns(const std::vector<double>& runs);
// Where the rounds took less than `min_seconds`, more follow, up to ten times `rounds`, until they
// took that long: a model of a few milliseconds then runs often enough that a burst of noise on
// the machine falls on a part of its runs, not on all of them.
Result<InterleavedTiming> TimeInterleaved(Executor& a, Executor& b, const std::vector<Tensor>& inputs, int warmup, int rounds, double min_seconds = 0);
Result<InterleavedTiming> TimeInterleaved(Executor& a, Executor& b, const std::vector<TypedTensor>& inputs, int warmup, int rounds,
                                          double min_seconds = 0);

// Two runs' outputs compared (a tuning candidate against its reference run, fused against
// unfused): |got - want| <= atol + rtol |want| with rtol 1e-3 and atol 1e-4 times the largest
// |want| (1e-6 when every expected value is 0), since both are this machine's float32 sums in
// other orders. `worst` says the largest errors; ok is false when some element is outside.
struct Comparison {
  bool ok = true;
  double max_abs_error = 0, max_rel_error = 0;
  int64_t mismatched = 0, compared = 0;  // against test data: elements outside the tolerance, of those compared
  bool quantized_tolerance = false;      // against test data: a quantized output's allowance applied (JudgeTestData)
  bool bf16_tolerance = false;           // against test data: bf16's tolerance, the run having bf16 steps (JudgeTestData)
  bool scale_tolerance = false;          // against test data: an output passed only within kFloat32ScaleTolerance of its largest value
  std::string worst;  // "output 0 element 17: 0.5 vs 0.49"
};
// Outputs against a test-data directory's output_<i>.pb (`run --data`, the conformance tests, the
// zoo): ONNX's backend judgement, engine/core/tensor_compare.h's MatchTensor: dtype and shape equal,
// integers, bool and strings exactly, floats within rtol 1e-3 and atol 1e-7. `quanta` (one per
// output, 0: none) widens a quantized model's outputs by that much: OutputQuanta's. An output
// without a file is not checked; a file beyond the model's outputs is a mismatch. kNotFound when
// the directory has no outputs. `lower_precision`: the run had bf16 steps, so floats are compared
// within kBf16Tolerance of each value and of the output's largest (engine/core/precision_mode.h).
// Otherwise a float output outside ONNX's atol passes when every element is within
// kFloat32ScaleTolerance of the output's largest |value| (and rtol 1e-3 of its own): a whole
// model's float32 sums, reassociated in other blocks than the exporter's, round by that much on
// elements far smaller than the values they were summed from (ONNX Runtime's outputs miss ONNX's
// atol on a transformer's logits as well); `scale_tolerance` then says so.
inline constexpr double kFloat32ScaleTolerance = 1e-5;
Result<Comparison> CompareTypedOutputs(const std::vector<TypedTensor>& outputs, const std::string& data_dir,
                                       const std::vector<double>& quanta = {}, bool lower_precision = false);
// `outputs` of a run of `ex` on a test-data directory's inputs, judged against its expected ones as
// `run --data` and Python's InferenceSession.check judge them: CompareTypedOutputs with its graph's
// OutputQuanta, within bf16's tolerance where some of its steps compute in bf16. `drew_random`: the
// run drew random values (kernels::RandomDraws moved); a difference is then kInvalidInput, since no
// runtime reproduces the stream the expected outputs were drawn from.
Result<Comparison> JudgeTestData(const Executor& ex, const std::vector<TypedTensor>& outputs, const std::string& data_dir, bool drew_random);
// The tolerance a quantized model's outputs are compared with (`run --data`): two steps of the scale
// an output was last dequantized with (DequantizeLinear of a constant per-tensor scale), or two
// integer steps for an 8-bit output; 0 for any other output. Two steps: the last requantization may
// round either way in another runtime, and the value before it may too.
std::vector<double> OutputQuanta(const Graph& graph);
// Two runs' outputs, by Comparison's tolerance (`expected`: the reference run's); `lower_precision`:
// either run computed steps in bfloat16, so rtol and atol are kBf16Tolerance (engine/core/precision_mode.h).
Comparison CompareTensors(const std::vector<Tensor>& outputs, const std::vector<Tensor>& expected, bool lower_precision = false);
Comparison CompareTypedTensors(const std::vector<TypedTensor>& outputs, const std::vector<TypedTensor>& expected, bool lower_precision = false);

}  // namespace tilebank::engine::model
