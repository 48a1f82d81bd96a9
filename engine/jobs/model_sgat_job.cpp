#include "engine/jobs/model_sgat_job.h"

#include <unistd.h>

#include <chrono>
#include <tuple>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "engine/jobs/model_opat_job.h"
#include "engine/jobs/opat_job.h"
#include "engine/jobs/result_file.h"
#include "engine/jobs/model_verdict.h"
#include "engine/jobs/sgat_checkpoint.h"
#include "engine/jobs/stored_job.h"
#include "engine/jobs/task_loop.h"
#include "engine/jobs/winner_entry.h"
#include "engine/runtime/model_session.h"
#include "engine/passes/partition.h"
#include "engine/passes/subgraph_file.h"
#include "engine/tuning/subgraph_tuner.h"
#include "engine/backends/halide/templates.h"
#include "engine/core/template_catalog.h"
#include "repo/bank.h"
#include "repo/bank_location.h"
#include "repo/improvement.h"
#include "repo/key.h"
#include "repo/provenance.h"

namespace tilebank::engine {

namespace {

using model::Executor;
using model::Graph;
using model::Subgraph;

// The graph loaded with `ops` and `fusion` and run once on `inputs` (its outputs in `outputs`).
Result<std::unique_ptr<Executor>> LoadAndRun(const Graph& graph, const model::PolicyLookup& ops, const model::FusionLookup& fusion,
                                             const std::vector<TypedTensor>& inputs, std::vector<TypedTensor>* outputs) {
  auto executor = Executor::Load(graph, ops, fusion);
  if (!executor.ok()) return executor.status();
  std::vector<const TypedTensor*> in;
  for (const auto& t : inputs) in.push_back(&t);
  TB_RETURN_IF_ERROR((*executor)->Run(in, outputs));
  return executor;
}

// The whole model's time with the bank as it is now.
Result<Measurement> MeasureModel(const Graph& graph, const Bank* bank, const std::vector<TypedTensor>& inputs, int warmup, int repeats,
                                 std::vector<double>* node_us, std::unique_ptr<Executor>* keep = nullptr) {
  std::vector<TypedTensor> outputs;
  auto executor = LoadAndRun(graph, model::BankLookup(bank), model::BankFusionLookup(bank), inputs, &outputs);
  if (!executor.ok()) return executor.status();
  auto timing = model::TimeModel(**executor, inputs, warmup, repeats);
  if (!timing.ok()) return timing.status();
  if (node_us) *node_us = timing->node_median_us;
  if (keep) *keep = std::move(executor.value());
  return Measurement{timing->median_ms * 1000, timing->spread_ms * 1000, static_cast<uint32_t>(timing->runs)};
}

nlohmann::json SubgraphJson(const SubgraphRecord& r) {
  return {{"performance_after_tune(ms)", r.after_ms},
          {"performance_before_tune(ms)", r.before_ms},
          {"performance_improvement", ImprovementText(r.before_ms, r.after_ms)},
          {"repo_key", r.repo_key}};
}

}  // namespace

std::pair<double, double> SubgraphListTimes(const std::vector<SubgraphRecord>& records) {
  double before = 0, after = 0;
  for (const auto& r : records) {
    before += r.before_ms * r.occurrences;
    after += (r.Stored() || r.status == "hit" ? r.after_ms : r.before_ms) * r.occurrences;
  }
  return {before, after};
}

nlohmann::json SgatResultJson(const std::string& tuning_name, double tuning_seconds, const std::vector<SubgraphRecord>& records,
                              double baseline_ms, std::optional<double> result_ms, const std::string& improvement) {
  nlohmann::json sgat = nlohmann::json::object();
  sgat["model_baseline_performance(ms)"] = baseline_ms;
  if (result_ms) {
    sgat["model_performance_improvement"] = improvement.empty() ? ImprovementText(baseline_ms, *result_ms) : improvement;
    sgat["model_result_performance(ms)"] = *result_ms;
  }
  nlohmann::json added = nlohmann::json::array(), updated = nlohmann::json::array(), failed = nlohmann::json::array();
  std::map<std::string, int> count;
  for (const auto& r : records) {
    count[r.status]++;
    if (r.status == "add") added.push_back(SubgraphJson(r));
    if (r.status == "update") updated.push_back(SubgraphJson(r));
    if (r.status == "failed") failed.push_back(r.repo_key);
  }
  sgat["repo_modified_subgraphs"] = {{"add_repo_subgraphs", added}, {"update_repo_subgraphs", updated}};
  sgat["repo_summary"] = {{"repo_add_num", count["add"]},           {"repo_hit_num", count["hit"]},
                          {"repo_reserved_num", count["reserved"]}, {"repo_unsatisfied_num", count["unsatisfied"]},
                          {"repo_update_num", count["update"]},     {"total_num", records.size()}};
  if (!failed.empty()) sgat["tuning_failed_subgraphs"] = failed;
  nlohmann::json basic = {{"tuning_name", tuning_name}};
  if (result_ms) basic["tuning_time(s)"] = static_cast<int64_t>(tuning_seconds + 0.5);
  return nlohmann::json::array({{{"basic", basic}}, {{"SGAT", sgat}}});
}

namespace {

// One subgraph tuned (engine/tuning/subgraph_tuner.h) or found in the bank: its record, and the entry
// to store when it won.
SubgraphRecord TuneTask(const model::SubgraphTask& task, const Bank& bank, const model::PolicyLookup& ops, const ModelSgatOptions& o,
                        const std::function<bool()>& out_of_time, const std::function<void(const SubgraphTrial&)>& on_trial, std::optional<Entry>* winner,
                        std::optional<Entry>* existing_out, bool* stale_out) {
  const Subgraph& s = task.subgraph;
  SubgraphRecord r;
  r.repo_key = std::to_string(s.key());
  r.name = task.name;
  r.op_type = model::SubgraphOpType(task);
  r.occurrences = task.occurrences;
  auto found = bank.Find(EntryKind::kGraph, s.canonical.text);
  if (!found.ok()) {
    r.status = "failed";
    r.failure = found.status().message();
    return r;
  }
  const std::optional<Entry>& existing = *found;
  const std::optional<FusedPolicy> current = existing ? CurrentFusedPolicy(*existing) : std::nullopt;
  const bool stale = existing && !current;
  *existing_out = existing;
  *stale_out = stale;
  if (current && !o.repeat_tune) {
    r.status = "hit";
    r.fuse = current->fuse;
    r.impl = current->impl;
    r.before_ms = existing->before.median_us / 1000;
    r.after_ms = existing->after.median_us / 1000;
    return r;
  }
  if (out_of_time && out_of_time()) {
    r.status = "skipped";
    return r;
  }
  SubgraphTuneOptions options;
  options.trials = o.trials;
  options.warmup = o.subgraph_warmup;
  options.repeats = o.subgraph_repeats;
  options.on_trial = on_trial;
  options.out_of_time = out_of_time;  // a task begun before the budget ran out stops its candidates when it does
  auto tuned = TuneSubgraph(task.graph, s, ops, options);
  if (!tuned.ok()) {
    r.status = "failed";
    r.failure = tuned.status().message();
    return r;
  }
  if (tuned->tried == 0 && out_of_time && out_of_time()) {  // the budget ran out before its first candidate: skipped, as the subgraphs after it are
    r.status = "skipped";
    return r;
  }
  r.failure = tuned->failure;
  r.before_ms = tuned->baseline.median_us / 1000;
  r.after_ms = tuned->found ? tuned->best.median_us / 1000 : r.before_ms;
  const bool better = tuned->found && tuned->best.median_us < tuned->baseline.median_us * (1.0 - o.min_gain);
  const bool have_entry = existing && !stale;
  r.status = better ? (existing ? "update" : "add") : have_entry ? "reserved" : "unsatisfied";
  if (better) {
    r.fuse = tuned->policy.fuse;
    r.impl = tuned->policy.impl;
    *winner = WinnerEntry(EntryKind::kGraph, s.canonical.op_type, s.canonical.text, EngineTemplate(kFusedTemplateId, tuned->policy.Knobs()),
                          tuned->baseline, tuned->best, tuned->tried, tuned->strategy, bank.meta_at_open().bank_id);
  }
  return r;
}

// The job's checkpoint, from --reload (the named job or the latest SGAT one).
Result<SgatCheckpoint> ReadCheckpoint(Bank& bank, const std::string& requested, const std::string& bank_dir) {
  auto stored = ReadStoredJob(bank, requested, kLatestSgatJob, "subgraph tuning job", bank_dir);
  if (!stored.ok()) return stored.status();
  auto cp = SgatCheckpoint::FromJson(stored->second, stored->first);
  if (!cp.ok()) return cp.status();
  if (cp->finished) return Status::Refused("job " + stored->first + " already finished; its results are in " + cp->result_path);
  return cp;
}

// The bank's graph entries as they were before this job: those it added are absent, those it
// replaced are the previous ones.
model::FusionLookup FusionsWithoutThisRun(const Bank* bank, const ReplacedEntries& replaced) {
  const model::FusionLookup now = model::BankFusionLookup(bank);
  return [now, &replaced](const Subgraph& s) -> std::optional<model::FusionChoice> {
    auto it = replaced.find(std::to_string(s.key()));
    if (it == replaced.end()) return now(s);
    const std::optional<FusedPolicy> previous = it->second ? CurrentFusedPolicy(*it->second) : std::nullopt;
    if (!previous) return std::nullopt;
    return model::FusionChoice{*previous, "bank"};
  };
}

// The job's end on a whole model: the model with this run's entries against the model without
// them, timed interleaved in one process (o.time_models), and the fused outputs against the
// unfused model's. The entries go back (with the checkpoint, in one transaction) when the outputs
// differ or the model is not faster with them beyond the spread (ModelVerdict::Faster). The report's
// baseline and result are that comparison's medians, the result being the model as it now runs;
// its note says what was measured and what was decided.
Status DecideOnEntries(const Graph& graph, Bank& bank, const std::vector<TypedTensor>& inputs, const ModelSgatOptions& o, SgatCheckpoint* cp,
                       ModelSgatReport* report) {
  const model::PolicyLookup ops = model::BankLookup(&bank);
  std::vector<TypedTensor> reference, with_outputs, without_outputs;
  auto unfused = LoadAndRun(graph, ops, nullptr, inputs, &reference);
  if (!unfused.ok()) return unfused.status();
  auto with = LoadAndRun(graph, ops, model::BankFusionLookup(&bank), inputs, &with_outputs);
  if (!with.ok()) return with.status();
  auto without = LoadAndRun(graph, ops, FusionsWithoutThisRun(&bank, cp->replaced), inputs, &without_outputs);
  if (!without.ok()) return without.status();
  auto timing = o.time_models ? o.time_models(**without, **with, inputs) : model::TimeInterleaved(**without, **with, inputs, o.warmup, o.repeats, o.min_timing_s);
  if (!timing.ok()) return timing.status();
  const ModelVerdict verdict = ModelVerdict::Of(*timing);
  // The bank's bf16 entries (OPAT's) run in both; a fused anchor may compute in float32 where the
  // unfused one ran bf16, so the two agree within bf16's tolerance.
  const bool lowered = (*unfused)->LowerPrecisionSteps() > 0 || (*with)->LowerPrecisionSteps() > 0;
  const model::Comparison check = model::CompareTypedTensors(with_outputs, reference, lowered);
  const std::string measured = verdict.Measured(cp->replaced.size());
  // Without entries the two runs are one model: their difference is the machine's, reported as none.
  const bool nothing_stored = cp->replaced.empty();
  report->baseline_ms = verdict.without_ms;
  report->result_ms = verdict.ReportedResultMs(nothing_stored);
  report->improvement = verdict.ReportedText(nothing_stored);
  if (nothing_stored) {
    report->note = "model: " + measured + "; this run stored nothing";
    return Status::Ok();
  }
  if (check.ok && verdict.Faster()) {
    report->note = "model: " + measured + "; kept";
    return Status::Ok();
  }
  // The entries go back and the checkpoint says so in one transaction.
  SgatCheckpoint taken = *cp;
  for (auto& r : taken.records)
    if (r.Stored()) r.status = "unsatisfied";
  taken.replaced.clear();
  TB_RETURN_IF_ERROR(bank.Write([&](WriteTxn& txn) -> Status {
    TB_RETURN_IF_ERROR(TakeBack(txn, EntryKind::kGraph, cp->replaced));
    TB_RETURN_IF_ERROR(txn.PutJob(taken.job_name, taken.ToJson()));
    return txn.PutJob(kLatestSgatJob, taken.job_name);
  }));
  *cp = std::move(taken);
  report->reverted = true;
  report->result_ms = verdict.without_ms;
  report->improvement = verdict.ReportedText(true);
  report->note = "model: " + measured + "; " +
                 (!check.ok ? "the model's output changed with the fused subgraphs (" + check.worst + ")"
                 : verdict.WithinSpread() ? "no faster with them beyond the spread"
                                          : "slower with them by more than the spread") +
                 ": they were taken back, and the model runs as it did before this run";
  return Status::Ok();
}

// What the trials file and the listeners see of a subgraph's candidate.
TrialRecord TrialRecordOf(const SubgraphTrial& t, int budget) {
  TrialRecord r;
  r.trial = t.trial;
  r.budget = budget;
  r.template_id = kFusedTemplateId;
  r.mode = "fusion";
  r.policy = t.policy;
  if (t.time) {
    r.time_us = t.time->median_us;
    r.spread_us = t.time->spread_us;
  }
  r.verdict = t.failure.empty() ? "ok" : t.failure;
  r.best_us = t.best_us;
  r.baseline_us = t.baseline_us;
  return r;
}

}  // namespace

Result<ModelSgatReport> RunModelSgatJob(const ModelSgatOptions& o) {
  const std::string bank_dir = BankDirUnder(o.bank_root, o.soc_version);
  std::unique_ptr<Bank> bank;
  SgatCheckpoint cp;
  if (o.reload) {
    auto opened = Bank::Open(bank_dir, {OpenMode::kReadWrite, o.soc_version, o.fingerprint});
    if (!opened.ok()) return opened.status().WithContext("--reload");
    bank = std::move(opened.value());
    auto read = ReadCheckpoint(*bank, *o.reload, bank_dir);
    if (!read.ok()) return read.status();
    cp = std::move(read.value());
  } else {
    if (o.model_path.empty() == o.subgraphs_path.empty()) return Status::InvalidInput("SGAT takes a model or a subgraph file (one of them)");
    cp.model_path = o.model_path;
    cp.subgraphs_path = o.subgraphs_path;
    cp.input_shapes = o.input_shapes;
    cp.tuning_name = !o.tuning_name.empty() ? o.tuning_name : !o.model_path.empty() ? ModelName(o.model_path)
                                                                                    : std::filesystem::path(o.subgraphs_path).stem().string();
  }
  const bool whole_model = !cp.model_path.empty();

  // Everything is read and checked before a bank or a result file exists.
  Graph graph;
  std::vector<model::SubgraphTask> tasks;
  if (whole_model) {
    auto imported = model::ImportModel(cp.model_path, cp.input_shapes);
    if (!imported.ok()) return imported.status();
    graph = std::move(imported.value());
  } else {
    auto read = model::ReadSubgraphFile(cp.subgraphs_path);
    if (!read.ok()) return read.status();
    tasks = std::move(read.value());
  }
  const std::vector<TypedTensor> inputs = whole_model ? model::RandomTypedInputs(graph, 1) : std::vector<TypedTensor>{};

  if (!o.reload) {
    // The model runs (and is measured) with the bank as it is before anything is created: a model
    // the executor cannot run leaves no bank and no output directory behind.
    std::vector<double> step_us;
    std::vector<double> node_us(graph.nodes.size(), 0.0);  // per node (a fused step's time goes to its anchor)
    if (whole_model) {
      std::unique_ptr<Bank> existing;
      if (IsBankDir(bank_dir)) {
        auto read_only = Bank::Open(bank_dir, {OpenMode::kReadOnly, o.soc_version, o.fingerprint});
        if (!read_only.ok()) return read_only.status();
        existing = std::move(read_only.value());
      }
      std::unique_ptr<Executor> executor;
      auto before = MeasureModel(graph, existing.get(), inputs, o.warmup, o.repeats, &step_us, &executor);
      if (!before.ok()) return before.status();
      cp.baseline_ms = before->median_us / 1000;
      for (size_t i = 0; i < executor->bindings().size() && i < step_us.size(); ++i) node_us[executor->bindings()[i].node] += step_us[i];
    }
    // The output directory next: a run refused for it leaves no bank behind.
    auto stamp = NewJobStamp(JobTypeOf(1), o.output_dir);
    if (!stamp.ok()) return stamp.status();
    OpenOptions open;
    open.mode = OpenMode::kCreateIfMissing;
    open.soc_version = o.soc_version;
    open.fingerprint = o.fingerprint;
    auto opened = Bank::Open(bank_dir, open);
    if (!opened.ok()) return opened.status();
    bank = std::move(opened.value());
    cp.job_name = stamp->job_name;
    cp.result_path = stamp->result_path;
    if (whole_model) {
      tasks = model::DistinctSubgraphs(graph, node_us);
      std::stable_sort(tasks.begin(), tasks.end(), [](const auto& a, const auto& b) { return a.model_us > b.model_us; });
    }
    for (const auto& t : tasks) cp.keys.push_back(std::to_string(t.subgraph.key()));
  } else {
    // The order the job started with (it was measured then); the same subgraphs, or the model changed.
    if (whole_model) tasks = model::DistinctSubgraphs(graph);
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < tasks.size(); ++i) index[std::to_string(tasks[i].subgraph.key())] = i;
    std::vector<model::SubgraphTask> ordered;
    for (const auto& key : cp.keys) {
      auto it = index.find(key);
      if (it == index.end() || index.size() != cp.keys.size())
        return Status::Refused("--reload " + cp.job_name + ": " + (whole_model ? cp.model_path : cp.subgraphs_path) +
                               " no longer has the subgraphs the job started with");
      ordered.push_back(std::move(tasks[it->second]));
    }
    tasks = std::move(ordered);
  }
  size_t failed_before = 0;
  for (const auto& r : cp.records) failed_before += r.status == "failed";
  nlohmann::json about = {{"soc_version", o.soc_version}, {"model", whole_model ? cp.model_path : cp.subgraphs_path},
                          {"model_baseline_ms", cp.baseline_ms}};
  TaskLoop loop({&JobTypeOf(1), cp.job_name, cp.tuning_name, cp.result_path, tasks.size(), cp.elapsed_s, cp.records.size(), failed_before,
                 o.listeners, o.on_task_done, about});
  auto elapsed = [&] { return loop.Elapsed(); };
  auto checkpoint = [&](WriteTxn& txn) -> Status {
    cp.elapsed_s = elapsed();
    return loop.PutCheckpoint(txn, cp.ToJson());
  };
  TB_RETURN_IF_ERROR(bank->Write(checkpoint));
  TB_RETURN_IF_ERROR(loop.WriteResult(SgatResultJson(cp.tuning_name, elapsed(), cp.records, cp.baseline_ms, std::nullopt)));
  loop.JobStarted();

  const model::PolicyLookup ops = model::BankLookup(bank.get());
  std::function<bool()> out_of_time;  // --time-budget: this run's seconds
  if (o.time_budget_s > 0) out_of_time = [&loop, &o] { return loop.ElapsedThisRun() > o.time_budget_s; };
  for (size_t t = cp.records.size(); t < tasks.size(); ++t) {
    std::optional<Entry> winner, existing;
    bool stale = false;
    loop.TaskStarted(t, tasks[t].name, model::SubgraphOpType(tasks[t]));
    SubgraphRecord r = TuneTask(tasks[t], *bank, ops, o, out_of_time,
                                [&](const SubgraphTrial& trial) { loop.Trial(TrialRecordOf(trial, o.trials)); }, &winner, &existing, &stale);
    // The winner (if any) and the checkpoint commit together.
    const auto records_before = cp.records.size();
    TB_RETURN_IF_ERROR(bank->Write([&](WriteTxn& txn) -> Status {
      cp.records.resize(records_before);  // the body may run again when the map grows
      SubgraphRecord done = r;
      if (winner) {
        auto put = txn.Put(*winner, existing && !stale ? PutPolicy::kKeepFaster : PutPolicy::kOverwrite);
        if (!put.ok()) return put.status();
        // Another process stored a faster entry meanwhile: ours was not kept.
        if (put.value() == PutOutcome::kKept) done.status = existing && !stale ? "reserved" : "unsatisfied";
        if (done.Stored() && !cp.replaced.count(done.repo_key)) cp.replaced[done.repo_key] = existing;
      }
      cp.records.push_back(done);
      return checkpoint(txn);
    }));
    const SubgraphRecord& rec = cp.records.back();
    TB_RETURN_IF_ERROR(loop.WriteResult(SgatResultJson(cp.tuning_name, elapsed(), cp.records, cp.baseline_ms, std::nullopt)));
    const bool kept = rec.Stored() || rec.status == "hit";
    const nlohmann::json detail = {{"repo_key", rec.repo_key}, {"occurrences", rec.occurrences}, {"fuse", rec.fuse}, {"impl", rec.impl},
                                   {"template", kept ? kFusedTemplateId : ""}, {"mode", kept ? "fusion" : ""}};
    if (loop.TaskDone(*bank, rec.status, rec.failure, rec.before_ms * 1000, (kept ? rec.after_ms : rec.before_ms) * 1000, detail) &&
        t + 1 < tasks.size()) {
      loop.JobDone(/*stopped=*/true);
      ModelSgatReport report;
      report.tuning_name = cp.tuning_name;
      report.result_path = cp.result_path;
      report.baseline_ms = cp.baseline_ms;
      report.whole_model = whole_model;
      report.records = cp.records;
      report.stopped = true;
      report.result = SgatResultJson(cp.tuning_name, elapsed(), cp.records, cp.baseline_ms, std::nullopt);
      return report;
    }
  }

  ModelSgatReport report;
  report.tuning_name = cp.tuning_name;
  report.result_path = cp.result_path;
  report.baseline_ms = cp.baseline_ms;
  report.whole_model = whole_model;
  if (!whole_model) {
    // A subgraph file: the "model" is its subgraphs, each as often as it occurs (as OPAT sums an op list).
    std::tie(report.baseline_ms, report.result_ms) = SubgraphListTimes(cp.records);
  } else {
    TB_RETURN_IF_ERROR(DecideOnEntries(graph, *bank, inputs, o, &cp, &report));
  }
  cp.finished = true;
  TB_RETURN_IF_ERROR(bank->Write(checkpoint));
  report.records = cp.records;
  report.result = SgatResultJson(cp.tuning_name, elapsed(), cp.records, report.baseline_ms, report.result_ms, report.improvement);
  TB_RETURN_IF_ERROR(loop.WriteResult(report.result));
  loop.JobDone(/*stopped=*/false);
  return report;
}

}  // namespace tilebank::engine
