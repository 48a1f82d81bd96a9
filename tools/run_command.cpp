// `tilebank run`: load an ONNX model, bind every node to a kernel with the bank's policy for it
// (else the default), run it, and report latency (median and spread after warm-up), peak memory,
// and with --data the outputs against ONNX test data. --profile adds each node's time and policy.
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "engine/backends/halide/builder.h"
#include "engine/backends/halide/halide_target.h"
#include "engine/backends/halide/kernel_disk_cache.h"
#include "engine/catalog/builtin_choice.h"
#include "engine/catalog/template_registry.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/jobs/model_opat_job.h"
#include "engine/jobs/result_file.h"
#include "engine/runtime/model_session.h"
#include "engine/ir/onnx_import.h"
#include "engine/passes/subgraph_file.h"
#include "engine/ir/node_op_spec.h"
#include "engine/core/op_flops.h"
#include "engine/backends/op_template.h"
#include "engine/core/host_facts.h"
#include "engine/core/soc_version.h"
#include "engine/core/threads.h"
#include "repo/bank_location.h"
#include "repo/entry_json.h"
#include "tools/cli_common.h"

namespace tilebank::cli {

namespace {

struct RunFlags {
  std::string model, input_shape, data, bank, tune, dump, output;
  int threads = 0, repeat = 30, warmup = 3, trials = 48;
  double time_budget = 0;
  bool profile = false, json = false;
  bool fp32 = false;  // the bank's bf16 entries passed over
  uint64_t seed = 1;
};

// A step's output layout as both profiles print it: row-major unless a kernel hands its native one on.
std::string LayoutName(const engine::model::NodeBinding& b) { return b.layout.empty() ? "row-major" : b.layout; }

// This process's peak resident memory: VmHWM, which starts afresh at exec (getrusage's ru_maxrss
// carries the high-water mark of the process that forked it: a tilebank started by a large Python
// reported the parent's size).
double PeakRssMiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;  // kB
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;
}

// Offline tuning (seed 001): writes DIR/aoe_dump/ for the model `ex` runs: the operators as an ATC
// single-op list for `tune -j 2 --singleop` on another machine of this soc_version, and the
// subgraphs for `tune -j 1 --subgraphs` (SGAT without the model), both made before anything is
// written. Called once the model has run, so a model refused at load or at its first run leaves
// nothing behind.
int WriteDump(const RunFlags& f, const engine::model::Executor& ex) {
  const std::string dir = f.dump + "/aoe_dump";
  const std::string name = engine::ModelName(f.model);
  const nlohmann::json list = engine::ModelOpList(ex, {});
  const auto subgraphs = engine::model::DistinctSubgraphs(ex.graph());
  const nlohmann::json subgraph_list = engine::model::SubgraphFileJson(subgraphs, name, HostSocVersion());
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Fail(Status::InvalidInput("cannot create " + dir + ": " + ec.message()));
  const std::string file = dir + "/" + name + "_ops.json", subgraph_file = dir + "/" + name + "_subgraphs.json";
  if (Status s = engine::WriteJsonAtomically(file, list, 1); !s.ok()) return Fail(s);
  if (Status s = engine::WriteJsonAtomically(subgraph_file, subgraph_list, 1); !s.ok()) return Fail(s);
  std::fprintf(stderr, "dumped %zu operators to %s (soc_version %s)\n", list.size(), file.c_str(), HostSocVersion().c_str());
  std::fprintf(stderr, "dumped %zu subgraphs to %s\n", subgraphs.size(), subgraph_file.c_str());
  return kExitOk;
}

int RunModel(const RunFlags& f) {
  if (f.repeat < 1) return Fail(Status::InvalidInput("--repeat must be at least 1"));
  if (f.warmup < 0) return Fail(Status::InvalidInput("--warmup must not be negative"));
  if (f.threads < 0) return Fail(Status::InvalidInput("--threads must be positive"));
  engine::SetLibraryThreads(f.threads);
  if (!f.tune.empty() && f.tune != "online") return Fail(Status::InvalidInput("--tune " + f.tune + ": the one tuning a run does is 'online'"));
  if (f.fp32 && !f.tune.empty())
    return Fail(Status::InvalidInput("--fp32 with --tune online: online tuning runs the bank as it tunes it; run with --fp32 after it"));
  if (f.trials < 1) return Fail(Status::InvalidInput("--trials must be at least 1"));
  if (auto defaults = engine::DefaultPoliciesFromEnvironment(); !defaults.ok()) return Fail(defaults.status());  // before a bank is made
  auto shapes = engine::model::ParseInputShapes(f.input_shape);
  if (!shapes.ok()) return Fail(shapes.status());
  // Dynamic dims that --input-shape does not fix take the test data's shapes.
  std::vector<std::vector<int64_t>> data_shapes;
  if (!f.data.empty()) {
    auto read = engine::model::InputFileShapes(f.data);
    if (!read.ok()) {
      // A sequence's or an optional's file reads as no tensor: the model says which inputs are ones
      // (the files do not), read only then, since it parses the whole model once more. (Where such a
      // file happens to read as a tensor, its shape is not used: FixInputShapes skips those inputs.)
      std::vector<engine::ValueKind> kinds;
      if (auto signature = engine::model::ReadModelSignature(f.model); signature.ok())
        for (const auto& input : signature->inputs) kinds.push_back(input.kind);
      read = engine::model::InputFileShapes(f.data, kinds);
    }
    if (!read.ok()) return Fail(read.status().WithContext("--data"));
    data_shapes = std::move(read.value());
  }
  std::unique_ptr<engine::model::Executor> executor;
  double load_s = 0;
  std::optional<engine::LoadPhases> load_phases;  // a run without tuning: where its load went
  if (f.tune == "online") {
    // Tune what the bank lacks (seeds 000, 003), then run with it below.
    engine::ModelOpatOptions online;
    online.model_path = f.model;
    online.input_shapes = *shapes;
    online.shapes_by_position = data_shapes;
    online.job.bank_root = ResolveBankRoot(f.bank);
    online.job.soc_version = HostSocVersion();
    online.job.fingerprint = HostFingerprint();
    const char* work = std::getenv("ASCEND_WORK_PATH");
    online.job.output_dir = !f.output.empty() ? f.output : work && *work ? work : ".";
    online.job.tune.trials = f.trials;
    online.job.time_budget_s = f.time_budget;
    online.job.listeners = ProgressListeners(/*quiet=*/false);
    auto tuned = engine::TuneOnline(online);
    if (!tuned.ok()) return Fail(tuned.status());
    if (tuned->report)
      std::fprintf(stderr, "online tuning: %s; %s\n", tuned->report->job.result_path.c_str(), tuned->report->note.c_str());
    else
      std::fprintf(stderr, "online tuning: every operator's policy is in the bank\n");
    executor = std::move(tuned->executor);  // bound to the bank as it now is
    load_s = tuned->load_s;
  } else {
    // The bank is only read, and only when it exists: a run never creates one.
    auto opened = OpenBankToRun(f.bank);
    if (!opened.ok()) return Fail(opened.status());
    std::unique_ptr<Bank> bank = std::move(opened.value());
    const auto load_start = std::chrono::steady_clock::now();
    engine::model::LoadOptions options{/*run_only=*/true};
    if (f.fp32) options.precision = engine::PrecisionMode::kForceFp32;
    options.phases = &load_phases.emplace();
    auto loaded = engine::model::LoadModel(f.model, *shapes, bank.get(), data_shapes, options);
    if (!loaded.ok()) return Fail(loaded.status());
    executor = std::move(loaded.value());
    load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  }
  engine::model::Executor& ex = *executor;
  const std::string kernel_cache = engine::DefaultKernelCacheDir();
  const engine::KernelDiskCacheStats kernels = kernel_cache.empty() ? engine::KernelDiskCacheStats{} : engine::KernelDiskCacheAt(kernel_cache).stats();
  std::vector<engine::TypedTensor> inputs;
  if (!f.data.empty()) {
    auto read = engine::model::ReadTypedInputs(ex.graph(), f.data);
    if (!read.ok()) return Fail(read.status());
    inputs = std::move(read.value());
  } else {
    inputs = engine::model::RandomTypedInputs(ex.graph(), f.seed);
  }
  // The outputs first (checked against the test data), then the timed runs.
  std::vector<const engine::TypedTensor*> in;
  for (const auto& t : inputs) in.push_back(&t);
  std::vector<engine::TypedTensor> outputs;
  const int64_t draws_before = engine::kernels::RandomDraws();
  if (Status s = ex.Run(in, &outputs); !s.ok()) return Fail(s);
  if (!f.dump.empty())
    if (int rc = WriteDump(f, ex); rc != kExitOk) return rc;
  std::optional<engine::model::Comparison> comparison;
  if (!f.data.empty()) {
    // Test data without expected outputs has nothing to check: refused, not passed.
    auto c = engine::model::JudgeTestData(ex, outputs, f.data, engine::kernels::RandomDraws() > draws_before);
    if (!c.ok()) return Fail(c.status().WithContext("--data"));
    comparison = c.value();
  }
  auto timing = engine::model::TimeModel(ex, inputs, f.warmup, f.repeat);
  if (!timing.ok()) return Fail(timing.status());
  size_t from_bank = 0, nearest = 0, builtin = 0, converts = 0, unusable = 0;
  double flops = 0;
  for (const auto& b : ex.bindings()) {
    from_bank += b.policy_source == "bank";
    nearest += b.policy_source == "nearest";
    builtin += b.policy_source == "builtin";
    converts += b.policy_source == "converts";
    unusable += !b.policy_note.empty();
  }
  // Counted over the model's nodes, so that a fused kernel standing for several products (an
  // attention block) counts them all.
  for (const auto& n : ex.graph().nodes)
    if (auto op = engine::model::NodeOpSpec(ex.graph(), n); op.ok()) flops += engine::OpFlops(op->op);
  const double total_us = timing->median_ms * 1000;
  if (f.json) {
    const std::optional<IsaLevel> isa = engine::Host().level;
    nlohmann::json out = {{"model", f.model}, {"soc_version", HostSocVersion()}, {"isa", isa ? std::string(IsaName(*isa)) : "unknown"}, {"nodes", ex.bindings().size()}, {"load_s", load_s}, {"gflop", flops / 1e9},
                          {"kernel_cache", {{"dir", kernel_cache}, {"loaded", kernels.loaded}, {"compiled", kernels.compiled}}}, {"kernels_built_ahead", ex.kernels_built_ahead()},
                          {"latency_ms", {{"median", timing->median_ms}, {"spread", timing->spread_ms}, {"runs", timing->runs}, {"warmup", f.warmup}}},
                          {"memory", {{"activations_bytes", ex.arena_bytes()}, {"weights_bytes", ex.constant_bytes()}, {"peak_rss_mib", PeakRssMiB()}}},
                          {"policies", {{"bank", from_bank}, {"nearest", nearest}, {"builtin", builtin}, {"converts", converts}, {"bank_unusable_here", unusable}}},
                          {"bf16_steps", ex.LowerPrecisionSteps()}};
    // Only where this process built Halide kernels: asking Halide for its target loads it (and LLVM);
    // kernels run from the cache alone carry the target they were compiled for.
    if (const engine::BuilderStats halide = engine::SharedBuilder().stats(); halide.compiles + halide.hits + halide.failures > 0)
      out["halide_target"] = engine::HostHalideTarget().to_string();
    else if (halide.prebuilt > 0)
      out["halide_target"] = engine::SharedBuilder().PrebuiltTarget();
    if (load_phases)
      out["load_phases_s"] = {{"read", load_phases->read}, {"onnx_passes", load_phases->onnx_passes}, {"graph", load_phases->graph},
                              {"bind", load_phases->bind}, {"finish", load_phases->finish}};
    if (comparison)
      out["check"] = {{"ok", comparison->ok}, {"quantized_tolerance", comparison->quantized_tolerance}, {"bf16_tolerance", comparison->bf16_tolerance}, {"scale_tolerance", comparison->scale_tolerance}, {"max_abs_error", comparison->max_abs_error}, {"max_rel_error", comparison->max_rel_error},
                      {"mismatched_elements", comparison->mismatched}, {"compared_elements", comparison->compared}, {"worst", comparison->worst}};
    if (f.profile) {
      nlohmann::json nodes = nlohmann::json::array();
      for (size_t i = 0; i < ex.bindings().size(); ++i) {
        const auto& b = ex.bindings()[i];
        nodes.push_back({{"name", b.name}, {"op_type", b.op_type}, {"shape", b.shape}, {"time_us", timing->node_median_us[i]},
                         {"share", total_us > 0 ? timing->node_median_us[i] / total_us : 0}, {"template", b.template_id},
                         {"policy", b.policy}, {"source", b.policy_source}, {"layout", LayoutName(b)}, {"bind_ms", b.bind_ms}});
        if (!b.policy_note.empty()) nodes.back()["note"] = b.policy_note;
        if (b.lane >= 0) nodes.back()["lane"] = b.lane;
        if (const engine::OpTemplate* t = engine::TemplateById(b.template_id)) nodes.back()["template_version"] = t->version();
      }
      out["profile"] = nodes;
    }
    std::cout << DumpJson(out, 2) << "\n";
  } else {
    std::printf("model      %s (%zu nodes, %.2f GFLOP, loaded in %.2f s)\n", f.model.c_str(), ex.bindings().size(), flops / 1e9, load_s);
    if (!kernel_cache.empty())
      std::printf("kernels    %zu loaded from the kernel cache, %zu compiled into it (%s)\n", kernels.loaded, kernels.compiled, kernel_cache.c_str());
    std::printf("latency    %.3f ms median (spread %.3f ms, %d runs after %d warm-up; %.1f GFLOP/s)\n", timing->median_ms, timing->spread_ms,
                timing->runs, f.warmup, timing->median_ms > 0 ? flops / 1e6 / timing->median_ms : 0.0);
    std::printf("memory     activations %s (buffers reused), weights %s, peak RSS %.0f MiB\n", HumanBytes(ex.arena_bytes()).c_str(),
                HumanBytes(ex.constant_bytes()).c_str(), PeakRssMiB());
    std::printf("policies   %zu from the bank, %zu from the nearest shape in it, %zu built-in\n", from_bank, nearest, builtin);
    if (const size_t lowered = ex.LowerPrecisionSteps())
      std::printf("precision  %zu steps compute in bf16 (bank policies tuned with --precision-mode allow_fp32_to_bf16), the rest in float32\n", lowered);
    if (unusable)
      std::printf("           %zu built-in in place of a bank policy this host's target cannot run (--profile says why)\n", unusable);
    if (comparison)
      std::printf("check      %s: worst absolute error %.3g, relative %.3g (%s)%s%s%s%s\n", comparison->ok ? "outputs match" : "OUTPUTS DIFFER",
                  comparison->max_abs_error, comparison->max_rel_error, comparison->worst.c_str(),
                  comparison->mismatched ? ("; " + std::to_string(comparison->mismatched) + " of " + std::to_string(comparison->compared) +
                                            " elements beyond the tolerance").c_str()
                                         : "",
                  comparison->quantized_tolerance ? "; quantized outputs within two steps of their scale" : "",
                  comparison->bf16_tolerance ? "; bf16 steps: within 1/32 of each value and of the output's largest" : "",
                  comparison->ok && comparison->scale_tolerance ? "; float32 rounding: some elements beyond ONNX's atol 1e-7, within 1e-5 of the output's largest" : "");
    if (f.profile) {
      std::printf("\n%-40s %-20s %-18s %10s %6s  %-9s %-20s %s\n", "node", "op", "shape", "time us", "share", "layout", "template", "policy");
      for (size_t i = 0; i < ex.bindings().size(); ++i) {
        const auto& b = ex.bindings()[i];
        if (b.lane >= 0 && (i == 0 || ex.bindings()[i - 1].lane != b.lane))
          std::printf("-- lane %d: its steps run in turn on one thread, beside the other lane's (TILEBANK_BRANCHES=on)\n", b.lane);
        std::printf("%-40s %-20s %-18s %10.1f %5.1f%%  %-9s %-20s %s%s%s\n", b.name.substr(0, 40).c_str(), b.op_type.c_str(), b.shape.c_str(),
                    timing->node_median_us[i], total_us > 0 ? 100 * timing->node_median_us[i] / total_us : 0,
                    LayoutName(b).c_str(), b.template_id.c_str(),
                    b.policy_source.c_str(), b.policy.empty() ? "" : ": ", b.policy.c_str());
        if (!b.policy_note.empty()) std::printf("%40s why builtin: %s\n", "", b.policy_note.c_str());
      }
    }
  }
  return comparison && !comparison->ok ? kExitFound : kExitOk;
}

}  // namespace

void RegisterRunCommand(CLI::App* app, int* exit_code) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* run = app->add_subcommand("run", "run an ONNX model with the bank's policies: latency, memory, outputs checked against test data");
  run->add_option("-m,--model", flags->model, "the ONNX model")->required();
  run->add_option("--input-shape,--input_shape", flags->input_shape, "shapes of dynamic inputs: \"name:d0,d1,...;name2:...\"");
  run->add_option("--data", flags->data, "ONNX test data: input_<i>.pb (else random inputs) and output_<i>.pb to compare with");
  run->add_option("--bank", flags->bank, "bank root (default: TUNE_BANK_PATH, ASCEND_CACHE_PATH/aoe_data, ~/.local/share/tilebank)");
  run->add_option("--threads", flags->threads, "threads for every library (default: the cores)");
  run->add_option("--repeat", flags->repeat, "timed runs")->capture_default_str();
  run->add_option("--warmup", flags->warmup, "untimed runs before them")->capture_default_str();
  run->add_flag("--profile", flags->profile, "each node's time, share, op type, shape, template and policy source");
  run->add_flag("--fp32", flags->fp32, "every step in float32: the bank's entries in bf16 (tuned with --precision-mode allow_fp32_to_bf16) are "
                "passed over for the built-in choice");
  run->add_flag("--json", flags->json, "JSON output");
  run->add_option("--seed", flags->seed, "seed of the random inputs")->capture_default_str();
  run->add_option("--tune", flags->tune, "online: first tune the operators the bank lacks (into --bank), then run");
  run->add_option("--trials", flags->trials, "online tuning: candidates measured per operator")->capture_default_str();
  run->add_option("--time-budget,--time_budget", flags->time_budget, "online tuning: seconds in all (0: no limit)");
  run->add_option("--output", flags->output, "online tuning: directory of the result file (default: ASCEND_WORK_PATH, else the working directory)");
  run->add_option("--dump", flags->dump, "offline tuning: write DIR/aoe_dump/<model>_ops.json, the operators as an ATC single-op list");
  run->callback([flags, exit_code] { *exit_code = RunModel(*flags); });
}

}  // namespace tilebank::cli
