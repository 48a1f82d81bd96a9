#include "engine/gdat/plan_measurements.h"

#include <fstream>
#include <sstream>

#include "engine/gdat/fusion_plan.h"

namespace tilebank::engine {

namespace {

Status BadMeasurements(const std::string& path, const std::string& what) { return Status::InvalidInput(path + ": " + what); }

Result<std::vector<double>> Samples(const nlohmann::json& plan, const char* field, const std::string& at, const std::string& path) {
  const auto it = plan.find(field);
  if (it == plan.end() || !it->is_array() || it->empty()) return BadMeasurements(path, at + "." + field + " must list at least one sample");
  std::vector<double> out;
  for (const auto& v : *it) {
    if (!v.is_number() || v.get<double>() < 0) return BadMeasurements(path, at + "." + field + " must hold numbers >= 0");
    out.push_back(v.get<double>());
  }
  return out;
}

}  // namespace

Result<std::vector<MeasuredPlan>> ReadPlanMeasurements(const std::string& path, size_t gradient_count) {
  std::ifstream in(path);
  if (!in) return Status::InvalidInput("cannot read the plan measurements '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  const auto j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded()) return Status::InvalidInput("'" + path + "' is not valid JSON");
  if (!j.is_object() || !j.contains("plans") || !j["plans"].is_array() || j["plans"].empty())
    return BadMeasurements(path, "\"plans\" must list the plans measured");
  std::vector<MeasuredPlan> plans;
  bool has_ddp = false;
  for (size_t i = 0; i < j["plans"].size(); ++i) {
    const auto& p = j["plans"][i];
    const std::string at = "plans[" + std::to_string(i) + "]";
    if (!p.is_object()) return BadMeasurements(path, at + " is not an object");
    MeasuredPlan m;
    if (!p.contains("plan") || !p["plan"].is_string() || p["plan"].get<std::string>().empty()) return BadMeasurements(path, at + ".plan must name the plan");
    m.name = p["plan"].get<std::string>();
    if (!p.contains("ends") || !p["ends"].is_string()) return BadMeasurements(path, at + ".ends must be a text such as \"3,10,61\"");
    auto ends = ParseEnds(p["ends"].get<std::string>(), gradient_count);
    if (!ends.ok()) return BadMeasurements(path, at + ".ends: " + ends.status().message());
    m.ends = *ends;
    auto iteration = Samples(p, "iteration_ms", at, path);
    if (!iteration.ok()) return iteration.status();
    auto finish = Samples(p, "finish_ms", at, path);
    if (!finish.ok()) return finish.status();
    auto hangover = Samples(p, "hangover_ms", at, path);
    if (!hangover.ok()) return hangover.status();
    if (finish->size() != iteration->size() || hangover->size() != iteration->size())
      return BadMeasurements(path, at + ": iteration_ms, finish_ms and hangover_ms must hold one sample per iteration each");
    m.iteration_ms = *iteration;
    m.finish_ms = *finish;
    m.hangover_ms = *hangover;
    if (p.contains("finalist")) {
      if (!p["finalist"].is_boolean()) return BadMeasurements(path, at + ".finalist must be true or false");
      m.finalist = p["finalist"].get<bool>();
    }
    if (m.name == "ddp" && !m.finalist) return BadMeasurements(path, at + ": the \"ddp\" plan is the baseline and must be a finalist");
    has_ddp = has_ddp || m.name == "ddp";
    plans.push_back(std::move(m));
  }
  if (!has_ddp) return BadMeasurements(path, "no plan is named \"ddp\": PyTorch DDP's default plan is the baseline and must be measured");
  return plans;
}

const MeasuredPlan& DdpBaseline(const std::vector<MeasuredPlan>& plans) {
  for (const auto& p : plans)
    if (p.name == "ddp") return p;
  return plans.front();
}

const MeasuredPlan& FastestFinalist(const std::vector<MeasuredPlan>& plans) {
  const MeasuredPlan* best = &DdpBaseline(plans);
  for (const auto& m : plans)
    if (m.finalist && m.iteration().median < best->iteration().median) best = &m;
  return *best;
}

bool ClearlyFaster(const MeasuredPlan& plan, const MeasuredPlan& base, double min_gain) {
  const SampleSummary a = plan.iteration(), b = base.iteration();
  return a.median < b.median * (1.0 - min_gain) && a.upper_quartile < b.lower_quartile;
}

}  // namespace tilebank::engine
