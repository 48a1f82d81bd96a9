#include "engine/jobs/gdat_job.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>

#include "engine/gdat/allreduce_cost.h"
#include "engine/gdat/gdat_policy.h"
#include "engine/gdat/gradient_profile.h"
#include "engine/gdat/plan_measurements.h"
#include "engine/jobs/opat_job.h"
#include "engine/jobs/task_loop.h"
#include "engine/jobs/result_file.h"
#include "engine/jobs/winner_entry.h"
#include "engine/core/template_catalog.h"
#include "repo/bank.h"
#include "repo/bank_location.h"
#include "repo/canonical.h"
#include "repo/improvement.h"
#include "repo/key.h"
#include "repo/provenance.h"

namespace tilebank::engine {

namespace {

nlohmann::json PlanJson(const FusionPlan& plan, const PlanTimeline& t, const MeasuredPlan* measured) {
  nlohmann::json j = {{"plan", plan.name},
                      {"segments", plan.segments()},
                      {"ends", EndsText(plan.ends)},
                      {"segment_bytes", t.segment_bytes},
                      {"predicted_finish(ms)", t.finish_ms},
                      {"predicted_hangover(ms)", t.hangover_ms}};
  if (measured) {
    const SampleSummary iteration = measured->iteration(), finish = measured->finish();
    j["measured_iterations"] = measured->iteration_ms.size();
    j["measured_iteration(ms)"] = iteration.median;
    j["measured_iteration_spread(ms)"] = iteration.spread;
    j["measured_finish(ms)"] = finish.median;
    j["measured_hangover(ms)"] = measured->hangover().median;
    j["finalist"] = measured->finalist;
    // The cost model's error on this plan: predicted finish over measured finish, minus one.
    if (finish.median > 0) j["model_error"] = t.finish_ms / finish.median - 1.0;
  }
  return j;
}

Measurement MeasurementOf(const MeasuredPlan& plan) {
  const SampleSummary s = plan.iteration();
  return {s.median * 1000, s.spread * 1000, static_cast<uint32_t>(plan.iteration_ms.size())};
}

// The plans the result file lists: the anchors and the planner's, each with its prediction and the
// first measurement of the same ends; then every measurement no listed plan took (another plan with
// the same ends, such as DDP's plan through DDP's own reducer and through tilebank's), by its name.
nlohmann::json PlansJson(const std::vector<FusionPlan>& plans, const GradientProfile& profile, const AllReduceCost& cost,
                         const std::vector<MeasuredPlan>& measured) {
  std::vector<bool> shown(measured.size(), false);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : plans) {
    const MeasuredPlan* measurement = nullptr;
    for (size_t i = 0; i < measured.size() && !measurement; ++i)
      if (measured[i].ends == p.ends) measurement = &measured[i], shown[i] = true;
    out.push_back(PlanJson(p, Simulate(p, profile, cost), measurement));
  }
  for (size_t i = 0; i < measured.size(); ++i) {
    if (shown[i]) continue;
    const FusionPlan plan{measured[i].name, measured[i].ends};
    out.push_back(PlanJson(plan, Simulate(plan, profile, cost), &measured[i]));
  }
  return out;
}

}  // namespace

Result<GdatReport> RunGdatJob(const GdatOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  if (o.max_segments < 1) return Status::InvalidInput("--max-segments must be at least 1");
  // Everything is read and planned before a bank or a result file exists.
  auto profile = o.profile.is_null() ? ReadGradientProfile(o.profile_path) : GradientProfileFromJson(o.profile, o.profile_path);
  if (!profile.ok()) return profile.status();
  auto canonical = CanonicalizeGrad(GradProblemDescription(*profile));
  if (!canonical.ok()) return canonical.status().WithContext(o.profile_path);
  std::vector<MeasuredPlan> measured;
  if (!o.measured_path.empty()) {
    auto read = ReadPlanMeasurements(o.measured_path, profile->gradients.size());
    if (!read.ok()) return read.status();
    measured = std::move(*read);
  }
  const AllReduceCost cost(profile->allreduce);
  std::vector<FusionPlan> plans = AnchorPlans(*profile);
  const FusionPlan ddp = plans[2];
  const std::vector<FusionPlan> tuned = BestPlans(*profile, cost, o.max_segments);
  plans.insert(plans.end(), tuned.begin(), tuned.end());
  const PlanTimeline ddp_time = Simulate(ddp, *profile, cost);
  const PlanTimeline best_time = Simulate(tuned.front(), *profile, cost);

  GdatReport report;
  report.tuning_name = !o.tuning_name.empty() ? o.tuning_name : ProfileName(*profile, o.profile_path);
  report.repo_key = FormatKey(EntryKind::kGrad, canonical->key);
  if (o.print_plans) {
    report.result = {{"repo_key", report.repo_key}, {"plans", PlansJson(plans, *profile, cost, {})}};
    return report;
  }
  const std::string output_dir = o.output_dir.empty() ? std::string(".") : o.output_dir;
  if (o.write_result_file) {
    std::error_code ec;
    std::filesystem::create_directories(output_dir, ec);
    if (ec) return Status::InvalidInput("cannot create the output directory " + output_dir + ": " + ec.message());
  }
  std::unique_ptr<Bank> opened;
  if (!o.bank) {
    auto open = Bank::Open(BankDirUnder(o.bank_root, o.soc_version), {OpenMode::kCreateIfMissing, o.soc_version, o.fingerprint});
    if (!open.ok()) return open.status();
    opened = std::move(open.value());
  }
  Bank* bank = o.bank ? o.bank : opened.get();
  auto found = bank->Find(EntryKind::kGrad, canonical->text);
  if (!found.ok()) return found.status();
  const std::optional<GradPolicy> current = *found ? ParseGradPolicy(**found) : std::nullopt;

  std::vector<int64_t> gradient_bytes;
  std::vector<double> ready_ms;
  for (const auto& g : profile->gradients) {
    gradient_bytes.push_back(g.bytes);
    ready_ms.push_back(g.ready_ms);
  }
  GradPolicy winner;
  winner.ready_ms = ready_ms;
  Measurement before, after;
  bool beats = false;
  double hangover_before = ddp_time.hangover_ms;
  report.measured = !measured.empty();
  if (report.measured) {
    const MeasuredPlan& base = DdpBaseline(measured);
    const MeasuredPlan* best = &FastestFinalist(measured);
    winner.ends = best->ends;
    winner.hangover_ms = best->hangover().median;
    winner.baseline_hangover_ms = hangover_before = base.hangover().median;
    winner.verified = "measured";
    before = MeasurementOf(base);
    after = MeasurementOf(*best);
    beats = ClearlyFaster(*best, base, o.min_gain);
  } else {
    winner.ends = tuned.front().ends;
    winner.hangover_ms = best_time.hangover_ms;
    winner.baseline_hangover_ms = ddp_time.hangover_ms;
    // The cost model's predictions, stored as such: no run measured them (runs 0, verified = model).
    before = {ddp_time.finish_ms * 1000, 0, 0};
    after = {best_time.finish_ms * 1000, 0, 0};
    beats = best_time.finish_ms < ddp_time.finish_ms * (1.0 - o.min_gain);
  }
  winner.segment_bytes = SegmentBytes(winner.ends, gradient_bytes);
  report.before_ms = before.median_us / 1000;
  report.after_ms = before.median_us / 1000;
  double hangover_after = hangover_before;
  if (current && !o.repeat_tune && !report.measured) {
    report.status = "hit";
    report.before_ms = (*found)->before.median_us / 1000;
    report.after_ms = (*found)->after.median_us / 1000;
  } else if (current && current->verified == "measured" && !report.measured) {
    report.status = "reserved";  // a plan measured in a running job outranks a prediction
    report.after_ms = (*found)->after.median_us / 1000;
  } else if (beats) {
    const Entry entry = WinnerEntry(EntryKind::kGrad, canonical->op_type, canonical->text, EngineTemplate(kGradTemplateId, winner.Knobs()),
                                    before, after, static_cast<int>(std::max(tuned.size(), measured.size())), "DP",
                                    bank->meta_at_open().bank_id);
    report.status = *found ? "update" : "add";
    report.after_ms = after.median_us / 1000;
    TB_RETURN_IF_ERROR(bank->Write([&](WriteTxn& txn) -> Status {
      TB_RETURN_IF_ERROR(txn.Put(entry, PutPolicy::kOverwrite).status());
      return o.commit_with_entry ? o.commit_with_entry(txn, report) : Status::Ok();
    }));
    hangover_after = winner.hangover_ms;
  } else {
    report.status = current ? "reserved" : "unsatisfied";
  }

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
      {"verified", report.measured ? "measured" : "model"},
      {"performance", report.measured ? "median training iteration" : "backward start to the last AllReduce done, predicted"},
      {"performance_before_tune(ms)", report.before_ms},
      {"performance_after_tune(ms)", report.after_ms},
      {"performance_improvement", ImprovementText(report.before_ms, report.after_ms)},
      {"hangover_before_tune(ms)", hangover_before},
      {"hangover_after_tune(ms)", hangover_after},
      {"plans", PlansJson(plans, *profile, cost, measured)},
      {"allreduce_cost_model", pieces},
      {"repo_summary",
       {{"repo_add_num", count("add")}, {"repo_hit_num", count("hit")}, {"repo_reserved_num", count("reserved")},
        {"repo_unsatisfied_num", count("unsatisfied")}, {"repo_update_num", count("update")}, {"total_num", 1}}}};
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.result = nlohmann::json::array(
      {{{"basic", {{"tuning_name", report.tuning_name}, {"tuning_time(s)", static_cast<int64_t>(seconds + 0.5)}}}}, {{"GDAT", gdat}}});
  if (!o.write_result_file) return report;
  auto stamp = NewJobStamp(JobTypeOf(4), output_dir);
  if (!stamp.ok()) return stamp.status();
  report.result_path = stamp->result_path;
  TB_RETURN_IF_ERROR(WriteJsonAtomically(report.result_path, report.result));
  return report;
}

}  // namespace tilebank::engine
