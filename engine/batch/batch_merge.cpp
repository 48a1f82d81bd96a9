#include "engine/batch/batch_merge.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>

#include "engine/batch/batch_job.h"
#include "engine/batch/shard_dir.h"
#include "engine/jobs/model_sgat_job.h"
#include "engine/jobs/result_file.h"
#include "engine/core/soc_version.h"
#include "repo/bank_location.h"
#include "repo/merge.h"

namespace tilebank::engine {

namespace {

// The shard's bank, or null when it has none; refused when the shard holds a bank of another soc_version.
Result<std::unique_ptr<Bank>> OpenShardBank(const BatchPlan& plan, const std::string& bank_root, size_t shard) {
  const std::string dir = ShardDir(bank_root, shard);
  for (const std::string& soc : SocVersionsUnder(dir))
    if (soc != plan.SocOf(shard))
      return Status::Refused("shard " + std::to_string(shard) + " holds a bank of soc_version " + soc + " (" + dir + "/" + soc +
                             "); the plan tunes it for " + plan.SocOf(shard) + ": nothing was merged");
  auto bank = OpenShardBankReadOnly(plan, bank_root, shard);
  if (!bank.ok()) return bank.status().WithContext("nothing was merged");
  return bank;
}

// A group's shards as read before the merge: their banks and what their jobs did.
struct GroupRead {
  BatchMergeReport report;
  std::vector<std::unique_ptr<Bank>> banks;
  ShardProgress records;  // every shard's records, in shard order
  double longest_s = 0;
};

Result<GroupRead> ReadGroup(const BatchPlan& plan, const std::string& bank_root, const std::string& soc) {
  GroupRead g;
  g.report.soc_version = soc;
  for (size_t s : plan.ShardsOf(soc)) {
    g.report.tasks += plan.TasksOf(s).size();
    auto bank = OpenShardBank(plan, bank_root, s);
    if (!bank.ok()) return bank.status();
    auto progress = ReadShardProgress(plan, bank->get());
    if (!progress.ok()) return progress.status().WithContext("shard " + std::to_string(s));
    if (!progress->finished && !plan.TasksOf(s).empty()) g.report.shards_unfinished.push_back(s);
    g.report.tasks_done += progress->Done();
    g.report.tasks_failed += progress->Failed();
    g.longest_s = std::max(g.longest_s, progress->elapsed_s);
    for (auto& r : progress->operators) {
      r.index = g.records.operators.size();
      g.records.operators.push_back(std::move(r));
    }
    for (auto& r : progress->subgraphs) g.records.subgraphs.push_back(std::move(r));
    for (auto& r : progress->gradients) g.records.gradients.push_back(std::move(r));
    if (*bank) g.banks.push_back(std::move(bank.value()));
  }
  g.report.shards_merged = g.banks.size();
  return g;
}

// The group's destination bank, BANK_ROOT/<soc_version>/, created when missing. A bank created
// here for another soc_version than this host's takes its fingerprint from the group's shards,
// whose workers ran on that soc_version's machines.
Result<std::unique_ptr<Bank>> OpenDestination(const std::string& bank_root, const std::string& host_fingerprint, const GroupRead& g) {
  const std::string& soc = g.report.soc_version;
  const std::string fingerprint =
      soc != HostSocVersion() && !g.banks.empty() ? g.banks.front()->meta_at_open().fingerprint : host_fingerprint;
  return Bank::Open(BankDirUnder(bank_root, soc), {OpenMode::kCreateIfMissing, soc, fingerprint});
}

// The group's shards merged into `destination`, and its result file written in `dir`.
Status MergeGroup(const BatchPlan& plan, Bank& destination, const std::string& dir, GroupRead* g) {
  BatchMergeReport& report = g->report;
  const std::string& soc = report.soc_version;
  report.bank_dir = destination.dir();
  std::vector<const Bank*> sources;
  for (const auto& b : g->banks) sources.push_back(b.get());
  auto counts = MergeInto(destination, sources, /*dry_run=*/false);
  if (!counts.ok()) return counts.status();
  report.counts = *counts;

  const bool finished = report.shards_unfinished.empty();
  const std::string name = "batch_" + plan.plan_id;
  nlohmann::json result = BatchJobOf(plan.job_type).ResultJson(name, g->longest_s, g->records, finished);
  result[0]["basic"]["batch"] = {{"plan_id", plan.plan_id}, {"soc_version", soc}, {"shards", plan.GroupShards()},
                                 {"tasks", report.tasks}, {"tasks_done", report.tasks_done}, {"unfinished_shards", report.shards_unfinished}};
  // Each operator's or gradient problem's measured tuning time, keyed by its key (what calibrates cost estimates).
  nlohmann::json task_seconds = nlohmann::json::object();
  for (const OpRecord& r : g->records.operators)
    if (r.tune_s > 0) task_seconds[r.key] = std::round(r.tune_s * 1000) / 1000;
  for (const GradientTaskRecord& r : g->records.gradients)
    if (r.tune_s > 0) task_seconds[r.key] = std::round(r.tune_s * 1e6) / 1e6;
  if (!task_seconds.empty()) result[0]["basic"]["batch"]["task_seconds"] = task_seconds;
  report.result_path = dir + "/aoe_result_" + JobTypeOf(plan.job_type).result_kind + "_batch_" + plan.plan_id +
                       (plan.soc_versions.size() > 1 ? "_" + soc : "") + ".json";
  return WriteJsonAtomically(report.result_path, result);
}

}  // namespace

Result<std::vector<BatchMergeReport>> MergeBatch(const BatchPlan& plan, const std::string& bank_root, const std::string& fingerprint,
                                                 const std::string& output_dir, const std::vector<std::string>& soc_versions) {
  if (!std::filesystem::is_directory(bank_root + "/shards"))
    return Status::InvalidInput("no batch under " + bank_root + " (no shards/ directory): is it the bank root the workers were given?");
  std::vector<std::string> socs;  // the plan's order, each once
  for (const auto& soc : soc_versions)
    if (plan.ShardsOf(soc).empty()) return Status::InvalidInput("the plan " + plan.plan_id + " does not tune soc_version " + soc);
  for (const auto& soc : plan.soc_versions)
    if (soc_versions.empty() || std::find(soc_versions.begin(), soc_versions.end(), soc) != soc_versions.end()) socs.push_back(soc);
  // Every shard of every group is read, and every destination opened, before a bank is written.
  std::vector<GroupRead> groups;
  std::vector<std::unique_ptr<Bank>> destinations;
  for (const auto& soc : socs) {
    auto g = ReadGroup(plan, bank_root, soc);
    if (!g.ok()) return g.status();
    groups.push_back(std::move(g.value()));
  }
  for (const auto& g : groups) {
    auto destination = OpenDestination(bank_root, fingerprint, g);
    if (!destination.ok()) return destination.status().WithContext("nothing was merged");
    destinations.push_back(std::move(destination.value()));
  }
  const std::string dir = output_dir.empty() ? bank_root : output_dir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::InvalidInput("cannot create the output directory " + dir + ": " + ec.message());
  std::vector<BatchMergeReport> reports;
  for (size_t i = 0; i < groups.size(); ++i) {
    TB_RETURN_IF_ERROR(MergeGroup(plan, *destinations[i], dir, &groups[i]));
    reports.push_back(groups[i].report);
  }
  return reports;
}

}  // namespace tilebank::engine
