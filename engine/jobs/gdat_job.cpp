#include "engine/jobs/gdat_job.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "engine/gdat/allreduce_cost.h"
#include "engine/gdat/gdat_policy.h"
#include "engine/gdat/gradient_profile.h"
#include "engine/jobs/opat_job.h"
#include "engine/jobs/result_file.h"
#include "engine/templates/template_catalog.h"
#include "repo/bank.h"
#include "repo/canonical.h"
#include "repo/improvement.h"
#include "repo/key.h"
#include "repo/provenance.h"

namespace tilebank::engine {

namespace {

nlohmann::json PlanJson(const FusionPlan& plan, const PlanTimeline& t) {
  return {{"plan", plan.name},
          {"segments", plan.segments()},
          {"ends", EndsText(plan.ends)},
          {"segment_bytes", t.segment_bytes},
          {"predicted_finish(ms)", t.finish_ms},
          {"predicted_hangover(ms)", t.hangover_ms}};
}

Entry GradEntry(const CanonicalDescriptor& d, const GradPolicy& policy, double before_ms, double after_ms, int trials, const std::string& bank_id) {
  Entry e;
  e.kind = EntryKind::kGrad;
  e.op_type = d.op_type;
  e.descriptor = d.text;
  e.template_id = kGradTemplateId;
  e.template_version = EngineTemplateVersions()(kGradTemplateId).value_or(0);
  e.tune_mode = TuneMode::kImpl;
  e.policy = policy.Knobs();
  e.before = {before_ms * 1000, 0, 1};
  e.after = {after_ms * 1000, 0, 1};
  e.trials = static_cast<uint32_t>(trials);
  e.strategy = "DP";
  StampProvenance(&e, bank_id);
  return e;
}

}  // namespace

Result<GdatReport> RunGdatJob(const GdatOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  if (o.max_segments < 1) return Status::InvalidInput("--max-segments must be at least 1");
  // Everything is read and planned before a bank or a result file exists.
  auto profile = ReadGradientProfile(o.profile_path);
  if (!profile.ok()) return profile.status();
  auto canonical = CanonicalizeGrad(GradProblemDescription(*profile));
  if (!canonical.ok()) return canonical.status().WithContext(o.profile_path);
  const AllReduceCost cost(profile->allreduce);
  const std::vector<FusionPlan> anchors = AnchorPlans(*profile);
  const std::vector<FusionPlan> tuned = BestPlans(*profile, cost, o.max_segments);
  const FusionPlan& ddp = anchors[2];
  const PlanTimeline ddp_time = Simulate(ddp, *profile, cost);
  const PlanTimeline best_time = Simulate(tuned.front(), *profile, cost);

  GdatReport report;
  report.tuning_name = !o.tuning_name.empty() ? o.tuning_name
                       : !profile->model.empty() ? profile->model
                                                 : std::filesystem::path(o.profile_path).stem().string();
  report.repo_key = FormatKey(EntryKind::kGrad, canonical->key);
  const std::string output_dir = o.output_dir.empty() ? std::string(".") : o.output_dir;
  std::error_code ec;
  std::filesystem::create_directories(output_dir, ec);
  if (ec) return Status::InvalidInput("cannot create the output directory " + output_dir + ": " + ec.message());
  auto bank = Bank::Open(o.bank_root + "/" + o.soc_version, {OpenMode::kCreateIfMissing, o.soc_version, o.fingerprint});
  if (!bank.ok()) return bank.status();
  auto found = (*bank)->Find(EntryKind::kGrad, canonical->text);
  if (!found.ok()) return found.status();
  const std::optional<GradPolicy> current = *found ? ParseGradPolicy(**found) : std::nullopt;

  report.before_ms = ddp_time.finish_ms;
  report.after_ms = ddp_time.finish_ms;
  GradPolicy winner;
  winner.ends = tuned.front().ends;
  winner.segment_bytes = best_time.segment_bytes;
  winner.hangover_ms = best_time.hangover_ms;
  winner.baseline_hangover_ms = ddp_time.hangover_ms;
  if (current && !o.repeat_tune) {
    report.status = "hit";
    report.before_ms = (*found)->before.median_us / 1000;
    report.after_ms = (*found)->after.median_us / 1000;
  } else if (current && current->verified == "measured") {
    report.status = "reserved";  // a plan measured in a running job outranks a prediction
    report.after_ms = (*found)->after.median_us / 1000;
  } else if (best_time.finish_ms < ddp_time.finish_ms * (1.0 - o.min_gain)) {
    const Entry entry = GradEntry(*canonical, winner, ddp_time.finish_ms, best_time.finish_ms, static_cast<int>(tuned.size()),
                                  (*bank)->meta_at_open().bank_id);
    TB_RETURN_IF_ERROR((*bank)->Write([&](WriteTxn& txn) { return txn.Put(entry, PutPolicy::kOverwrite).status(); }));
    report.status = *found ? "update" : "add";
    report.after_ms = best_time.finish_ms;
  } else {
    report.status = current ? "reserved" : "unsatisfied";
  }

  nlohmann::json plans = nlohmann::json::array();
  for (const auto& a : anchors) plans.push_back(PlanJson(a, Simulate(a, *profile, cost)));
  for (const auto& t : tuned) plans.push_back(PlanJson(t, Simulate(t, *profile, cost)));
  nlohmann::json pieces = nlohmann::json::array();
  for (const auto& p : cost.pieces()) pieces.push_back({{"from_bytes", p.from_bytes}, {"alpha(ms)", p.alpha_ms}, {"beta(ms/MB)", p.beta_ms_per_byte * (1 << 20)}});
  auto count = [&](const char* s) { return report.status == s ? 1 : 0; };
  nlohmann::json gdat = {
      {"repo_key", report.repo_key},
      {"status", report.status},
      {"gradient_num", profile->gradients.size()},
      {"gradient_bytes", profile->TotalBytes()},
      {"world_size", profile->world_size},
      {"ranks_per_node", profile->ranks_per_node},
      {"communicator", profile->backend + "/" + profile->transport},
      {"verified", "model"},
      {"performance_before_tune(ms)", report.before_ms},
      {"performance_after_tune(ms)", report.after_ms},
      {"performance_improvement", ImprovementText(report.before_ms, report.after_ms)},
      {"hangover_before_tune(ms)", ddp_time.hangover_ms},
      {"hangover_after_tune(ms)", report.status == "add" || report.status == "update" ? best_time.hangover_ms : ddp_time.hangover_ms},
      {"plans", plans},
      {"allreduce_cost_model", pieces},
      {"repo_summary",
       {{"repo_add_num", count("add")}, {"repo_hit_num", count("hit")}, {"repo_reserved_num", count("reserved")},
        {"repo_unsatisfied_num", count("unsatisfied")}, {"repo_update_num", count("update")}, {"total_num", 1}}}};
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.result = nlohmann::json::array(
      {{{"basic", {{"tuning_name", report.tuning_name}, {"tuning_time(s)", static_cast<int64_t>(seconds + 0.5)}}}}, {{"GDAT", gdat}}});
  const std::string stamp = ResultTimestamp();
  report.result_path = output_dir + "/aoe_result_gdat_" + stamp + "_" + std::to_string(getpid()) + ".json";
  TB_RETURN_IF_ERROR(WriteJsonAtomically(report.result_path, report.result));
  return report;
}

}  // namespace tilebank::engine
