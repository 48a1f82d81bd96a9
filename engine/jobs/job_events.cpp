#include "engine/jobs/job_events.h"

namespace tilebank::engine {

nlohmann::json TrialRecord::ToJson() const {
  return {{"trial", trial},       {"budget", budget},       {"template", template_id}, {"mode", mode},
          {"policy", policy},     {"time_us", time_us},     {"spread_us", spread_us},  {"verdict", verdict},
          {"best_us", best_us},   {"baseline_us", baseline_us}};
}

TrialRecord TrialRecord::FromJson(const nlohmann::json& j) {
  TrialRecord t;
  t.trial = j.value("trial", 0);
  t.budget = j.value("budget", 0);
  t.template_id = j.value("template", "");
  t.mode = j.value("mode", "");
  t.policy = j.value("policy", "");
  t.time_us = j.value("time_us", 0.0);
  t.spread_us = j.value("spread_us", 0.0);
  t.verdict = j.value("verdict", "");
  t.best_us = j.value("best_us", 0.0);
  t.baseline_us = j.value("baseline_us", 0.0);
  return t;
}

const char* JobEventKindName(JobEvent::Kind kind) {
  switch (kind) {
    case JobEvent::Kind::kJobStarted: return "job_started";
    case JobEvent::Kind::kTaskStarted: return "task_started";
    case JobEvent::Kind::kTrial: return "trial";
    case JobEvent::Kind::kTaskDone: return "task_done";
    case JobEvent::Kind::kJobDone: return "job_done";
  }
  return "";
}

}  // namespace tilebank::engine
