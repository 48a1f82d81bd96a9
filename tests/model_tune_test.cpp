// OPAT on a model end to end: `tune -j 2 --model` (whole-model times in the result file, node
// names as op names, hits on a second run), online tuning (`run --tune online` tunes once, then
// starts at once) and offline tuning (`run --dump`, tune the list elsewhere, merge, run tuned).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "engine/jobs/entries_in_context.h"
#include "engine/backends/fused_policy.h"
#include "engine/backends/library_impls.h"
#include "engine/catalog/template_registry.h"
#include "engine/jobs/in_context_measure.h"
#include "engine/jobs/model_opat_job.h"
#include "engine/jobs/opat_job.h"
#include "engine/ir/node_op_spec.h"
#include "engine/core/precision_mode.h"
#include "engine/core/soc_version.h"
#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

namespace tilebank::testing {
namespace {

// x [16,64] -> MatMul w1 [64,64] -> Relu -> MatMul w2 [64,64] -> Relu: two MatMuls of one shape
// (one bank key) and two Relus, the last Relu's output named `last`. (A builder is filled in place:
// its graph pointer points into its own model.)
void AddTwoMatMuls(ModelBuilder* b, const std::string& last) {
  b->Input("x", {16, 64});
  b->Weight("w1", {64, 64});
  b->Weight("w2", {64, 64});
  b->Node("MatMul", {"x", "w1"}, {"h1"});
  b->Node("Relu", {"h1"}, {"a1"});
  b->Node("MatMul", {"a1", "w2"}, {"h2"});
  b->Node("Relu", {"h2"}, {last});
}

std::string SmallModel(const TempDir& dir) {
  ModelBuilder b;
  AddTwoMatMuls(&b, "y");
  b.Output("y", {16, 64});
  return b.Save(dir / "small.onnx");
}

// SmallModel ending in a ReduceMean, whose only implementation is a Halide template: a run keeps a
// compiled kernel whatever tuning picks for the MatMuls (oneDNN fuses their Relus as post-ops).
std::string SmallModelWithHalideKernel(const TempDir& dir) {
  ModelBuilder b;
  AddTwoMatMuls(&b, "a2");
  ModelBuilder::IntsAttr(b.Node("ReduceMean", {"a2"}, {"y"}), "axes", {1});
  b.Output("y", {16, 1});
  return b.Save(dir / "small_reduce.onnx");
}

nlohmann::json OpatOf(const std::string& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind("aoe_result_opat_", 0) == 0) return nlohmann::json::parse(ReadFile(e.path().string())).at(1).at("OPAT");
  return nullptr;
}

// `t`'s runs each `ms` longer.
engine::model::ModelTiming Shifted(const engine::model::ModelTiming& t, double ms) {
  std::vector<double> runs = t.run_ms;
  for (double& r : runs) r += ms;
  return engine::model::SummarizeRuns(runs);
}

// OPAT on SmallModel with the final comparison's times adjusted; every operator's entry is stored
// (the built-in choice where nothing beat it), so there is always something to keep or take back.
engine::ModelOpatReport OpatWithTiming(const TempDir& dir, const std::string& name, const std::function<void(engine::model::InterleavedTiming*)>& adjust,
                                       bool in_context = false) {
  engine::ModelOpatOptions o;
  o.model_path = SmallModel(dir);
  o.job.bank_root = dir / (name + "_bank");
  o.job.soc_version = HostSocVersion();
  o.job.fingerprint = HostFingerprint();
  o.job.output_dir = dir / (name + "_out");
  o.job.tune.trials = 2;
  o.job.keep_builtin_wins = true;
  o.in_context = in_context;  // else the final comparison alone
  o.time_models = [&](engine::model::Executor& without, engine::model::Executor& with, const std::vector<engine::TypedTensor>& inputs) -> Result<engine::model::InterleavedTiming> {
    auto t = engine::model::TimeInterleaved(without, with, inputs, 1, 5);
    if (t.ok()) adjust(&t.value());
    return t;
  };
  setenv("TILEBANK_DEFAULT_POLICIES", "template", 1);  // the Relus run apart: two tasks
  auto report = engine::RunModelOpatJob(o);
  unsetenv("TILEBANK_DEFAULT_POLICIES");
  REQUIRE_MESSAGE(report.ok(), report.status().message());
  return std::move(report.value());
}

size_t OpEntries(const std::string& bank_root) { return EntryCount(bank_root + "/" + HostSocVersion(), EntryKind::kOp); }

// Token ids [1,16] int64 -> Gather from an embedding [50,64] -> MatMul [64,64] -> Relu: a model
// whose input is not float32.
std::string TokenModel(const TempDir& dir) {
  ModelBuilder b;
  ModelBuilder::SetShape(b.g->add_input(), "ids", {1, 16}, onnx::TensorProto::INT64);
  b.Weight("table", {50, 64});
  b.Weight("w", {64, 64});
  b.Node("Gather", {"table", "ids"}, {"e"});
  b.Node("MatMul", {"e", "w"}, {"h"});
  b.Node("Relu", {"h"}, {"y"});
  b.Output("y", {1, 16, 64});
  return b.Save(dir / "tokens.onnx");
}

TEST_CASE("tune --model: whole-model times, one task per bank key, the stored entries named after their first node, then all hits") {
  TempDir dir;
  // From the command line: the result file's whole-model times and one task per bank key (the
  // templates' defaults run the Relus apart; the built-in choice fuses them into oneDNN).
  const std::string env = "TILEBANK_DEFAULT_POLICIES=template";
  auto first = RunCli("tune -j 2 -m " + SmallModel(dir) + " --bank " + (dir / "cli_bank") + " --trials 4 --output " + (dir / "cli_out"), env);
  REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  CHECK(first.out.find("small process finished. Performance improved by") != std::string::npos);
  const nlohmann::json cli = OpatOf(dir / "cli_out");
  REQUIRE(!cli.is_null());
  CHECK(cli["model_baseline_performance(ms)"].get<double>() > 0);
  CHECK(cli["model_result_performance(ms)"].get<double>() > 0);
  CHECK(cli["repo_summary"]["total_num"] == 2);  // the two MatMuls are one task, the Relus another

  // Which entries a 7 us model keeps is the machine's noise: the job keeps every operator's winner
  // and the model is measured faster with them, so both are stored, whatever this machine measures.
  OpatWithTiming(dir, "stored", [](engine::model::InterleavedTiming* t) {
    t->a = engine::model::SummarizeRuns({2.0, 2.1, 1.9, 2.0, 2.05});
    t->b = engine::model::SummarizeRuns({1.0, 1.1, 0.9, 1.0, 1.05});  // a second faster in every round
  });
  CHECK(OpEntries(dir / "stored_bank") == 2);
  // One task per key, named after its first node (the trials file's task_done lines).
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir / "stored_out"))
    if (e.path().filename().string().rfind("aoe_trials_opat_", 0) == 0) {
      std::istringstream lines(ReadFile(e.path().string()));
      for (std::string line; std::getline(lines, line);)
        if (const auto j = nlohmann::json::parse(line); j.value("event", "") == "task_done") names.insert(j.at("name").get<std::string>());
    }
  CHECK(names == std::set<std::string>{"MatMul_h1", "Relu_a1"});
  for (const auto& op : OpatOf(dir / "stored_out")["repo_modified_operators"]) CHECK(names.count(op["op_name"].get<std::string>()) == 1);

  // The same model on that bank: both keys are hits, nothing is tuned again.
  auto second = RunCli("tune -j 2 -m " + (dir / "small.onnx") + " --bank " + (dir / "stored_bank") + " --trials 4 --output " + (dir / "again"), env);
  REQUIRE_MESSAGE(second.exit_code == 0, second.err);
  const nlohmann::json again = OpatOf(dir / "again");
  CHECK(again["repo_summary"]["total_num"] == 2);
  CHECK(again["repo_summary"]["repo_hit_num"] == 2);

  auto other = RunCli("tune -j 2 -m " + (dir / "small.onnx") + " --framework 3 --bank " + (dir / "bank3") + " --output " + (dir / "out3"));
  CheckRefusedWritingNothing(other, "only ONNX", {dir / "bank3", dir / "out3"});
}

TEST_CASE("tune --model: a model over token ids (an int64 input) tunes in both job types") {
  TempDir dir;
  const std::string model = TokenModel(dir);
  const std::string env = "TILEBANK_KERNEL_CACHE=" + (dir / "kernels") + " ";
  // A bank per job: after an SGAT run that fused the MatMul into a stored subgraph, OPAT on the same
  // bank has no operator left to tune.
  for (const std::string job : {"1", "2"}) {
    CAPTURE(job);
    auto r = RunCli("tune -j " + job + " -m " + model + " --bank " + (dir / ("bank" + job)) + " --trials 4 --output " + (dir / ("out" + job)), env);
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out.find("model: ") != std::string::npos);
  }
}

TEST_CASE("tune -j 2 --model: a model with no operator to tune is refused with exit 2, nothing written") {
  TempDir dir;
  ModelBuilder b;
  ModelBuilder::SetShape(b.g->add_input(), "ids", {1, 16}, onnx::TensorProto::INT64);
  b.Weight("table", {50, 64});
  b.Node("Gather", {"table", "ids"}, {"y"});
  b.Output("y", {1, 16, 64});
  const std::string model = b.Save(dir / "gather.onnx");
  auto r = RunCli("tune -j 2 -m " + model + " --bank " + (dir / "bank") + " --trials 2 --output " + (dir / "out"));
  CheckRefusedWritingNothing(r, "no operator is left for OPAT to tune", {dir / "bank", dir / "out"});
}

TEST_CASE("tune --model: entries the model is not faster with beyond the spread are taken back, and 0% reported") {
  TempDir dir;
  // Slower by half a millisecond in the median, the rounds' differences on both sides of zero: no
  // gain measured, so the entries go (a tuned choice never loses).
  const engine::ModelOpatReport noise = OpatWithTiming(dir, "noise", [](engine::model::InterleavedTiming* t) {
    t->a = engine::model::SummarizeRuns({10, 10, 10, 10, 10});
    t->b = engine::model::SummarizeRuns({11.5, 9.5, 11.5, 9.5, 10.5});
  });
  CHECK(noise.reverted);
  CHECK_MESSAGE(noise.note.find("no faster with them beyond the spread: they were taken back") != std::string::npos, noise.note);
  CHECK(OpEntries(dir / "noise_bank") == 0);
  CHECK(noise.job.improvement_percent == 0);
  CHECK(OpatOf(dir / "noise_out")["model_performance_improvement"] == "0.00%");

  // Faster by half a millisecond in the median, one round slower: still no gain beyond the noise
  // (five rounds: every one must be faster), taken back.
  const engine::ModelOpatReport close = OpatWithTiming(dir, "close", [](engine::model::InterleavedTiming* t) {
    t->a = engine::model::SummarizeRuns({10, 10, 10, 10, 10});
    t->b = engine::model::SummarizeRuns({9.5, 9.0, 10.5, 9.5, 9.0});
  });
  CHECK(close.reverted);
  CHECK(OpEntries(dir / "close_bank") == 0);

  // Slower by a second: the entries go, and the report and the result file say how it now runs.
  const engine::ModelOpatReport taken = OpatWithTiming(dir, "taken", [](engine::model::InterleavedTiming* t) { t->b = Shifted(t->b, 1000); });
  CHECK(taken.reverted);
  CHECK_MESSAGE(taken.note.find("slower with them by more than the spread: they were taken back") != std::string::npos, taken.note);
  CHECK_MESSAGE(taken.note.find("interleaved whole-model runs, median of 5 each") != std::string::npos, taken.note);
  CHECK(OpEntries(dir / "taken_bank") == 0);
  CHECK(taken.result_ms == taken.baseline_ms);
  const auto opat = OpatOf(dir / "taken_out");
  CHECK(opat["repo_summary"]["repo_add_num"] == 0);
  CHECK(opat["repo_modified_operators"].empty());
  CHECK(opat["model_result_performance(ms)"].get<double>() == opat["model_baseline_performance(ms)"].get<double>());
  CHECK(opat["model_performance_improvement"] == "0.00%");

  // Faster in every round: kept, and the gain judged is the gain reported: the rounds' median
  // difference (1.1 ms) off the median without (2.0 ms), 2.0 / 0.9 - 1, not the medians' ratio.
  const engine::ModelOpatReport faster = OpatWithTiming(dir, "faster", [](engine::model::InterleavedTiming* t) {
    t->a = engine::model::SummarizeRuns({2.0, 2.5, 1.8, 2.0, 2.2});
    t->b = engine::model::SummarizeRuns({1.0, 1.4, 0.7, 1.0, 1.1});
  });
  CHECK(!faster.reverted);
  CHECK(faster.job.improvement_percent == doctest::Approx(100.0 * (2.0 / 0.9 - 1)));
  CHECK(OpatOf(dir / "faster_out")["model_performance_improvement"] == "122.22%");
  CHECK(OpatOf(dir / "faster_out")["model_result_performance(ms)"].get<double>() == doctest::Approx(0.9));  // baseline / result - 1: the same
}

TEST_CASE("tune --model: each entry's judgement in context is in the result file and the report") {
  TempDir dir;
  OpatWithTiming(dir, "judged", [](engine::model::InterleavedTiming*) {}, /*in_context=*/true);
  const nlohmann::json opat = OpatOf(dir / "judged_out");
  REQUIRE(opat.contains("in_context"));
  CHECK(opat["in_context"].size() == 2);  // both keys: their built-in choices were stored (keep_builtin_wins)
  for (const auto& e : opat["in_context"]) {
    CHECK(e["node"].get<std::string>().size() > 0);
    CHECK(e["key"].get<std::string>().rfind("0x", 0) == 0);
    CHECK(e["steps"].get<int>() > 0);
    CHECK(e["precision"] == "fp32");  // the job's precision mode was force_fp32
    CHECK(e["kept"].get<bool>() == (e["gain_low_us"].get<double>() > 0 && e["gain_us"].get<double>() >= 0.01 * e["without_us"].get<double>()));
    CHECK(e["gain_low_us"].get<double>() <= e["gain_us"].get<double>());
    CHECK(e["gain_us"].get<double>() <= e["gain_high_us"].get<double>());
  }
  std::string result;
  for (const auto& f : std::filesystem::directory_iterator(dir / "judged_out"))
    if (f.path().filename().string().rfind("aoe_result_opat_", 0) == 0) result = f.path().string();
  REQUIRE(!result.empty());
  auto report = RunCli("report " + result + " -o " + (dir / "judged.html"));
  REQUIRE_MESSAGE(report.exit_code == 0, report.err);
  CHECK(ReadFile(dir / "judged.html").find("Each entry in context") != std::string::npos);
}

TEST_CASE("run --tune online tunes what the bank lacks once and the next run starts at once") {
  TempDir dir;
  const std::string model = SmallModelWithHalideKernel(dir);
  const std::string common = "run -m " + model + " --tune online --trials 3 --repeat 2 --bank " + (dir / "bank") + " --output " + dir.path();
  // The templates' defaults as the baseline; the ReduceMean keeps a Halide kernel to count.
  const std::string env = "TILEBANK_DEFAULT_POLICIES=template";
  auto first = RunCli(common, env);
  REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  CHECK(first.err.find("online tuning: " + dir.path()) != std::string::npos);
  auto second = RunCli(common + " --json", env);
  REQUIRE_MESSAGE(second.exit_code == 0, second.err);
  CHECK_MESSAGE(second.err.find("every operator's policy is in the bank") != std::string::npos, std::string(first.err + "\n---\n" + second.err));
  // With nothing to tune the model is imported and bound once, as a plain run binds it: the same
  // number of kernels comes from the kernel cache (before, the check and the run each bound it).
  auto plain = RunCli("run -m " + model + " --repeat 2 --json --bank " + (dir / "bank"), env);
  REQUIRE_MESSAGE(plain.exit_code == 0, plain.err);
  auto kernels = [](const std::string& out) {
    const auto cache = nlohmann::json::parse(out)["kernel_cache"];
    return cache["loaded"].get<int>() + cache["compiled"].get<int>();
  };
  CHECK(kernels(plain.out) > 0);
  CHECK_MESSAGE(kernels(second.out) == kernels(plain.out), std::string(second.out + "\n---\n" + plain.out));
}

TEST_CASE("offline: run --dump, tune the list on its own, merge the bank back, and the model runs tuned") {
  TempDir dir;
  const std::string model = SmallModel(dir);
  // The templates' defaults as the baseline: each op of the list is run alone and beaten by tuning.
  const std::string env = "TILEBANK_DEFAULT_POLICIES=template";
  auto dumped = RunCli("run -m " + model + " --repeat 1 --dump " + (dir / "dump") + " --bank " + (dir / "none"), env);
  REQUIRE_MESSAGE(dumped.exit_code == 0, dumped.err);
  CHECK(dumped.out.find("0 from the bank") != std::string::npos);
  const std::string list = dir / "dump/aoe_dump/small_ops.json";
  auto ops = nlohmann::json::parse(ReadFile(list));
  REQUIRE(ops.size() == 2);
  CHECK(ops[0]["name"] == "MatMul_h1");
  // "Another machine of the same soc_version": a bank of its own, merged back. Whether tuning
  // beats the defaults of a 7 us operator depends on the machine's noise (a loaded CI machine once
  // stored nothing): up to three tries for a run that stores an entry.
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::string out = dir / ("tuned" + std::to_string(attempt));
    REQUIRE(RunCli("tune -j 2 --singleop " + list + " --bank " + (dir / "remote") + " --trials 6 --output " + out, env).exit_code <= 1);
    const nlohmann::json opat = OpatOf(out);
    REQUIRE(!opat.is_null());
    if (!opat["repo_modified_operators"].empty()) break;
  }
  REQUIRE(RunCli("bank merge " + (dir / "remote") + " --into " + (dir / "local")).exit_code == 0);
  auto tuned = RunCli("run -m " + model + " --repeat 1 --bank " + (dir / "local"), env);
  REQUIRE(tuned.exit_code == 0);
  CHECK_MESSAGE(tuned.out.find("0 from the bank") == std::string::npos, tuned.out);
}

TEST_CASE("in context: a candidate runs in place of its operator's steps, checked against the model's outputs, and the model's kernels come back") {
  TempDir dir;
  auto graph = engine::model::ImportModel(SmallModel(dir), {});
  REQUIRE(graph.ok());
  const engine::model::FusionLookup builtin_fusions = [](const engine::model::Subgraph&) { return std::optional<engine::model::FusionChoice>(); };
  auto executor = engine::model::Executor::Load(*graph, nullptr, builtin_fusions);
  REQUIRE(executor.ok());
  const auto& bindings = (*executor)->bindings();
  const engine::model::NodeBinding* matmul = nullptr;
  for (const auto& b : bindings)
    if (b.op && !matmul) matmul = &b;
  REQUIRE(matmul);
  CHECK(matmul->template_id == engine::kFusedTemplateId);  // MatMul+Relu on oneDNN, as built in
  const engine::OpSpec op = matmul->op->op;
  const std::string key = FormatKey(EntryKind::kOp, op.canonical.key);
  const auto inputs = engine::model::RandomTypedInputs(*graph, 2);
  auto context = engine::ModelContext::Create(executor->get(), inputs);
  REQUIRE(context.ok());
  const engine::MeasureInContext measure = context->For(op);
  REQUIRE(measure);
  // Both MatMuls share the key: both fused steps take oneDNN's candidate, Relus still fused.
  const engine::OpTemplate& onednn = engine::OneDnnImpl();
  auto swapped = (*executor)->SwapSteps(key, onednn, onednn.DefaultPolicy(op));
  REQUIRE(swapped.ok());
  CHECK(swapped->size() == 2);
  (*executor)->RestoreSteps();
  const engine::RunResult r = measure(onednn, onednn.DefaultPolicy(op));
  CHECK_MESSAGE(r.ok, r.failure);
  CHECK(r.time.runs == 7);
  CHECK(r.time.median_us > 0);
  // A policy naming the implementation oneDNN picks by default (algo "direct": oneDNN's matmul)
  // builds the built-in choice's very kernels (Kernel::Identity) where the built-in "auto" took
  // oneDNN's: not run, so that it costs no trial and cannot win on noise. Where "auto" timed the
  // own packed GEMM faster on this host, oneDNN's is an alternative and runs.
  REQUIRE((*executor)->SwapSteps(key, onednn, onednn.DefaultPolicy(op)).ok());
  const bool builtin_is_onednn = (*executor)->SwappedIdentity().find("own packed GEMM") == std::string::npos;
  (*executor)->RestoreSteps();
  engine::Policy named = onednn.DefaultPolicy(op);
  for (const engine::KnobDomain& knob : onednn.Space(op).knobs)
    if (knob.name == "impl" && knob.values.size() > 1)
      for (Knob& k : named) {
        if (k.name == "impl") k.value = knob.values[1];
        if (k.name == "algo") k.value = std::string("direct");
      }
  REQUIRE(named != onednn.DefaultPolicy(op));
  const engine::RunResult same = measure(onednn, named);
  CAPTURE(builtin_is_onednn);
  CHECK(same.ok != builtin_is_onednn);
  CHECK_MESSAGE(same.same_as_builtin == builtin_is_onednn, same.failure);
  // A Halide kernel cannot run the fused chain: refused, nothing swapped.
  auto templates = engine::TemplatesFor(op);
  REQUIRE(templates.ok());
  const engine::RunResult halide = measure(*templates->primary, templates->primary->DefaultPolicy(op));
  CHECK(!halide.ok);
  CHECK_MESSAGE(halide.failure.find(engine::model::kOnlyOneDnnRunsIt) != std::string::npos, halide.failure);
  CHECK(!(*executor)->SwapSteps("0xnosuchkey", onednn, onednn.DefaultPolicy(op)).ok());
  // Unfused, the Halide kernel takes both MatMuls' places.
  auto unfused = engine::model::Executor::Load(*graph, nullptr);
  REQUIRE(unfused.ok());
  auto halide_swapped = (*unfused)->SwapSteps(key, *templates->primary, templates->primary->DefaultPolicy(op));
  CHECK_MESSAGE(halide_swapped.ok(), halide_swapped.status().message());
  (*unfused)->RestoreSteps();
  // The model's own kernels again: its outputs are what they were.
  std::vector<engine::TypedTensor> before, after;
  const auto pointers = engine::PointersTo(inputs);
  auto fresh = engine::model::Executor::Load(*graph, nullptr, builtin_fusions);
  REQUIRE(fresh.ok());
  REQUIRE((*fresh)->Run(pointers, &before).ok());
  REQUIRE((*executor)->Run(pointers, &after).ok());
  CHECK(engine::model::CompareTypedTensors(after, before).ok);
}

TEST_CASE("bf16 between layers: a bf16 job tries its chained convolutions in bf16 together, and what it stores of them is its own to take back") {
  TempDir dir;
  const std::string model = SaveInvertedResidual(dir / "block.onnx");
  auto graph = engine::model::ImportModel(model, {});
  REQUIRE(graph.ok());
  auto depthwise = engine::model::NodeOpSpec(*graph, graph->nodes[2]);
  REQUIRE(depthwise.ok());
  const engine::OpSpec& op = depthwise->op;
  REQUIRE(op.op_type == "Conv");
  const engine::OpTemplate& onednn = engine::OneDnnImpl();
  const engine::SearchSpace space = onednn.Space(op);
  auto tuned = RunCli("tune -j 2 -m " + model + " --precision-mode allow_fp32_to_bf16 --trials 4 --bank " + (dir / "bank") + " --output " + (dir / "out"));
  REQUIRE_MESSAGE(tuned.exit_code == 0, tuned.err);
  const std::string said = tuned.out + tuned.err;
  const bool native = space.IndexOf(engine::kPrecisionKnob) >= 0;
  CHECK_MESSAGE((said.find("bf16 between layers: ") != std::string::npos) == native, said);
  if (!native) return;  // no native bf16 on this CPU: nothing to try
  // An entry added to the job as its own (as the job stores its bf16 twins) goes when the job takes
  // its entries back, and what the key held before the job comes back: here, in a fresh bank, nothing.
  auto bank = OpenExisting((dir / "bank") + "/" + HostSocVersion());
  auto job = engine::LatestOpatJob(*bank);
  REQUIRE(job.ok());
  REQUIRE(job->has_value());
  auto get = [&]() -> Result<std::optional<Entry>> {
    auto snapshot = bank->Read();
    if (!snapshot.ok()) return snapshot.status();
    return snapshot->Get(EntryKind::kOp, op.canonical.key);
  };
  Entry twin;
  twin.op_type = op.op_type;
  twin.descriptor = op.canonical.text;
  twin.template_id = onednn.id();
  twin.template_version = onednn.version();
  twin.policy = space.With(onednn.DefaultPolicy(op), engine::kPrecisionKnob, std::string("bf16"));
  twin.before = {20, 1, 10};
  twin.after = {10, 1, 10};
  const std::string key = FormatKey(EntryKind::kOp, op.canonical.key);
  engine::OpatJobReport report;
  report.job_name = (*job)->job_name;
  auto added = engine::AddToOpatJob(*bank, &report, {twin});
  REQUIRE_MESSAGE(added.ok(), added.message());
  REQUIRE(report.replaced.count(key));
  CHECK(!report.replaced.at(key).has_value());
  auto stored = get();
  REQUIRE(stored.ok());
  REQUIRE(stored->has_value());
  CHECK(engine::PolicyPrecision((*stored)->policy) == "bf16");
  const std::set<std::string> only = {key};
  auto taken = engine::TakeBackOpatJob(*bank, (*job)->job_name, &only);
  REQUIRE_MESSAGE(taken.ok(), taken.status().message());
  auto after = get();
  REQUIRE(after.ok());
  CHECK(!after->has_value());
}

TEST_CASE("precision mode: --precision-mode is OPAT's, checked, and a bf16 step is measured in context and counted by the run") {
  TempDir dir;
  const std::string model = SmallModel(dir);
  auto bad = RunCli("tune -j 2 -m " + model + " --precision-mode fp16 --bank " + (dir / "bad_bank") + " --output " + (dir / "bad_out"));
  CheckRefusedWritingNothing(bad, "allow_fp32_to_bf16", {dir / "bad_bank", dir / "bad_out"});
  auto sgat = RunCli("tune -j 1 -m " + model + " --precision-mode allow_fp32_to_bf16 --bank " + (dir / "sgat_bank") + " --output " + (dir / "sgat_out"));
  CheckRefusedWritingNothing(sgat, "--precision-mode is not for --job-type 1", {dir / "sgat_bank", dir / "sgat_out"});

  // Two runs' outputs 2% of the largest apart: beyond float32's tolerance, within bf16's.
  engine::TypedTensor want(engine::DType::kFloat32, {4}), got(engine::DType::kFloat32, {4});
  for (int64_t i = 0; i < 4; ++i) want.SetAt(i, 1.0 + i), got.SetAt(i, 1.0 + i + (i == 0 ? 0.08 : 0.0));
  CHECK_FALSE(engine::model::CompareTypedTensors({got}, {want}).ok);
  CHECK(engine::model::CompareTypedTensors({got}, {want}, /*lower_precision=*/true).ok);
  got.SetAt(0, 1.2);  // 5% of the largest: beyond bf16's too
  CHECK_FALSE(engine::model::CompareTypedTensors({got}, {want}, true).ok);

  auto graph = engine::model::ImportModel(model, {});
  REQUIRE(graph.ok());
  auto executor = engine::model::Executor::Load(*graph, nullptr, [](const engine::model::Subgraph&) { return std::optional<engine::model::FusionChoice>(); });
  REQUIRE(executor.ok());
  CHECK((*executor)->LowerPrecisionSteps() == 0);
  const engine::model::NodeBinding* matmul = nullptr;
  for (const auto& b : (*executor)->bindings())
    if (b.op && !matmul) matmul = &b;
  REQUIRE(matmul);
  const engine::OpSpec op = matmul->op->op;
  const engine::OpTemplate& onednn = engine::OneDnnImpl();
  const engine::SearchSpace space = onednn.Space(op);
  if (space.IndexOf(engine::kPrecisionKnob) < 0) return;  // no native bf16 on this CPU: nothing offers it
  const engine::Policy bf16 = space.With(onednn.DefaultPolicy(op), engine::kPrecisionKnob, std::string("bf16"));
  // In context: both fused MatMul steps in bf16, the model's outputs within bf16's tolerance.
  auto context = engine::ModelContext::Create(executor->get(), engine::model::RandomTypedInputs(*graph, 2));
  REQUIRE(context.ok());
  const engine::MeasureInContext measure = context->For(op);
  REQUIRE(measure);
  const engine::RunResult r = measure(onednn, bf16);
  CHECK_MESSAGE(r.ok, r.failure);
  CHECK_FALSE(r.same_as_builtin);
  // A bank entry in bf16: the run counts the steps that compute in it (both MatMuls share the key).
  Entry entry;
  entry.op_type = op.op_type;
  entry.descriptor = op.canonical.text;
  entry.template_id = onednn.id();
  entry.template_version = onednn.version();
  entry.policy = bf16;
  const engine::model::PolicyLookup lookup = [&](const engine::OpSpec& o) -> std::optional<engine::model::FoundPolicy> {
    if (o.canonical.key != op.canonical.key) return std::nullopt;
    return engine::model::FoundPolicy{entry, false};
  };
  auto lowered = engine::model::Executor::Load(*graph, lookup, [](const engine::model::Subgraph&) { return std::optional<engine::model::FusionChoice>(); });
  REQUIRE(lowered.ok());
  CHECK((*lowered)->LowerPrecisionSteps() == 2);
  // From the command line, with that entry in a bank: run says so; run --fp32 passes it over.
  {
    auto bank = CreateBank((dir / "bf16_bank") + "/" + HostSocVersion(), HostSocVersion());
    REQUIRE(bank->Write([&](WriteTxn& txn) { return txn.Put(entry, PutPolicy::kOverwrite).status(); }).ok());
  }
  auto run = RunCli("run -m " + model + " --bank " + (dir / "bf16_bank") + " --repeat 2");
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("precision  2 steps compute in bf16") != std::string::npos);
  auto fp32 = RunCli("run -m " + model + " --bank " + (dir / "bf16_bank") + " --repeat 2 --fp32");
  REQUIRE_MESSAGE(fp32.exit_code == 0, fp32.err);
  CHECK(fp32.out.find("compute in bf16") == std::string::npos);
  CHECK(fp32.out.find("0 from the bank") != std::string::npos);
  // A model already running bf16 steps is the reference: a float32 candidate is judged within bf16's
  // tolerance there, not refused as a wrong result.
  auto lowered_context = engine::ModelContext::Create(lowered->get(), engine::model::RandomTypedInputs(*graph, 2));
  REQUIRE(lowered_context.ok());
  const engine::MeasureInContext measure_lowered = lowered_context->For(op);
  REQUIRE(measure_lowered);
  const engine::RunResult exact = measure_lowered(onednn, onednn.DefaultPolicy(op));
  CHECK_MESSAGE(exact.ok, exact.failure);
  // The same entry where B is computed, not weights: the bf16 anchor cannot bind there, and the
  // chain stays fused on oneDNN's first choice in float32.
  {
    ModelBuilder b;
    b.Input("x", {16, 64});
    b.Input("w1", {64, 64});
    b.Node("MatMul", {"x", "w1"}, {"h"});
    b.Node("Relu", {"h"}, {"y"});
    b.Output("y", {16, 64});
    auto computed = engine::model::ImportModel(b.Save(dir / "computed_b.onnx"), {});
    REQUIRE(computed.ok());
    int answered = 0;  // the bank's answer reached the anchor
    const engine::model::PolicyLookup counting = [&](const engine::OpSpec& o) {
      auto found = lookup(o);
      answered += found.has_value();
      return found;
    };
    auto fused = engine::model::Executor::Load(*computed, counting, [](const engine::model::Subgraph&) { return std::optional<engine::model::FusionChoice>(); });
    REQUIRE_MESSAGE(fused.ok(), fused.status().message());
    CHECK(answered > 0);
    CHECK((*fused)->LowerPrecisionSteps() == 0);
    bool matmul_relu = false;
    for (const auto& binding : (*fused)->bindings()) matmul_relu |= binding.op_type == "MatMul+Relu";
    CHECK(matmul_relu);
  }
  // A force_fp32 job does not take the bf16 entry for a hit: it tunes that operator again.
  auto again = RunCli("tune -j 2 -m " + model + " --bank " + (dir / "bf16_bank") + " --trials 2 --output " + (dir / "fp32_out"));
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  CHECK(OpatOf(dir / "fp32_out")["repo_summary"]["repo_hit_num"] == 0);
}

// The model at `path` bound twice to its built-in choices: the two sides of a judgement in context.
std::pair<std::unique_ptr<engine::model::Executor>, std::unique_ptr<engine::model::Executor>> BoundTwice(const std::string& path) {
  auto graph = engine::model::ImportModel(path, {});
  REQUIRE(graph.ok());
  auto without = engine::model::Executor::Load(*graph, nullptr);
  auto with = engine::model::Executor::Load(*graph, nullptr);
  REQUIRE(without.ok());
  REQUIRE(with.ok());
  return {std::move(without.value()), std::move(with.value())};
}

TEST_CASE("entries in context: an entry stays only when the steps it changes are faster with it beyond their spread") {
  TempDir dir;
  auto bound = BoundTwice(SmallModel(dir));
  auto& without = bound.first;  // named references: clang 14 cannot capture structured bindings in a lambda
  auto& with = bound.second;
  const auto& bindings = with->bindings();
  size_t tuned = bindings.size();
  for (size_t i = 0; i < bindings.size() && tuned == bindings.size(); ++i)
    if (bindings[i].op) tuned = i;
  REQUIRE(tuned < bindings.size());
  const std::string key = FormatKey(EntryKind::kOp, bindings[tuned].op->op.canonical.key);
  // Each step 90..110 us over five runs (spread 10); the tuned step `gain` us faster with the entry,
  // its runs with it in the reverse order (round by round: -20 + gain ... 20 + gain).
  auto judge = [&](double gain) {
    engine::model::InterleavedTiming t;
    for (size_t k = 0; k < bindings.size(); ++k) {
      t.a.node_us.push_back({90, 95, 100, 105, 110});
      t.b.node_us.push_back({90, 95, 100, 105, 110});
      if (k == tuned) {  // its runs in the other order: the rounds' differences spread over 40 us
        t.b.node_us.back() = {110, 105, 100, 95, 90};
        for (double& us : t.b.node_us.back()) us -= gain;
      }
    }
    return engine::JudgeEntriesInContext(*without, *with, t, {key, "0xnosuchkey"});
  };
  const auto small = judge(5);
  REQUIRE(small.size() == 2);
  CHECK(small[0].steps >= 1);
  CHECK_MESSAGE(!small[0].Faster(), "5 us faster is within the spread");
  CHECK(!small[1].Faster());  // no step runs it
  const auto large = judge(50);
  CHECK(large[0].Faster());
  CHECK(large[0].without_us - large[0].with_us == doctest::Approx(50));
}

TEST_CASE("entries in context: entries judged together, as a bf16 chain is, stay when their steps are faster as a whole") {
  TempDir dir;
  auto bound = BoundTwice(SaveInvertedResidual(dir / "block.onnx"));
  auto& without = bound.first;
  auto& with = bound.second;
  const auto& bindings = with->bindings();
  std::vector<size_t> convs;
  for (size_t i = 0; i < bindings.size(); ++i)
    if (bindings[i].op && bindings[i].op->op.op_type == "Conv") convs.push_back(i);
  REQUIRE(convs.size() == 3);
  const std::string first = FormatKey(EntryKind::kOp, bindings[convs[0]].op->op.canonical.key),
                    depthwise = FormatKey(EntryKind::kOp, bindings[convs[1]].op->op.canonical.key);
  REQUIRE(first != depthwise);
  // The first convolution's time rises over five runs while the depthwise one's falls, and the
  // other way with the entries, each 6 us faster: each alone differs round by round from -14 to 26
  // us, the two together by 12 us in every round.
  engine::model::InterleavedTiming t;
  for (size_t k = 0; k < bindings.size(); ++k) {
    std::vector<double> runs(5, 100.0);
    if (k == convs[0]) runs = {90, 95, 100, 105, 110};
    if (k == convs[1]) runs = {110, 105, 100, 95, 90};
    t.a.node_us.push_back(runs);
    if (k == convs[0] || k == convs[1]) {
      std::reverse(runs.begin(), runs.end());
      for (double& us : runs) us -= 6;
    }
    t.b.node_us.push_back(runs);
  }
  const auto alone = engine::JudgeEntriesInContext(*without, *with, t, {first, depthwise});
  REQUIRE(alone.size() == 2);
  CHECK_FALSE(alone[0].Faster());
  CHECK_FALSE(alone[1].Faster());
  const engine::EntryInContext together = engine::JudgeTogetherInContext(*without, *with, t, {first, depthwise});
  CHECK(together.key == first);
  CHECK(together.steps >= alone[0].steps + alone[1].steps - 1);
  CHECK(together.Faster());
  CHECK(together.without_us - together.with_us == doctest::Approx(12));
}

}  // namespace
}  // namespace tilebank::testing
