#include "engine/batch/batch_merge.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>

#include "engine/batch/shard_dir.h"
#include "engine/jobs/model_sgat_job.h"
#include "engine/jobs/result_file.h"
#include "repo/bank_location.h"
#include "repo/merge.h"

namespace tilebank::engine {

namespace {

// The shard's bank, or null when it has none; refused when the shard holds a bank of another soc_version.
Result<std::unique_ptr<Bank>> OpenShardBank(const BatchPlan& plan, const std::string& bank_root, size_t shard) {
  const std::string dir = ShardDir(bank_root, shard);
  for (const std::string& soc : SocVersionsUnder(dir))
    if (soc != plan.soc_version)
      return Status::Refused("shard " + std::to_string(shard) + " holds a bank of soc_version " + soc + " (" + dir + "/" + soc +
                             "); the plan is for " + plan.soc_version + ": nothing was merged");
  auto bank = OpenShardBankReadOnly(plan, bank_root, shard);
  if (!bank.ok()) return bank.status().WithContext("nothing was merged");
  return bank;
}

}  // namespace

Result<BatchMergeReport> MergeBatch(const BatchPlan& plan, const std::string& bank_root, const std::string& fingerprint,
                                    const std::string& output_dir) {
  if (!std::filesystem::is_directory(bank_root + "/shards"))
    return Status::InvalidInput("no batch under " + bank_root + " (no shards/ directory): is it the bank root the workers were given?");
  BatchMergeReport report;
  std::vector<std::unique_ptr<Bank>> shard_banks;
  std::vector<OpRecord> operators;
  std::vector<SubgraphRecord> subgraphs;
  double longest_s = 0;
  // Every shard is opened and read before the destination is touched.
  for (size_t s = 0; s < plan.shards(); ++s) {
    report.tasks += plan.shard_tasks[s].size();
    auto bank = OpenShardBank(plan, bank_root, s);
    if (!bank.ok()) return bank.status();
    auto progress = ReadShardProgress(plan, bank->get());
    if (!progress.ok()) return progress.status().WithContext("shard " + std::to_string(s));
    if (!progress->finished && !plan.shard_tasks[s].empty()) report.shards_unfinished.push_back(s);
    report.tasks_done += progress->Done();
    report.tasks_failed += progress->Failed();
    longest_s = std::max(longest_s, progress->elapsed_s);
    for (auto& r : progress->operators) {
      r.index = operators.size();
      operators.push_back(std::move(r));
    }
    for (auto& r : progress->subgraphs) subgraphs.push_back(std::move(r));
    if (*bank) shard_banks.push_back(std::move(bank.value()));
  }
  report.shards_merged = shard_banks.size();
  report.bank_dir = bank_root + "/" + plan.soc_version;
  auto destination = Bank::Open(report.bank_dir, {OpenMode::kCreateIfMissing, plan.soc_version, fingerprint});
  if (!destination.ok()) return destination.status();
  std::vector<const Bank*> sources;
  for (const auto& b : shard_banks) sources.push_back(b.get());
  auto counts = MergeInto(**destination, sources, /*dry_run=*/false);
  if (!counts.ok()) return counts.status();
  report.counts = *counts;

  const bool finished = report.shards_unfinished.empty();
  const std::string name = "batch_" + plan.plan_id;
  const std::string dir = output_dir.empty() ? bank_root : output_dir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::InvalidInput("cannot create the output directory " + dir + ": " + ec.message());
  nlohmann::json result;
  if (plan.job_type == 2) {
    result = OpatResultJson(name, longest_s, operators, finished);
  } else {
    const auto [before_ms, after_ms] = SubgraphListTimes(subgraphs);
    result = SgatResultJson(name, longest_s, subgraphs, before_ms, finished ? std::optional<double>(after_ms) : std::nullopt);
  }
  result[0]["basic"]["batch"] = {{"plan_id", plan.plan_id}, {"shards", plan.shards()}, {"tasks", report.tasks},
                                 {"tasks_done", report.tasks_done}, {"unfinished_shards", report.shards_unfinished}};
  // Each operator task's measured tuning time, keyed by its key (what calibrates cost estimates).
  nlohmann::json task_seconds = nlohmann::json::object();
  for (const OpRecord& r : operators)
    if (r.tune_s > 0) task_seconds[r.key] = std::round(r.tune_s * 1000) / 1000;
  if (!task_seconds.empty()) result[0]["basic"]["batch"]["task_seconds"] = task_seconds;
  report.result_path = dir + "/aoe_result_" + (plan.job_type == 2 ? "opat" : "sgat") + "_batch_" + plan.plan_id + ".json";
  TB_RETURN_IF_ERROR(WriteJsonAtomically(report.result_path, result));
  return report;
}

}  // namespace tilebank::engine
