// Batch tuning on a cluster (docs/BATCH.md): `tilebank batch plan | status | merge`, and what
// `tilebank tune` does with --model-list, --plan or --shard (one worker of a batch).
#include <chrono>
#include <filesystem>
#include <cstdio>
#include <iostream>
#include <thread>

#include "engine/batch/batch_merge.h"
#include "engine/batch/batch_plan.h"
#include "engine/batch/batch_status.h"
#include "engine/batch/shard_dir.h"
#include "engine/batch/shard_worker.h"
#include "engine/jobs/result_file.h"
#include "engine/ir/onnx_import.h"
#include "engine/core/soc_version.h"
#include "repo/bank_location.h"
#include "base/json_text.h"
#include "tools/batch_command.h"
#include "tools/cli_common.h"

namespace tilebank::cli {

namespace {

std::string Duration(double s) {
  char text[32];
  if (s < 1) std::snprintf(text, sizeof text, "%.0f ms", s * 1000);
  else if (s < 120) std::snprintf(text, sizeof text, "%.0f s", s);
  else if (s < 7200) std::snprintf(text, sizeof text, "%.1f min", s / 60);
  else std::snprintf(text, sizeof text, "%.1f h", s / 3600);
  return text;
}

// Prints what a merge did, group by group; the exit code: 0 when every shard finished and no task
// failed, else 1.
int ReportMerge(const std::vector<engine::BatchMergeReport>& reports) {
  bool complete = true;
  for (const auto& m : reports) {
    size_t added = 0, updated = 0, kept = 0;
    for (int k = 0; k < 3; ++k) {
      added += m.counts.added[k];
      updated += m.counts.updated[k];
      kept += m.counts.kept[k];
    }
    std::printf("merged %zu shard banks into %s: %zu added, %zu updated, %zu kept\n", m.shards_merged, m.bank_dir.c_str(), added, updated, kept);
    std::printf("tasks (%s): %zu of %zu done, %zu failed\n", m.soc_version.c_str(), m.tasks_done, m.tasks, m.tasks_failed);
    if (!m.shards_unfinished.empty()) {
      std::string list;
      for (size_t s : m.shards_unfinished) list += (list.empty() ? "" : ", ") + std::to_string(s);
      std::printf("unfinished shards: %s (run them again: they go on where they stopped, then merge again)\n", list.c_str());
    }
    std::printf("result file: %s\n", m.result_path.c_str());
    complete &= m.shards_unfinished.empty() && m.tasks_failed == 0;
  }
  return complete ? kExitOk : kExitFound;
}

// Rank 0 under MPI (or the one process of a whole batch): waits until no shard of soc_version
// `soc` waits or runs, a state left by an earlier run counting as waiting, then merges that group.
int WaitAndMerge(const engine::BatchPlan& plan, const std::string& bank_root, const std::string& soc) {
  const std::string run = engine::CurrentRunId();
  for (;;) {
    auto status = engine::ReadBatchStatus(plan, bank_root);
    if (!status.ok()) return Fail(status.status());
    bool busy = false;
    for (const auto& s : *status)
      busy |= s.soc_version == soc &&
              (s.state == "waiting" || s.state == "running" || (!run.empty() && s.tasks > 0 && s.run_id != run));
    if (!busy) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  auto merged = engine::MergeBatch(plan, bank_root, HostFingerprint(), "", {soc});
  if (!merged.ok()) return Fail(merged.status());
  return ReportMerge(*merged);
}

int TuneShards(const engine::BatchPlan& plan, const std::vector<size_t>& shards, const std::string& bank_root, const std::string& local_dir,
               bool quiet) {
  engine::ShardWorkOptions o;
  o.bank_root = bank_root;
  o.local_dir = local_dir;
  o.fingerprint = HostFingerprint();
  o.listeners = ProgressListeners(quiet);
  bool any_failed = false, any_error = false;
  for (size_t s : shards) {
    // A shard that cannot be tuned is reported and marked failed; the next ones still run.
    auto report = engine::RunShard(plan, s, o);
    if (!report.ok()) {
      Fail(report.status());
      any_error = true;
      continue;
    }
    any_failed |= report->any_failed;
    std::printf("shard %zu/%zu: %zu tasks%s; result file: %s\n", s, plan.shards(), report->tasks,
                report->already_done ? ", finished earlier: nothing tuned" : report->resumed ? ", resumed from its checkpoint" : "",
                report->result_path.empty() ? "(none: no tasks)" : report->result_path.c_str());
    if (!report->warning.empty()) std::fprintf(stderr, "tilebank: warning: shard %zu: %s\n", s, report->warning.c_str());
  }
  return any_error ? kExitError : any_failed ? kExitFound : kExitOk;
}

}  // namespace

std::vector<std::string> SplitSocList(const std::string& text) {
  if (text.empty()) return {HostSocVersion()};
  std::vector<std::string> list;
  for (size_t start = 0;;) {
    const size_t comma = text.find(',', start);
    list.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) return list;
    start = comma + 1;
  }
}

Result<engine::BatchPlan> PlanFromInputs(const BatchInputFlags& f, size_t shards) {
  engine::BatchInputs in;
  in.job_type = f.job_type;
  in.singleop = f.singleop;
  in.soc_versions = SplitSocList(f.soc);
  in.trials = f.trials;
  in.seed = f.seed;
  in.shards = shards;
  if (f.trials < 1) return Status::InvalidInput("--trials must be at least 1");
  if (!f.model.empty() && !f.model_list.empty()) return Status::InvalidInput("give -m or --model-list, not both");
  if (!f.gradients.empty() && !f.gradients_list.empty()) return Status::InvalidInput("give --gradients or --gradients-list, not both");
  if (const BatchInputFlags defaults; !engine::JobTypeOf(f.job_type).measures_here && (f.trials != defaults.trials || f.seed != defaults.seed))
    return Status::InvalidInput(std::string("--trials and --seed do not apply to ") + engine::JobTypeOf(f.job_type).what + " (-j " +
                                std::to_string(f.job_type) + "): its problems are planned, not searched");
  if (!f.calibrate.empty()) {
    auto measured = engine::ReadTaskSeconds(f.calibrate);
    if (!measured.ok()) return measured.status();
    in.measured_seconds = *measured;
  }
  if (!f.gradients.empty()) in.gradient_profiles.push_back(f.gradients);
  if (!f.gradients_list.empty()) {
    auto profiles = engine::ReadGradientList(f.gradients_list);
    if (!profiles.ok()) return profiles.status();
    in.gradient_profiles = *profiles;
  }
  if (!f.model_list.empty()) {
    if (!f.input_shape.empty()) return Status::InvalidInput("--input-shape: with --model-list, give each model's shapes on its line");
    auto models = engine::ReadModelList(f.model_list);
    if (!models.ok()) return models.status();
    in.models = *models;
  } else if (!f.model.empty()) {
    auto shapes = engine::model::ParseInputShapes(f.input_shape);
    if (!shapes.ok()) return shapes.status();
    in.models.push_back({f.model, *shapes});
  }
  return engine::MakeBatchPlan(in);
}

int RunBatchTune(const BatchInputFlags& inputs, const std::string& plan_path, const std::string& shard, const std::string& bank,
                 const std::string& local_dir) {
  const std::string bank_root = ResolveBankRoot(bank);
  const bool has_inputs = !inputs.model.empty() || !inputs.model_list.empty() || !inputs.singleop.empty() || !inputs.gradients.empty() ||
                          !inputs.gradients_list.empty();
  if (!plan_path.empty() && has_inputs)
    return Fail(Status::InvalidInput("--plan holds the batch's inputs: give no -m, --model-list, --singleop, --gradients or --gradients-list"));
  if (plan_path.empty() && !has_inputs)
    return Fail(Status::InvalidInput("a batch worker needs --plan PLAN.json, or the inputs (-m, --model-list, --singleop, --gradients or --gradients-list)"));
  if (inputs.soc.find(',') != std::string::npos)
    return Fail(Status::InvalidInput("--soc " + inputs.soc + ": a worker tunes one soc_version; a plan for several is made with "
                                     "`tilebank batch plan --soc A,B`, and each group's workers are given --plan"));
  // Which shard (or shards) this process works on: "I/N", "I" with --plan (N is the plan's), or
  // "mpi" (the launcher's rank and size); none: every shard, then the merge, in this process.
  const bool mpi = shard == "mpi";
  std::optional<std::pair<size_t, size_t>> place;
  if (mpi) {
    auto rank = engine::ShardFromEnvironment();
    if (!rank.ok()) return Fail(rank.status());
    place = *rank;
  } else if (!shard.empty()) {
    if (shard.find('/') == std::string::npos && plan_path.empty())
      return Fail(Status::InvalidInput("--shard " + shard + ": expected I/N (or I with --plan, or mpi)"));
    auto parsed = engine::ParseShard(shard.find('/') == std::string::npos ? shard + "/100000" : shard);
    if (!parsed.ok()) return Fail(Status::InvalidInput("--shard " + shard + ": expected I/N with 0 <= I < N, I with --plan, or mpi"));
    place = *parsed;
  }
  engine::BatchPlan plan;
  if (!plan_path.empty()) {
    auto read = engine::ReadBatchPlan(plan_path);
    if (!read.ok()) return Fail(read.status());
    plan = std::move(read.value());
  } else {
    auto made = PlanFromInputs(inputs, place ? place->second : 1);
    if (!made.ok()) return Fail(made.status());
    plan = std::move(made.value());
  }
  // The soc_version group this process works on: the plan's only one, or the one --soc names. A
  // launch (one mpirun, or one process for the whole group) tunes one group: its ranks stride
  // through that group's shards, and rank 0 merges that group alone.
  std::string soc = inputs.soc;
  if (soc.empty() && plan.soc_versions.size() == 1) soc = plan.soc_versions[0];
  const std::vector<size_t> group = plan.ShardsOf(soc);
  if (group.empty() && (!place || mpi)) {
    std::string list;
    for (const auto& s : plan.soc_versions) list += (list.empty() ? "" : ", ") + s;
    return Fail(Status::InvalidInput("the plan tunes soc_versions " + list + (soc.empty() ? "" : ", not " + soc) +
                                     ": give --soc with the one this launch tunes (one mpirun per soc_version, on its nodes)"));
  }
  std::vector<size_t> shards;
  if (!place) {
    shards = group;
  } else if (mpi) {
    for (size_t i = place->first; i < group.size(); i += place->second) shards.push_back(group[i]);  // rank r: r, r+size, ... of the group
  } else {
    if (shard.find('/') != std::string::npos && place->second != plan.shards())
      return Fail(Status::InvalidInput("--shard " + shard + ": the plan has " + std::to_string(plan.shards()) + " shards"));
    shards.push_back(place->first);  // RunShard refuses an index the plan lacks
  }
  const int tuned = TuneShards(plan, shards, bank_root, local_dir, inputs.quiet);
  if (tuned == kExitError) return tuned;
  if (!place || (mpi && place->first == 0)) {
    const int merged = WaitAndMerge(plan, bank_root, soc);
    return merged == kExitOk ? tuned : merged;
  }
  return tuned;
}

namespace {

int RunPlan(const BatchInputFlags& flags, size_t shards, const std::string& output) {
  auto made = PlanFromInputs(flags, shards);
  if (!made.ok()) return Fail(made.status());
  if (Status s = engine::WriteJsonAtomically(output, made->ToJson(), 1); !s.ok()) return Fail(s);
  double total = 0, longest = 0;
  for (size_t s = 0; s < made->shards(); ++s) {
    total += made->ShardCost(s);
    longest = std::max(longest, made->ShardCost(s));
  }
  const size_t per_group = made->GroupShards();
  std::printf("plan %s: %zu tasks (%s), %zu shards for each soc_version\n", made->plan_id.c_str(), made->tasks.size(),
              engine::JobTypeOf(made->job_type).tasks_label, per_group);
  for (size_t g = 0; g < made->soc_versions.size(); ++g)
    std::printf("  soc_version %s: shards %zu-%zu\n", made->soc_versions[g].c_str(), g * per_group, (g + 1) * per_group - 1);
  if (made->calibration.Applied())
    std::printf("calibrated: %zu tasks cost the seconds they took in earlier batches; the others' estimates are scaled by %.2f\n",
                made->calibration.measured_tasks, made->calibration.scale);
  else if (!flags.calibrate.empty())
    std::printf("not calibrated: the result files time none of this plan's tasks\n");
  std::printf("estimated tuning time per soc_version: %s in all, the longest shard %s (ideal per shard %s)\n",
              Duration(total / made->soc_versions.size()).c_str(), Duration(longest).c_str(), Duration(total / made->shards()).c_str());
  std::printf("written to %s (on Slurm: scripts/cluster/submit_batch.sh %s BANK_ROOT)\n", output.c_str(), output.c_str());
  return kExitOk;
}

int RunStatus(const std::string& plan_path, const std::string& bank_root, bool json) {
  auto plan = engine::ReadBatchPlan(plan_path);
  if (!plan.ok()) return Fail(plan.status());
  auto rows = engine::ReadBatchStatus(*plan, bank_root);
  if (!rows.ok()) return Fail(rows.status());
  if (std::error_code ec; !std::filesystem::exists(bank_root, ec))
    std::fprintf(stderr, "tilebank: note: %s does not exist yet: no worker has started (or it is not the bank root they were given)\n",
                 bank_root.c_str());
  const nlohmann::json j = engine::BatchStatusJson(*plan, *rows);
  if (json) {
    std::cout << DumpJson(j, 2) << "\n";
    return kExitOk;
  }
  const bool mixed = plan->soc_versions.size() > 1;
  std::printf("%-6s %-8s %6s %6s %6s %6s %10s  %s\n", "shard", "state", "tasks", "done", "failed", "left", "estimate", mixed ? "soc_version  worker" : "worker");
  for (const auto& r : *rows)
    std::printf("%-6zu %-8s %6zu %6zu %6zu %6zu %10s  %s%s%s%s%s\n", r.shard, r.state.c_str(), r.tasks, r.done, r.failed, r.Left(),
                Duration(r.estimated_s).c_str(), mixed ? r.soc_version.c_str() : "", mixed ? "  " : "", r.worker.c_str(),
                r.message.empty() ? "" : ": ", r.message.c_str());
  auto print_totals = [](const std::string& label, const nlohmann::json& t) {
    std::string states;
    for (const auto& [state, n] : t["states"].items()) states += (states.empty() ? "" : ", ") + std::to_string(n.get<size_t>()) + " " + state;
    std::printf("%s %zu shards (%s); tasks %zu, done %zu, failed %zu, left %zu\n", label.c_str(), t["shards"].get<size_t>(), states.c_str(),
                t["tasks"].get<size_t>(), t["done"].get<size_t>(), t["failed"].get<size_t>(), t["left"].get<size_t>());
  };
  if (mixed)
    for (const auto& [soc, t] : j["by_soc_version"].items()) print_totals(soc + ":", t);
  print_totals("all   ", j["total"]);
  return kExitOk;
}

int RunMerge(const std::string& plan_path, const std::string& bank_root, const std::string& output, const std::string& soc) {
  auto plan = engine::ReadBatchPlan(plan_path);
  if (!plan.ok()) return Fail(plan.status());
  auto merged = engine::MergeBatch(*plan, bank_root, HostFingerprint(), output, soc.empty() ? std::vector<std::string>() : SplitSocList(soc));
  if (!merged.ok()) return Fail(merged.status());
  return ReportMerge(*merged);
}

int RunGroups(const std::string& plan_path) {
  auto plan = engine::ReadBatchPlan(plan_path);
  if (!plan.ok()) return Fail(plan.status());
  for (const auto& soc : plan->soc_versions) {
    const auto shards = plan->ShardsOf(soc);
    // Gradient problems are planned, not measured: their shards may run on any node.
    std::printf("%s %zu-%zu%s\n", soc.c_str(), shards.front(), shards.back(), engine::JobTypeOf(plan->job_type).measures_here ? "" : " anywhere");
  }
  return kExitOk;
}

}  // namespace

void RegisterBatchCommands(CLI::App* app, int* exit_code) {
  CLI::App* batch = app->add_subcommand("batch", "batch tuning on a cluster: plan the shards, see their status, merge their banks");
  batch->require_subcommand(1);

  auto plan_flags = std::make_shared<BatchInputFlags>();
  auto plan_out = std::make_shared<std::string>();
  auto plan_shards = std::make_shared<size_t>(1);
  CLI::App* plan = batch->add_subcommand("plan", "the batch's tasks, their estimated cost and the shards, as PLAN.json");
  plan->add_option("-j,--job-type,--job_type", plan_flags->job_type, "2: operators (OPAT); 1: subgraphs (SGAT); 4: gradient fusion (GDAT)")->required();
  AddBatchInputFlags(plan, plan_flags.get());
  plan->add_option("--shards", *plan_shards, "shards (a Slurm array's size; several per node, so a slow node does not hold the batch)")
      ->capture_default_str();
  plan->add_option("--calibrate", plan_flags->calibrate,
                   "earlier batches' result files (aoe_result_*_batch_*.json): their tasks' measured seconds calibrate the costs");
  plan->add_option("-o,--output", *plan_out, "PLAN.json")->required();
  plan->callback([=] { *exit_code = RunPlan(*plan_flags, *plan_shards, *plan_out); });

  auto status_plan = std::make_shared<std::string>(), status_root = std::make_shared<std::string>();
  auto status_json = std::make_shared<bool>(false);
  CLI::App* status = batch->add_subcommand("status", "per shard and in all: done, running, stopped, failed, tasks left");
  status->add_option("plan", *status_plan, "PLAN.json")->required();
  status->add_option("bank_root", *status_root, "the batch's bank root")->required();
  status->add_flag("--json", *status_json, "JSON output");
  status->callback([=] { *exit_code = RunStatus(*status_plan, *status_root, *status_json); });

  auto merge_plan = std::make_shared<std::string>(), merge_root = std::make_shared<std::string>(), merge_out = std::make_shared<std::string>();
  CLI::App* merge = batch->add_subcommand("merge", "merge every shard's bank into BANK_ROOT/<soc_version> and write the batch's result file");
  merge->add_option("plan", *merge_plan, "PLAN.json")->required();
  merge->add_option("bank_root", *merge_root, "the batch's bank root")->required();
  auto merge_soc = std::make_shared<std::string>();
  merge->add_option("--output", *merge_out, "directory of the batch's result file (default: the bank root)");
  merge->add_option("--soc,--soc-version", *merge_soc, "merge only these soc_versions' shards (comma-separated; default: every one of the plan)");
  merge->callback([=] { *exit_code = RunMerge(*merge_plan, *merge_root, *merge_out, *merge_soc); });

  auto groups_plan = std::make_shared<std::string>();
  CLI::App* groups = batch->add_subcommand(
      "groups", "one line per soc_version of the plan: SOC_VERSION FIRST-LAST, its shards, and `anywhere` when any node may run them (-j 4)");
  groups->add_option("plan", *groups_plan, "PLAN.json")->required();
  groups->callback([=] { *exit_code = RunGroups(*groups_plan); });
}

void AddBatchInputFlags(CLI::App* command, BatchInputFlags* f) {
  command->add_option("-m,--model", f->model, "an ONNX model");
  command->add_option("--model-list,--model_list", f->model_list, "a file naming one model a line: `path [input shapes]`");
  command->add_option("--singleop", f->singleop, "an ATC-style single-op list (job type 2)");
  command->add_option("--gradients", f->gradients, "a gradient profile (job type 4)");
  command->add_option("--gradients-list,--gradients_list", f->gradients_list, "a file naming one gradient profile a line (job type 4)");
  command->add_option("--input-shape,--input_shape", f->input_shape, "shapes of -m's dynamic inputs: \"name:d0,d1,...;name2:...\"");
  command->add_option("--soc,--soc-version", f->soc,
                      "soc_version of the nodes that tune it (default: this host's); a plan for several: A,B (a group of shards each)");
  command->add_option("--trials", f->trials, "candidates measured per task")->capture_default_str();
  command->add_option("--seed", f->seed, "random seed of the strategies")->capture_default_str();
}

}  // namespace tilebank::cli
