#include "engine/runtime/model_session.h"

#include "engine/core/precision_mode.h"

#include "engine/passes/batch_norm_relu_fusion.h"
#include "engine/passes/channel_shuffle.h"
#include "engine/passes/fake_quant_fusion.h"
#include "engine/passes/conv1d_lifting.h"
#include "engine/passes/spatial_reduction.h"
#include "engine/passes/conv_epilogue_fusion.h"
#include "engine/passes/dynamic_gemm_fusion.h"
#include "engine/passes/pad_conv_fusion.h"
#include "engine/passes/parallel_conv_merge.h"
#include "engine/passes/group_norm_fusion.h"
#include "engine/passes/qdq_fusion.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <random>

#include "engine/catalog/policy_check.h"
#include "engine/passes/constant_fold.h"
#include "engine/ir/onnx_import.h"
#include "engine/ir/tensor_proto.h"
#include "engine/core/tensor_compare.h"
#include "engine/core/sample_stats.h"
#include "engine/backends/op_template.h"
#include "engine/core/template_catalog.h"
#include "repo/lookup.h"

namespace tilebank::engine::model {

PolicyLookup BankLookup(const Bank* bank, PrecisionMode precision) {
  if (!bank) return nullptr;
  // One answer per key: a miss scans the operator's shape class, and a model repeats its keys.
  auto answers = std::make_shared<std::map<std::string, std::optional<FoundPolicy>>>();
  return [bank, answers, precision](const OpSpec& op) -> std::optional<FoundPolicy> {
    auto [it, fresh] = answers->try_emplace(op.canonical.text);
    if (!fresh) return it->second;
    auto found = LookupPolicy(*bank, op.canonical, EngineTemplateVersions(), /*nearest=*/true);
    if (found.ok() && found->entry && (found->state == LookupState::kHit || found->state == LookupState::kNearest) &&
        PrecisionAllowed(precision, found->entry->policy))
      it->second = FoundPolicy{std::move(*found->entry), found->state == LookupState::kNearest};
    return it->second;
  };
}

FusionLookup BankFusionLookup(const Bank* bank) {
  return [bank](const Subgraph& s) -> std::optional<FusionChoice> {
    if (!bank) return std::nullopt;
    auto found = bank->Find(EntryKind::kGraph, s.canonical.text);
    if (!found.ok() || !*found) return std::nullopt;
    const std::optional<FusedPolicy> policy = CurrentFusedPolicy(**found);  // nullopt when stale
    if (!policy) return std::nullopt;
    return FusionChoice{*policy, "bank", PolicyProblem(**found)};  // judged against this host's target
  };
}

Result<Graph> ImportModel(const std::string& path, const std::map<std::string, std::vector<int64_t>>& input_shapes,
                          const std::vector<std::vector<int64_t>>& shapes_by_position, LoadPhases* phases) {
  auto graph = ImportOnnx(path, input_shapes, shapes_by_position, phases);
  if (!graph.ok()) return graph.status();
  PhaseClock clock;
  // Before folding, which would turn the weights' DequantizeLinear into float constants.
  // TILEBANK_QDQ_FUSION=off keeps them apart (the float path), for comparison.
  const char* qdq = std::getenv("TILEBANK_QDQ_FUSION");
  if (!qdq || std::string(qdq) != "off")
    if (auto fused = FuseQdq(&graph.value()); !fused.ok()) return fused.status().WithContext(path);
  TB_RETURN_IF_ERROR(FoldConstants(&graph.value()).WithContext(path));
  FusePadIntoConvOrPool(&graph.value());
  ChannelShuffleToGather(&graph.value());
  MergeParallelConvs(&graph.value());
  FuseGroupNorm(&graph.value());
  FuseBatchNormRelu(&graph.value());
  FuseFakeQuantize(&graph.value());
  FuseDynamicGemm(&graph.value());
  LiftConv1d(&graph.value());
  LiftSpatialReductions(&graph.value());
  FuseConvEpilogues(&graph.value());
  clock.Lap(phases ? &phases->graph : nullptr);
  return graph;
}

Status ReadLoadEnvironment(LoadOptions* options) {
  if (const char* branches = std::getenv("TILEBANK_BRANCHES"); branches && !ParseBranchMode(branches, &options->branches))
    return Status::InvalidInput(std::string("TILEBANK_BRANCHES is '") + branches + "': expected on or off");
  return Status::Ok();
}

Result<std::unique_ptr<Executor>> BindToBank(Graph graph, const Bank* bank, LoadOptions options) {
  TB_RETURN_IF_ERROR(ReadLoadEnvironment(&options));
  return Executor::Load(std::move(graph), BankLookup(bank, options.precision), BankFusionLookup(bank), options);
}

Result<std::unique_ptr<Executor>> LoadModel(const std::string& path, const std::map<std::string, std::vector<int64_t>>& input_shapes,
                                            const Bank* bank, const std::vector<std::vector<int64_t>>& shapes_by_position, LoadOptions options) {
  auto graph = ImportModel(path, input_shapes, shapes_by_position, options.phases);
  if (!graph.ok()) return graph.status();
  auto executor = BindToBank(std::move(graph.value()), bank, options);
  if (!executor.ok()) return executor.status().WithContext(path);
  return executor;
}

std::vector<Tensor> RandomInputs(const Graph& graph, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<Tensor> inputs;
  for (int v : graph.inputs) {
    Tensor t(graph.values[v].shape);
    for (auto& x : t.data) x = dist(rng);
    inputs.push_back(std::move(t));
  }
  return inputs;
}

Result<std::vector<Tensor>> ReadInputs(const Graph& graph, const std::string& dir) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    auto t = ReadFloatTensorFile(dir + "/input_" + std::to_string(i) + ".pb");
    if (!t.ok()) return t.status();
    inputs.push_back(std::move(t.value()));
  }
  return inputs;
}

namespace {

// The whole model's runs (ms) and each node's (us) summarized as ModelTiming says.
ModelTiming Summarize(const std::vector<double>& ms, const std::vector<std::vector<double>>& per_node) {
  ModelTiming t;
  t.runs = static_cast<int>(ms.size());
  const SampleSummary whole = engine::Summarize(ms);
  t.median_ms = whole.median;
  t.spread_ms = whole.spread;
  t.run_ms = ms;
  for (const auto& v : per_node) t.node_median_us.push_back(engine::Summarize(v).median);
  t.node_us = per_node;
  return t;
}

// Runs of one executor, recorded one at a time.
template <class T>  // Tensor (float32) or TypedTensor
class RunRecorder {
 public:
  RunRecorder(Executor& executor, const std::vector<T>& inputs) : executor_(executor), per_node_(executor.bindings().size()) {
    for (const auto& t : inputs) in_.push_back(&t);
  }
  Status Untimed() { return executor_.Run(in_, &out_); }
  Status Timed() {
    const auto start = std::chrono::steady_clock::now();
    TB_RETURN_IF_ERROR(executor_.Run(in_, &out_, &node_us_));
    ms_.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    for (size_t k = 0; k < node_us_.size() && k < per_node_.size(); ++k) per_node_[k].push_back(node_us_[k]);
    return Status::Ok();
  }
  ModelTiming Timing() const { return Summarize(ms_, per_node_); }

 private:
  Executor& executor_;
  std::vector<const T*> in_;
  std::vector<T> out_;
  std::vector<double> ms_, node_us_;
  std::vector<std::vector<double>> per_node_;
};

template <class T>
Result<ModelTiming> TimeRuns(Executor& executor, const std::vector<T>& inputs, int warmup, int repeats) {
  RunRecorder<T> runs(executor, inputs);
  for (int i = 0; i < warmup; ++i) TB_RETURN_IF_ERROR(runs.Untimed());
  for (int i = 0; i < repeats; ++i) TB_RETURN_IF_ERROR(runs.Timed());
  return runs.Timing();
}

}  // namespace

ModelTiming SummarizeRuns(const std::vector<double>& runs) { return Summarize(runs, {}); }

Result<ModelTiming> TimeModel(Executor& executor, const std::vector<Tensor>& inputs, int warmup, int repeats) {
  return TimeRuns(executor, inputs, warmup, repeats);
}

Result<ModelTiming> TimeModel(Executor& executor, const std::vector<TypedTensor>& inputs, int warmup, int repeats) {
  return TimeRuns(executor, inputs, warmup, repeats);
}

namespace {

template <class T>
Result<InterleavedTiming> Interleave(Executor& a, Executor& b, const std::vector<T>& inputs, int warmup, int rounds, double min_seconds) {
  RunRecorder<T> runs_a(a, inputs), runs_b(b, inputs);
  for (int i = 0; i < warmup; ++i) {
    TB_RETURN_IF_ERROR(runs_a.Untimed());
    TB_RETURN_IF_ERROR(runs_b.Untimed());
  }
  const auto start = std::chrono::steady_clock::now();
  auto short_of_time = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < min_seconds; };
  for (int i = 0; i < rounds || (i < 10 * rounds && short_of_time()); ++i) {
    RunRecorder<T>& first = i % 2 ? runs_b : runs_a;
    RunRecorder<T>& second = i % 2 ? runs_a : runs_b;
    TB_RETURN_IF_ERROR(first.Timed());
    TB_RETURN_IF_ERROR(second.Timed());
  }
  return InterleavedTiming{runs_a.Timing(), runs_b.Timing()};
}

}  // namespace

Result<InterleavedTiming> TimeInterleaved(Executor& a, Executor& b, const std::vector<Tensor>& inputs, int warmup, int rounds, double min_seconds) {
  return Interleave(a, b, inputs, warmup, rounds, min_seconds);
}

Result<InterleavedTiming> TimeInterleaved(Executor& a, Executor& b, const std::vector<TypedTensor>& inputs, int warmup, int rounds, double min_seconds) {
  return Interleave(a, b, inputs, warmup, rounds, min_seconds);
}

namespace {

// Output `index` against its expected value, into `c`.
void CompareOutput(size_t index, const Tensor& got, const Tensor& want, Comparison* c, bool lower_precision) {
  if (want.size() != got.size()) {
    c->ok = false;
    c->worst = "output " + std::to_string(index) + " has " + std::to_string(got.size()) + " elements, the expected one " + std::to_string(want.size());
    return;
  }
  double scale = 0;
  for (float w : want.data) scale = std::max(scale, static_cast<double>(std::fabs(w)));
  // Relative to the output's magnitude; bf16's own where the run computed in it.
  const double rtol = lower_precision ? kBf16Tolerance : 1e-3, atol = scale > 0 ? (lower_precision ? kBf16Tolerance : 1e-4) * scale : 1e-6;
  for (int64_t k = 0; k < want.size(); ++k) {
    const double g = got.data[k], w = want.data[k];
    if (std::isnan(g) && std::isnan(w)) continue;  // NaN where NaN is expected (the sqrt of a negative)
    const double err = g == w ? 0.0 : std::fabs(g - w);  // equal infinities match
    const bool bad = !(err <= atol + rtol * std::fabs(w));
    if (err > c->max_abs_error || (bad && c->ok)) {
      if (err > c->max_abs_error) c->max_abs_error = err;
      c->worst = "output " + std::to_string(index) + " element " + std::to_string(k) + ": " + std::to_string(g) + " vs " + std::to_string(w);
    }
    if (std::fabs(w) > atol) c->max_rel_error = std::max(c->max_rel_error, err / std::fabs(w));
    if (bad) c->ok = false;
  }
}

// Any dtype: floating outputs by CompareOutput's tolerance, the others exactly.
void CompareTypedOutput(size_t index, const TypedTensor& got, const TypedTensor& want, Comparison* c, bool lower_precision) {
  if (IsFloating(want.dtype) && IsFloating(got.dtype)) {
    CompareOutput(index, got.ToFloat(), want.ToFloat(), c, lower_precision);
    return;
  }
  const TensorMatch m = MatchTensor(got, want, 0, 0);
  if (!m.ok && c->ok) c->worst = "output " + std::to_string(index) + ": " + m.worst;
  c->ok &= m.ok;
}

void CompareTypedOutput(size_t index, const Tensor& got, const Tensor& want, Comparison* c, bool lower_precision) {
  CompareOutput(index, got, want, c, lower_precision);
}

template <class T>  // Tensor (float32) or TypedTensor
Comparison CompareRuns(const std::vector<T>& outputs, const std::vector<T>& expected, bool lower_precision = false) {
  Comparison c;
  if (outputs.size() != expected.size()) {
    c.ok = false;
    c.worst = std::to_string(outputs.size()) + " outputs, " + std::to_string(expected.size()) + " expected";
    return c;
  }
  for (size_t i = 0; i < outputs.size(); ++i) CompareTypedOutput(i, outputs[i], expected[i], &c, lower_precision);
  return c;
}

}  // namespace

Comparison CompareTypedTensors(const std::vector<TypedTensor>& outputs, const std::vector<TypedTensor>& expected, bool lower_precision) {
  return CompareRuns(outputs, expected, lower_precision);
}

Comparison CompareTensors(const std::vector<Tensor>& outputs, const std::vector<Tensor>& expected, bool lower_precision) {
  return CompareRuns(outputs, expected, lower_precision);
}

std::vector<TypedTensor> RandomTypedInputs(const Graph& graph, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> real(-1.f, 1.f);  // float32 inputs as RandomInputs draws them
  std::vector<TypedTensor> inputs;
  for (int v : graph.inputs) {
    const DType dtype = ParseDType(graph.values[v].dtype).value_or(DType::kFloat32);
    if (graph.values[v].kind == ValueKind::kSequence) {  // no shape to draw from: empty
      inputs.push_back(TypedTensor::Sequence(dtype, {}));
      continue;
    }
    if (graph.values[v].kind == ValueKind::kOptional) {
      inputs.push_back(TypedTensor::EmptyOptional(dtype));
      continue;
    }
    TypedTensor t(dtype, graph.values[v].shape);
    for (int64_t i = 0; i < t.size() && dtype != DType::kString; ++i) {
      if (IsFloating(dtype)) t.SetAt(i, real(rng));
      else t.SetIntAt(i, static_cast<int64_t>(rng() % 2));  // 0 and 1: an index or a mask any model accepts
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

Result<std::vector<TypedTensor>> ReadTypedInputs(const Graph& graph, const std::string& dir) {
  std::vector<TypedTensor> inputs;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const Value& declared = graph.values[graph.inputs[i]];
    auto t = ReadValueFile(dir + "/input_" + std::to_string(i) + ".pb", declared.kind, ParseDType(declared.dtype).value_or(DType::kUndefined));
    if (!t.ok()) return t.status();
    // ONNX 1.12's test data holds bfloat16 as uint16 bits.
    if (t->dtype == DType::kUInt16 && declared.dtype == "bfloat16") t->dtype = DType::kBFloat16;
    inputs.push_back(std::move(t.value()));
  }
  return inputs;
}

Result<std::vector<std::vector<int64_t>>> InputFileShapes(const std::string& dir, const std::vector<ValueKind>& kinds) {
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0;; ++i) {
    const std::string file = dir + "/input_" + std::to_string(i) + ".pb";
    std::error_code ec;  // a file that cannot be looked at is not there
    if (!std::filesystem::exists(file, ec)) return shapes;
    if (i < kinds.size() && kinds[i] != ValueKind::kTensor) {  // a sequence or optional: no shape to fix
      shapes.push_back({});
      continue;
    }
    auto t = ReadTensorFile(file);
    if (!t.ok()) return t.status();
    shapes.push_back(t->shape);
  }
}

std::vector<double> OutputQuanta(const Graph& graph) {
  std::vector<double> quanta;
  auto producer = [&](int v) -> const Node* {
    for (const Node& n : graph.nodes)
      if (std::find(n.outputs.begin(), n.outputs.end(), v) != n.outputs.end()) return &n;
    return nullptr;
  };
  for (int out : graph.outputs) {
    double q = 0;
    int v = out;  // through Identity nodes, which pass the value on
    for (const Node* p = producer(v); p && p->op_type == "Identity" && !p->inputs.empty(); p = producer(v)) v = p->inputs[0];
    if (const Node* found = producer(v)) {
      const Node& n = *found;
      const std::string& dtype = graph.values[v].dtype;
      // A dequantized output, or a fake-quantized one (engine/passes/fake_quant_fusion.h): steps of its scale.
      if ((n.op_type == "DequantizeLinear" || n.op_type == "FakeQuantizeLinear") && n.inputs.size() > 1 && graph.IsConstant(n.inputs[1]) && graph.values[n.inputs[1]].constant->size() == 1)
        q = 2 * std::fabs(graph.values[n.inputs[1]].constant->At(0));
      else if ((dtype == "uint8" || dtype == "int8") && (n.op_type == "QuantizeLinear" || n.op_type.rfind("QLinear", 0) == 0))
        q = 2;
    }
    quanta.push_back(q);
  }
  return quanta;
}

namespace {

// The largest finite |value| of a floating tensor (0 for none): an infinity expected is no scale
// (it would allow any finite value elsewhere).
double LargestMagnitude(const TypedTensor& t) {
  double scale = 0;
  const Tensor w = t.ToFloat();
  for (float v : w.data)
    if (std::isfinite(v)) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  return scale;
}

}  // namespace

Result<Comparison> CompareTypedOutputs(const std::vector<TypedTensor>& outputs, const std::string& dir, const std::vector<double>& quanta,
                                       bool lower_precision) {
  Comparison c;
  bool any = false;
  auto exists = [](const std::string& file) {
    std::error_code ec;  // a file that cannot be looked at is not there
    return std::filesystem::exists(file, ec);
  };
  auto expected_file = [&](size_t i) { return dir + "/output_" + std::to_string(i) + ".pb"; };
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string file = expected_file(i);
    if (!exists(file)) continue;
    auto want = ReadValueFile(file, outputs[i].kind, outputs[i].dtype);
    if (!want.ok()) return want.status();
    if (want->dtype == DType::kUInt16 && outputs[i].dtype == DType::kBFloat16) want->dtype = DType::kBFloat16;
    any = true;
    // ONNX's judgement (engine/core/tensor_compare.h): dtype and shape equal, integers exact, floats
    // within rtol 1e-3 and atol 1e-7; a quantized output's allowance on top.
    // A run with bf16 steps: within bf16's tolerance of the output's scale instead.
    // A float32 run that misses ONNX's atol only on elements small beside the output's largest:
    // within kFloat32ScaleTolerance of that instead (said in `scale_tolerance`).
    const double allowance = i < quanta.size() ? quanta[i] : 0;
    const double scale = IsFloating(want->dtype) ? LargestMagnitude(*want) : 0;
    TensorMatch m;
    if (lower_precision && IsFloating(want->dtype)) {
      m = MatchTensor(outputs[i], *want, kBf16Tolerance, std::max(kOnnxAtol, kBf16Tolerance * scale), allowance);
    } else {
      m = MatchTensor(outputs[i], *want, kOnnxRtol, kOnnxAtol, allowance);
      if (!m.ok && scale > 0 && kFloat32ScaleTolerance * scale > kOnnxAtol) {
        TensorMatch scaled = MatchTensor(outputs[i], *want, kOnnxRtol, kFloat32ScaleTolerance * scale, allowance);
        if (scaled.ok) m = std::move(scaled), c.scale_tolerance = true;
      }
    }
    if (c.ok && (!m.ok || m.max_abs_error >= c.max_abs_error) && !m.worst.empty()) c.worst = "output " + std::to_string(i) + " " + m.worst;
    c.max_abs_error = std::max(c.max_abs_error, m.max_abs_error);
    c.max_rel_error = std::max(c.max_rel_error, m.max_rel_error);
    c.mismatched += m.mismatched;
    c.compared += m.compared;
    c.ok = c.ok && m.ok;
  }
  if (!any) return Status::NotFound("no output_<i>.pb in " + dir);
  if (exists(expected_file(outputs.size()))) {
    c.ok = false;
    c.worst = "the model has " + std::to_string(outputs.size()) + " outputs; " + dir + " expects more (" + expected_file(outputs.size()) + ")";
  }
  return c;
}

Result<Comparison> JudgeTestData(const Executor& ex, const std::vector<TypedTensor>& outputs, const std::string& dir, bool drew_random) {
  const bool lower_precision = ex.LowerPrecisionSteps() > 0;
  const std::vector<double> quanta = OutputQuanta(ex.graph());
  auto c = CompareTypedOutputs(outputs, dir, quanta, lower_precision);
  if (!c.ok()) return c.status();
  c->bf16_tolerance = lower_precision;
  c->quantized_tolerance = std::any_of(quanta.begin(), quanta.end(), [](double q) { return q > 0; });
  if (!c->ok && drew_random)
    return Status::InvalidInput("the outputs depend on random draws (Bernoulli, RandomUniform/Normal, Dropout in training mode), which cannot "
                                "reproduce the stream the expected outputs were drawn from (" + c->worst + ")");
  return c;
}

}  // namespace tilebank::engine::model
