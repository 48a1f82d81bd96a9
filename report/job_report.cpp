#include "report/job_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/jobs/job_types.h"
#include "engine/jobs/task_loop.h"
#include "report/html_page.h"
#include "report/svg_chart.h"

namespace tilebank::report {

namespace {

using nlohmann::json;

// One task as the trials file tells it.
struct TaskTrace {
  size_t index = 0;
  std::string name, op;
  std::vector<json> trials;  // "trial" lines
  json done;                 // its "task_done" line (null: not done)
  double started_s = 0;      // the job's elapsed seconds when it started (the previous task's end)
};

struct JobTrace {
  std::string result_path;
  json result;                       // the result file
  std::string kind;                  // opat | sgat | gdat
  json started = json::object();     // the last job_started line (the run that finished it)
  json finished;                     // the last job_done line
  std::map<size_t, TaskTrace> tasks;
  std::vector<size_t> order;         // tasks in the order they were done
  double origin_unix_s = 0;          // the wall clock when the job's elapsed time was 0 (0: unknown)
};

json SectionOf(const json& result, const std::string& name) {
  for (const auto& part : result)
    if (part.is_object() && part.contains(name)) return part[name];
  return json();
}

Result<JobTrace> ReadJob(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read the result file " + path);
  JobTrace job;
  job.result_path = path;
  job.result = json::parse(in, nullptr, false);
  if (job.result.is_discarded() || !job.result.is_array() || job.result.empty() || !job.result[0].is_object() || !job.result[0].contains("basic"))
    return Status::InvalidInput(path + " is not a tuning job's result file (an AOE result: [{\"basic\": ...}, ...])");
  for (const char* kind : {"opat", "sgat", "gdat"}) {
    std::string upper = kind;
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    if (!SectionOf(job.result, upper).is_null()) job.kind = kind;
  }
  const std::string name = std::filesystem::path(path).filename().string();
  for (const char* kind : {"opat", "sgat", "gdat"})
    if (job.kind.empty() && name.find(std::string("_") + kind + "_") != std::string::npos) job.kind = kind;
  std::ifstream trials(engine::TrialsPathOf(path));
  double last_done_s = 0;
  for (std::string line; std::getline(trials, line);) {
    json j = json::parse(line, nullptr, false);
    if (!j.is_object()) continue;  // a line cut by a kill
    const std::string event = j.value("event", "");
    if (event == "job_started") {
      if (job.origin_unix_s == 0 && j.value("unix_s", 0.0) > 0) job.origin_unix_s = j.value("unix_s", 0.0) - j.value("elapsed_s", 0.0);
      job.started = j;
      last_done_s = j.value("elapsed_s", 0.0);
      continue;
    }
    if (event == "job_done") {
      job.finished = j;
      continue;
    }
    const size_t index = j.value("task", size_t{0});
    TaskTrace& t = job.tasks[index];
    if (t.name.empty()) {
      t.index = index;
      t.name = j.value("name", "");
      t.op = j.value("op", "");
      t.started_s = last_done_s;
    }
    if (event == "trial") t.trials.push_back(j);
    if (event == "task_done") {
      t.done = j;
      job.order.push_back(index);
      last_done_s = j.value("elapsed_s", last_done_s);
    }
  }
  return job;
}

bool Stored(const json& done) {
  const std::string s = done.value("status", "");
  return s == "add" || s == "update";
}

double AfterUs(const json& done) { return Stored(done) || done.value("status", "") == "hit" ? done.value("after_us", 0.0) : done.value("before_us", 0.0); }

// "a=1,b=x" -> {{"a","1"},{"b","x"}}
std::vector<std::pair<std::string, std::string>> Knobs(const std::string& policy) {
  std::vector<std::pair<std::string, std::string>> out;
  std::stringstream in(policy);
  for (std::string item; std::getline(in, item, ',');) {
    const size_t eq = item.find('=');
    if (eq != std::string::npos) out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return out;
}

bool IsNumber(const std::string& s) {
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return !s.empty() && end && *end == '\0';
}

bool TrialFailed(const json& t) { return t.value("verdict", "ok") != "ok"; }

std::string TrialTitle(const json& t) {
  return "trial " + std::to_string(t.value("trial", 0)) + " " + t.value("template", "") + " " + t.value("policy", "") + ": " +
         (TrialFailed(t) ? t.value("verdict", "") : Fixed(t.value("time_us", 0.0)) + " us ± " + Fixed(t.value("spread_us", 0.0) / 2));
}

void Header(HtmlPage& page, const JobTrace& job) {
  const engine::JobType* type = engine::JobTypeOfResultKind(job.kind);
  const json basic = job.result[0]["basic"];
  const std::string name = basic.value("tuning_name", "");
  page.Heading((type ? std::string(type->name) + " job " : std::string("job ")) + name);
  std::vector<std::pair<std::string, std::string>> facts = {
      {"result file", job.result_path},
      {"job type", type ? std::to_string(type->id) + " (" + type->name + ", " + type->what + ")" : job.kind},
      {"tilebank", TILEBANK_VERSION}};
  if (job.started.contains("model") && job.started["model"].is_string()) facts.push_back({"model", job.started["model"].get<std::string>()});
  if (job.started.contains("soc_version")) facts.push_back({"soc_version", job.started.value("soc_version", "")});
  if (job.started.contains("job_name")) facts.push_back({"job", job.started.value("job_name", "")});
  if (basic.contains("tuning_time(s)")) facts.push_back({"wall time", std::to_string(basic["tuning_time(s)"].get<int64_t>()) + " s"});
  else facts.push_back({"wall time", "unfinished (tune --reload goes on)"});
  if (!job.finished.is_null())
    facts.push_back({"tasks", std::to_string(job.finished.value("done", 0)) + " done, " + std::to_string(job.finished.value("failed", 0)) + " failed" +
                                  (job.finished.value("stopped", false) ? ", stopped before the last" : "")});
  if (job.tasks.empty() && job.kind != "gdat")
    facts.push_back({"trials", "no trials file beside the result file (" + engine::TrialsPathOf(job.result_path) + ")"});
  page.Facts(facts);
}

void ModelBeforeAfter(HtmlPage& page, const JobTrace& job) {
  std::string upper = job.kind;
  std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
  const json section = SectionOf(job.result, upper);
  if (!section.is_object() || !section.contains("model_baseline_performance(ms)")) return;
  std::vector<Bar> bars = {{"before tuning", section.value("model_baseline_performance(ms)", 0.0), "#7f7f7f", ""}};
  if (section.contains("model_result_performance(ms)"))
    bars.push_back({"after tuning", section.value("model_result_performance(ms)", 0.0), "#2ca02c", ""});
  page.Heading("The model before and after", 3);
  page.Raw(BarChart(bars, {"model time, ms (" + section.value("model_performance_improvement", std::string("unfinished")) + ")", "ms", "", 520}));
  // OPAT on a model: each entry judged where the model runs it, before the final comparison.
  if (section.contains("in_context") && section["in_context"].is_array() && !section["in_context"].empty()) {
    page.Heading("Each entry in context", 3);
    page.Paragraph("The model timed without and with the job's entries in interleaved runs; for each entry, the time of the steps it changes (its "
                   "operator's steps and the steps reading their outputs), median of the runs. The gain is taken round by round (the two "
                   "runs of a round side by side) with its 95% interval; an entry stays only when that interval is above zero and the gain "
                   "is at least 1% of its steps' time.");
    std::vector<std::vector<std::string>> rows;
    for (const json& e : section["in_context"]) {
      const double without = e.value("without_us", 0.0), with = e.value("with_us", 0.0);
      rows.push_back({e.value("node", std::string()), e.value("key", std::string()), std::to_string(e.value("steps", 0)), Fixed(without), Fixed(with),
                      Fixed(e.value("spread_us", 0.0)), Fixed(e.value("gain_us", 0.0)),
                      Fixed(e.value("gain_low_us", 0.0)) + " to " + Fixed(e.value("gain_high_us", 0.0)),
                      without > 0 ? Fixed(e.value("gain_us", 0.0) / without * 100, 1) : "",
                      e.value("precision", std::string("fp32")), e.value("kept", false) ? "kept" : "taken back"});
    }
    page.Table({"node", "key", "steps", "without us", "with us", "spread us", "gain us", "95% interval us", "gain %", "precision", "verdict"}, rows,
               {false, false, true, true, true, true, true, true, true, false, false});
  }
}

void TaskTable(HtmlPage& page, const JobTrace& job) {
  if (job.order.empty()) return;
  page.Heading("Tasks", 3);
  std::vector<std::vector<std::string>> rows;
  for (size_t index : job.order) {
    const TaskTrace& t = job.tasks.at(index);
    const json detail = t.done.value("detail", json::object());
    const double before = t.done.value("before_us", 0.0), after = AfterUs(t.done);
    const size_t failed = static_cast<size_t>(std::count_if(t.trials.begin(), t.trials.end(), TrialFailed));
    rows.push_back({std::to_string(index), t.name, t.op, detail.value("shapes", detail.value("repo_key", detail.value("key", std::string()))),
                    detail.value("template", std::string()), detail.value("mode", std::string()),
                    std::to_string(t.trials.size()) + (failed ? " (" + std::to_string(failed) + " failed)" : ""), Fixed(before), Fixed(after),
                    before > 0 ? Fixed((before - after) / before * 100, 1) : "", t.done.value("status", ""), t.done.value("failure", "")});
  }
  page.Table({"#", "name", "op", "shapes / key", "template", "mode", "trials", "before us", "after us", "improvement %", "update mode", "failure"}, rows,
             {true, false, false, false, false, false, true, true, true, true, false, false});
}

// The whole job's best so far: the time saved by the tasks stored, against the job's time and
// against the trials measured.
void JobProgress(HtmlPage& page, const JobTrace& job) {
  if (job.order.empty()) return;
  Series by_time{"saved so far"}, by_trials{"saved so far"};
  by_time.line = by_trials.line = by_time.step = by_trials.step = true;
  by_time.color = by_trials.color = "#2ca02c";
  double saved = 0, trials = 0;
  by_time.x.push_back(0), by_time.y.push_back(0), by_trials.x.push_back(0), by_trials.y.push_back(0);
  for (size_t index : job.order) {
    const TaskTrace& t = job.tasks.at(index);
    trials += static_cast<double>(t.trials.size());
    if (Stored(t.done)) saved += t.done.value("before_us", 0.0) - t.done.value("after_us", 0.0);
    const std::string title = t.name + ": " + t.done.value("status", "") + ", saved so far " + Fixed(saved) + " us";
    by_time.x.push_back(t.done.value("elapsed_s", 0.0)), by_time.y.push_back(saved), by_time.titles.push_back(title);
    by_trials.x.push_back(trials), by_trials.y.push_back(saved), by_trials.titles.push_back(title);
  }
  by_time.titles.insert(by_time.titles.begin(), "start");
  by_trials.titles.insert(by_trials.titles.begin(), "start");
  page.Heading("Best so far, the whole job", 3);
  page.Raw("<div class=\"charts\">" + PlotChart({by_time}, {"time saved per run (sum over tasks) against the job's time", "elapsed s", "us saved"}) +
           PlotChart({by_trials}, {"... against the trials measured", "trials", "us saved"}) + "</div>");
}

// Each task's trials against trial number and time: points with their spread, failures as red
// crosses, the best so far as a staircase, the baseline dashed.
void TaskCharts(HtmlPage& page, const JobTrace& job, size_t max_tasks) {
  std::vector<const TaskTrace*> with_trials;
  for (size_t index : job.order)
    if (!job.tasks.at(index).trials.empty()) with_trials.push_back(&job.tasks.at(index));
  if (with_trials.empty()) return;
  std::stable_sort(with_trials.begin(), with_trials.end(),
                   [](const TaskTrace* a, const TaskTrace* b) { return a->done.value("before_us", 0.0) > b->done.value("before_us", 0.0); });
  if (with_trials.size() > max_tasks) with_trials.resize(max_tasks);
  page.Heading("Best so far per task (the " + std::to_string(with_trials.size()) + " slowest before tuning)", 3);
  page.Paragraph("Dots: each trial's median with its spread; orange triangles: trials more than 4x slower than the baseline, on the top edge; red crosses: trials that failed or computed a wrong result; line: the best so far; dashed: the baseline to beat.");
  std::string charts = "<div class=\"charts\">";
  for (const TaskTrace* t : with_trials) {
    Series points{"trials"}, best{"best so far"}, points_t{"trials"}, best_t{"best so far"};
    best.points = best_t.points = false;
    best.line = best_t.line = best.step = best_t.step = true;
    best.color = best_t.color = "#2ca02c";
    double baseline = 0, running = INFINITY;
    for (const json& trial : t->trials) {
      const double n = trial.value("trial", 0), s = trial.value("elapsed_s", 0.0) - t->started_s, us = trial.value("time_us", 0.0);
      const bool failed = TrialFailed(trial);
      for (Series* p : {&points, &points_t}) {
        p->x.push_back(p == &points ? n : s);
        p->y.push_back(us);
        p->spread.push_back(trial.value("spread_us", 0.0));
        p->failed.push_back(failed);
        p->titles.push_back(TrialTitle(trial));
      }
      if (!failed) running = std::min(running, us);
      if (std::isfinite(running)) {
        best.x.push_back(n), best.y.push_back(running);
        best_t.x.push_back(s), best_t.y.push_back(running);
      }
      if (trial.value("baseline_us", 0.0) > 0) baseline = trial.value("baseline_us", 0.0);
    }
    ChartOptions by_trial{t->name + " (" + t->op + "): " + t->done.value("status", ""), "trial", "us", 340, 220};
    ChartOptions by_time{t->name + ": against the task's time", "s", "us", 340, 220};
    if (baseline > 0) by_trial.reference = by_time.reference = baseline, by_trial.reference_label = by_time.reference_label = "baseline";
    // Trials far slower than the baseline would flatten the rest: they sit on the top edge.
    const double scale = baseline > 0 ? baseline : std::isfinite(running) ? running : 0;
    if (scale > 0) by_trial.y_cap = by_time.y_cap = 4 * scale;
    charts += PlotChart({points, best}, by_trial) + PlotChart({points_t, best_t}, by_time);
  }
  page.Raw(charts + "</div>");
}

// Every trial against each knob of its template, per task: what the search found where.
void KnobCharts(HtmlPage& page, const JobTrace& job, size_t max_tasks) {
  std::vector<const TaskTrace*> tasks;
  for (size_t index : job.order)
    if (job.tasks.at(index).trials.size() >= 2) tasks.push_back(&job.tasks.at(index));
  std::stable_sort(tasks.begin(), tasks.end(),
                   [](const TaskTrace* a, const TaskTrace* b) { return a->done.value("before_us", 0.0) > b->done.value("before_us", 0.0); });
  if (tasks.size() > max_tasks) tasks.resize(max_tasks);
  if (tasks.empty()) return;
  page.Heading("Every trial against each knob", 3);
  for (const TaskTrace* t : tasks) {
    std::map<std::string, std::vector<const json*>> by_template;
    for (const json& trial : t->trials) by_template[trial.value("template", "")].push_back(&trial);
    std::string charts;
    for (const auto& [template_id, trials] : by_template) {
      std::map<std::string, std::set<std::string>> values;  // knob -> its values seen
      for (const json* trial : trials)
        for (const auto& [k, v] : Knobs(trial->value("policy", ""))) values[k].insert(v);
      for (const auto& [knob, seen] : values) {
        if (seen.size() < 2) continue;  // a knob the search never moved says nothing
        std::vector<std::string> categories(seen.begin(), seen.end());
        if (std::all_of(categories.begin(), categories.end(), IsNumber))
          std::sort(categories.begin(), categories.end(), [](const auto& a, const auto& b) { return std::stod(a) < std::stod(b); });
        Series s{knob};
        for (const json* trial : trials)
          for (const auto& [k, v] : Knobs(trial->value("policy", "")))
            if (k == knob) {
              s.x.push_back(static_cast<double>(std::find(categories.begin(), categories.end(), v) - categories.begin()));
              s.y.push_back(trial->value("time_us", 0.0));
              s.failed.push_back(TrialFailed(*trial));
              s.titles.push_back(TrialTitle(*trial));
            }
        ChartOptions o{template_id + ": " + knob, knob, "us", 300, 200};
        o.x_categories = categories;
        charts += PlotChart({s}, o);
      }
    }
    if (charts.empty()) continue;
    page.Heading(t->name + " (" + t->op + ")", 4);
    page.Raw("<div class=\"charts\">" + charts + "</div>");
  }
}

// GDAT's plans: the backward pass until the last gradient is ready, then the AllReduce left.
void GdatPlans(HtmlPage& page, const JobTrace& job) {
  const json gdat = SectionOf(job.result, "GDAT");
  if (!gdat.is_object() || !gdat.contains("plans")) return;
  std::vector<IntervalRow> rows;
  std::vector<std::vector<std::string>> table;
  for (const json& p : gdat["plans"]) {
    const double finish = p.value("predicted_finish(ms)", 0.0), hangover = p.value("predicted_hangover(ms)", 0.0);
    IntervalRow row{p.value("plan", "")};
    row.intervals.push_back({0, finish - hangover, "#c7c7c7", "backward until the last gradient is ready: " + Fixed(finish - hangover, 3) + " ms"});
    // The segments' AllReduces in order, each sized by its bytes within the time left.
    const std::vector<int64_t> bytes = p.value("segment_bytes", std::vector<int64_t>{});
    double total = 0;
    for (int64_t b : bytes) total += static_cast<double>(b);
    double at = finish - hangover;
    for (size_t i = 0; i < bytes.size() && total > 0; ++i) {
      const double span = hangover * static_cast<double>(bytes[i]) / total;
      row.intervals.push_back({at, at + span, PaletteColor(i), "segment " + std::to_string(i + 1) + ": " + Fixed(bytes[i] / 1048576.0) + " MiB"});
      at += span;
    }
    rows.push_back(row);
    table.push_back({p.value("plan", ""), std::to_string(p.value("segments", 0)), p.value("ends", ""), Fixed(finish, 3), Fixed(hangover, 3),
                     p.contains("measured_iteration(ms)") ? Fixed(p.value("measured_iteration(ms)", 0.0), 3) : ""});
  }
  page.Heading("Gradient fusion plans against the backward timeline", 3);
  page.Paragraph("Grey: the backward pass until its last gradient is ready; coloured: the AllReduce time left after it (the hangover), shared among the segments by their bytes. Predicted by the AllReduce cost model; measured iterations where the job measured them.");
  page.Raw(IntervalChart(rows, {"plans, predicted", "ms after the backward pass starts", "", 900}));
  page.Table({"plan", "segments", "ends", "finish ms", "hangover ms", "measured iteration ms"}, table, {false, true, false, true, true, true});
}

// Several jobs (a batch's shards): each job's tasks on the wall clock, from the first job's start
// (each on its own axis from 0 when a trials file lacks the clock). A reloaded job's runs are drawn
// on its tuning time, which leaves out the pauses between them.
void JobsOverTime(HtmlPage& page, const std::vector<JobTrace>& jobs) {
  double first = INFINITY;
  bool clock = true;
  for (const auto& job : jobs) {
    clock = clock && job.origin_unix_s > 0;
    first = std::min(first, job.origin_unix_s);
  }
  std::vector<IntervalRow> rows;
  for (const auto& job : jobs) {
    const double offset = clock ? job.origin_unix_s - first : 0;
    IntervalRow row{job.result[0]["basic"].value("tuning_name", job.result_path)};
    for (size_t index : job.order) {
      const TaskTrace& t = job.tasks.at(index);
      row.intervals.push_back({offset + t.started_s, offset + t.done.value("elapsed_s", t.started_s), PaletteColor(index),
                               t.name + " (" + t.op + "): " + t.done.value("status", "")});
    }
    rows.push_back(row);
  }
  page.Heading("Jobs over time");
  page.Raw(IntervalChart(rows, {"each job's tasks (a batch's shards)", clock ? "s since the first job started" : "s of each job", "", 1000}));
}

}  // namespace

Status WriteJobReport(const std::vector<std::string>& given, const std::string& output) {
  // A directory stands for the result files under it: a batch's bank root or its shards/ holds
  // each shard's.
  std::vector<std::string> result_paths;
  for (const auto& path : given) {
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) {
      result_paths.push_back(path);
      continue;
    }
    std::vector<std::string> found;
    for (auto it = std::filesystem::recursive_directory_iterator(path, ec); !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.rfind("aoe_result_", 0) == 0 && it->path().extension() == ".json" && name.find("_batch_") == std::string::npos)
        found.push_back(it->path().string());
    }
    if (found.empty()) return Status::NotFound("no result file (aoe_result_*.json) under " + path);
    std::sort(found.begin(), found.end());
    result_paths.insert(result_paths.end(), found.begin(), found.end());
  }
  if (result_paths.empty()) return Status::InvalidInput("give at least one result file (aoe_result_*.json)");
  std::vector<JobTrace> jobs;
  for (const auto& path : result_paths) {
    auto job = ReadJob(path);
    if (!job.ok()) return job.status();
    jobs.push_back(std::move(job.value()));
  }
  HtmlPage page(jobs.size() == 1 ? "tilebank tuning report: " + jobs[0].result[0]["basic"].value("tuning_name", std::string())
                                 : "tilebank tuning report: " + std::to_string(jobs.size()) + " jobs");
  if (jobs.size() > 1) JobsOverTime(page, jobs);
  for (const auto& job : jobs) {
    Header(page, job);
    ModelBeforeAfter(page, job);
    TaskTable(page, job);
    JobProgress(page, job);
    TaskCharts(page, job, 12);
    KnobCharts(page, job, 6);
    GdatPlans(page, job);
  }
  return page.Write(output);
}

}  // namespace tilebank::report
