#include "engine/batch/batch_plan.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <set>
#include <sstream>

#include "engine/gdat/gradient_profile.h"
#include "engine/jobs/model_opat_job.h"
#include "engine/runtime/model_session.h"
#include "engine/ir/node_op_spec.h"
#include "engine/ir/onnx_import.h"
#include "engine/batch/batch_job.h"
#include "engine/core/op_flops.h"
#include "engine/core/op_spec.h"
#include "repo/canonical.h"
#include "base/json_text.h"
#include "repo/key.h"

namespace tilebank::engine {

namespace {

// EstimateTaskSeconds' model: a candidate's fixed cost, and its timed runs at this rate.
constexpr double kCandidateOverheadS = 0.1;
constexpr double kRunsPerCandidate = 30;
constexpr double kAssumedFlopsPerS = 50e9;
// EstimateGradientTaskSeconds' fixed cost of one gradient problem (its checkpoint and result file).
constexpr double kGradientTaskOverheadS = 4e-4;

// Tasks by key, the models that need each in input order.
using TaskMap = std::map<std::string, BatchTask>;

void AddTask(TaskMap* tasks, BatchTask task, const std::string& model) {
  auto [it, added] = tasks->try_emplace(task.key, std::move(task));
  if (!model.empty() && std::find(it->second.models.begin(), it->second.models.end(), model) == it->second.models.end())
    it->second.models.push_back(model);
}

// The JSON in `path` (`what` names the file in messages); kInvalidInput when it cannot be read or parsed.
Result<nlohmann::json> ReadJsonFile(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) return Status::InvalidInput("cannot read " + what + " " + path);
  std::stringstream text;
  text << in.rdbuf();
  auto j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded()) return Status::InvalidInput(path + ": not valid JSON");
  return j;
}

Status AddSingleOpTasks(const std::string& path, int trials, TaskMap* tasks) {
  auto read = ReadJsonFile(path, "--singleop");
  if (!read.ok()) return read.status();
  nlohmann::json list = std::move(read.value());
  if (!list.is_array()) list = nlohmann::json::array({list});
  for (size_t i = 0; i < list.size(); ++i) {
    auto t = OperatorTask(list[i], i, trials);
    if (!t.ok()) return t.status().WithContext(path);
    AddTask(tasks, std::move(*t), "");
  }
  return Status::Ok();
}

Status AddModelTasks(const BatchModel& m, const BatchInputs& in, TaskMap* tasks) {
  const std::string name = ModelName(m.path);
  auto graph = model::ImportModel(m.path, m.input_shapes);
  if (!graph.ok()) return graph.status().WithContext(m.path);
  auto model_tasks = BatchJobOf(in.job_type).ModelTasks(*graph, name, in.trials);
  if (!model_tasks.ok()) return model_tasks.status().WithContext(m.path);
  for (BatchTask& t : *model_tasks) AddTask(tasks, std::move(t), name);
  return Status::Ok();
}

Status AddGradientTasks(const std::string& path, TaskMap* tasks) {
  auto j = ReadJsonFile(path, "the gradient profile");
  if (!j.ok()) return j.status();
  auto profile = GradientProfileFromJson(*j, path);
  if (!profile.ok()) return profile.status();
  auto canonical = CanonicalizeGrad(GradProblemDescription(*profile));
  if (!canonical.ok()) return canonical.status().WithContext(path);
  BatchTask t;
  t.kind = JobTypeOf(4).task_kind;
  t.key = FormatKey(EntryKind::kGrad, canonical->key);
  t.name = ProfileName(*profile, path);
  t.op_type = canonical->op_type;
  t.cost_s = EstimateGradientTaskSeconds(profile->gradients.size());
  t.payload = GradientProfileJson(*profile);  // the plan carries the profile: workers need no access to its file
  AddTask(tasks, std::move(t), std::filesystem::path(path).filename().string());
  return Status::Ok();
}

std::string PlanId(const BatchPlan& p) {
  nlohmann::json id = {{"job_type", p.job_type}, {"trials", p.trials}, {"seed", p.seed}, {"shard_tasks", p.shard_tasks}};
  if (p.soc_versions.size() == 1) id["soc_version"] = p.soc_versions[0];  // a one-soc_version plan keeps its version 1 id
  else id["soc_versions"] = p.soc_versions;
  for (const auto& t : p.tasks) id["tasks"].push_back({t.key, t.payload});
  const std::string text = DumpJson(id);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(XXH3_64bits(text.data(), text.size())));
  return hex;
}

Status Bad(const std::string& path, const std::string& what) { return Status::InvalidInput(path + ": " + what); }


// Each soc_version names a bank directory (BANK_ROOT/<soc_version>/) and is given once; `,` `=`
// and `:` separate soc_versions in --soc and submit_batch.sh's arguments.
Status CheckSocVersions(const std::vector<std::string>& socs, const std::string& where) {
  std::set<std::string> seen;
  for (const auto& soc : socs) {
    if (soc.empty() || soc == "." || soc == ".." || soc == "shards" || soc.find_first_of("/\\ \t\n,=:") != std::string::npos)
      return Status::InvalidInput(where + ": \"" + soc + "\" is not a soc_version (it names a directory of the bank root)");
    if (!seen.insert(soc).second) return Status::InvalidInput(where + ": soc_version " + soc + " is given twice");
  }
  return Status::Ok();
}

}  // namespace

Result<BatchTask> OperatorTask(const nlohmann::json& description, size_t index, int trials) {
  auto op = ParseOpSpec(description, index);
  if (!op.ok()) return op.status();
  BatchTask t;
  t.kind = JobTypeOf(2).task_kind;
  t.key = FormatKey(EntryKind::kOp, op->canonical.key);
  t.name = op->name;
  t.op_type = op->op_type;
  t.cost_s = EstimateTaskSeconds(OpFlops(*op), trials);
  t.payload = description;
  return t;
}

Status CheckTuningInputs(const BatchInputs& in) {
  if (!in.gradient_profiles.empty()) return Status::InvalidInput("--gradients and --gradients-list are gradient profiles, for -j 4");
  if (in.models.empty() == in.singleop.empty()) return Status::InvalidInput("a batch needs --model-list, -m or --singleop (one of them)");
  return Status::Ok();
}

Result<std::map<std::string, double>> ReadTaskSeconds(const std::vector<std::string>& result_files) {
  std::map<std::string, double> seconds;
  for (const auto& path : result_files) {
    auto j = ReadJsonFile(path, "the batch result file");
    if (!j.ok()) return j.status();
    const nlohmann::json* batch = nullptr;
    if (j->is_array() && !j->empty() && (*j)[0].is_object() && (*j)[0].contains("basic") && (*j)[0]["basic"].is_object() &&
        (*j)[0]["basic"].contains("batch"))
      batch = &(*j)[0]["basic"]["batch"];
    if (!batch || !batch->is_object())
      return Bad(path, "not a batch's result file (no basic.batch: `batch merge` writes aoe_result_*_batch_<plan_id>.json)");
    if (!batch->contains("task_seconds")) continue;  // a batch whose tasks recorded no time
    if (!(*batch)["task_seconds"].is_object()) return Bad(path, "basic.batch.task_seconds is not an object");
    for (const auto& [key, s] : (*batch)["task_seconds"].items()) {
      if (!s.is_number() || s.get<double>() < 0) return Bad(path, "basic.batch.task_seconds." + key + " is not a number of seconds");
      seconds[key] = s.get<double>();
    }
  }
  return seconds;
}

Calibration Calibrate(const std::map<std::string, double>& measured, std::vector<BatchTask>* tasks) {
  Calibration c;
  std::vector<double> ratios;
  for (const auto& t : *tasks)
    if (auto it = measured.find(t.key); it != measured.end() && t.cost_s > 0 && it->second > 0) ratios.push_back(it->second / t.cost_s);
  if (!ratios.empty()) {
    std::sort(ratios.begin(), ratios.end());
    const size_t n = ratios.size();
    c.scale = n % 2 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
  }
  for (auto& t : *tasks) {
    if (auto it = measured.find(t.key); it != measured.end()) {
      t.cost_s = it->second;
      ++c.measured_tasks;
    } else {
      t.cost_s *= c.scale;
    }
  }
  return c;
}

double EstimateGradientTaskSeconds(size_t gradients) {
  // The planner's dynamic program grows with the square of the gradients: a task took 1.2 ms at
  // 200 gradients, 11.7 ms at 800 and 42 ms at 1600 on a 2-core AVX-512 VM (task_seconds).
  const double hundreds = static_cast<double>(gradients) / 100.0;
  return kGradientTaskOverheadS + hundreds * hundreds * 1.6e-4;
}

double EstimateTaskSeconds(double flops, int trials) {
  return trials * (kCandidateOverheadS + kRunsPerCandidate * flops / kAssumedFlopsPerS);
}

std::vector<std::vector<size_t>> CostBalancedShards(const std::vector<double>& costs, size_t shards) {
  std::vector<size_t> order(costs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return costs[a] > costs[b]; });
  std::vector<std::vector<size_t>> groups(shards);
  std::vector<double> load(shards, 0);
  for (size_t task : order) {
    const size_t g = std::min_element(load.begin(), load.end()) - load.begin();  // the first least loaded
    groups[g].push_back(task);
    load[g] += costs[task];
  }
  return groups;
}

std::vector<std::vector<size_t>> CountBalancedShards(size_t tasks, size_t shards) {
  std::vector<std::vector<size_t>> groups(shards);
  for (size_t i = 0; i < tasks; ++i) groups[i * shards / std::max<size_t>(tasks, 1)].push_back(i);
  return groups;
}

std::vector<size_t> BatchPlan::ShardsOf(const std::string& soc) const {
  std::vector<size_t> list;
  const auto group = std::find(soc_versions.begin(), soc_versions.end(), soc);
  if (group == soc_versions.end()) return list;
  for (size_t i = 0; i < GroupShards(); ++i) list.push_back((group - soc_versions.begin()) * GroupShards() + i);
  return list;
}

double BatchPlan::ShardCost(size_t shard) const {
  double s = 0;
  for (size_t t : TasksOf(shard)) s += tasks[t].cost_s;
  return s;
}

nlohmann::json BatchPlan::ToJson() const {
  nlohmann::json task_list = nlohmann::json::array(), costs = nlohmann::json::array();
  for (const auto& t : tasks) {
    nlohmann::json j = {{"kind", t.kind}, {"key", t.key}, {"name", t.name}, {"op_type", t.op_type}, {"cost_s", t.cost_s}, {"models", t.models}};
    j[JobTypeOf(job_type).payload_field] = t.payload;
    task_list.push_back(std::move(j));
  }
  for (size_t s = 0; s < GroupShards(); ++s) costs.push_back(ShardCost(s));
  nlohmann::json j = {{"format", kBatchPlanFormat}, {"plan_id", plan_id}, {"job_type", job_type}, {"trials", trials}, {"seed", seed},
                      {"shards", shards()}, {"inputs", inputs}, {"tasks", task_list}, {"shard_tasks", shard_tasks}, {"shard_cost_s", costs}};
  if (calibration.Applied()) j["calibration"] = {{"measured_tasks", calibration.measured_tasks}, {"scale", calibration.scale}};
  // What a tilebank of plan format version 1 reads is written as version 1: it refuses the rest by their version.
  if (soc_versions.size() == 1 && JobTypeOf(job_type).measures_here) {
    j["version"] = 1;
    j["soc_version"] = soc_versions[0];
  } else {
    j["version"] = kBatchPlanVersion;
    j["soc_versions"] = soc_versions;
    j["shards_per_soc_version"] = GroupShards();
  }
  return j;
}

namespace {

// The lines of a list file (`flag` names it in messages), each split into words, with the first
// word (a path) made relative to the list; blank lines and # comments skipped. `on_line` gets the
// words and where the line is ("LIST line N").
Status ReadListFile(const std::string& path, const std::string& flag,
                    const std::function<Status(std::vector<std::string>&, const std::string&)>& on_line) {
  std::ifstream in(path);
  if (!in) return Status::InvalidInput("cannot read " + flag + " " + path);
  const std::filesystem::path base = std::filesystem::path(path).parent_path();
  std::string line;
  size_t lines = 0;
  for (int number = 1; std::getline(in, line); ++number) {
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    std::istringstream text(line.substr(first));
    std::vector<std::string> words;
    for (std::string w; text >> w;) words.push_back(w);
    if (words.empty()) continue;  // other white space only
    if (std::filesystem::path(words[0]).is_relative()) words[0] = (base / words[0]).lexically_normal().string();
    TB_RETURN_IF_ERROR(on_line(words, path + " line " + std::to_string(number)));
    ++lines;
  }
  if (lines == 0) return Bad(path, flag + ": the list names nothing");
  return Status::Ok();
}

}  // namespace

Result<std::vector<BatchModel>> ReadModelList(const std::string& path) {
  std::vector<BatchModel> models;
  TB_RETURN_IF_ERROR(ReadListFile(path, "--model-list", [&](std::vector<std::string>& words, const std::string& where) -> Status {
    if (words.size() > 2) return Bad(where, "expected `MODEL.onnx [input shapes]`, found more");
    auto parsed = model::ParseInputShapes(words.size() > 1 ? words[1] : "");
    if (!parsed.ok()) return parsed.status().WithContext(where);
    models.push_back({words[0], *parsed});
    return Status::Ok();
  }));
  return models;
}

Result<std::vector<std::string>> ReadGradientList(const std::string& path) {
  std::vector<std::string> profiles;
  TB_RETURN_IF_ERROR(ReadListFile(path, "--gradients-list", [&](std::vector<std::string>& words, const std::string& where) -> Status {
    if (words.size() > 1) return Bad(where, "expected one gradient profile path, found more");
    profiles.push_back(words[0]);
    return Status::Ok();
  }));
  return profiles;
}

Result<BatchPlan> MakeBatchPlan(const BatchInputs& in) {
  if (!FindJobType(in.job_type))
    return Status::InvalidInput("a batch tunes job type " + JobTypeChoices() + ", not job type " + std::to_string(in.job_type));
  if (in.shards < 1 || in.shards > 100000) return Status::InvalidInput("--shards must be from 1 to 100000");
  if (in.shards * in.soc_versions.size() > 100000)
    return Status::InvalidInput("--shards " + std::to_string(in.shards) + " for each of " + std::to_string(in.soc_versions.size()) +
                                " soc_versions: a plan has 100000 shards at most");
  TB_RETURN_IF_ERROR(BatchJobOf(in.job_type).CheckInputs(in));
  if (in.soc_versions.empty()) return Status::InvalidInput("a batch needs a soc_version to tune for");
  if (Status s = CheckSocVersions(in.soc_versions, "--soc"); !s.ok()) return s;
  TaskMap by_key;
  if (!in.singleop.empty()) TB_RETURN_IF_ERROR(AddSingleOpTasks(in.singleop, in.trials, &by_key));
  for (const auto& m : in.models) TB_RETURN_IF_ERROR(AddModelTasks(m, in, &by_key));
  for (const auto& g : in.gradient_profiles) TB_RETURN_IF_ERROR(AddGradientTasks(g, &by_key));
  BatchPlan p;
  p.job_type = in.job_type;
  p.soc_versions = in.soc_versions;
  p.trials = in.trials;
  p.seed = in.seed;
  if (!in.singleop.empty()) p.inputs.push_back(std::filesystem::absolute(in.singleop).lexically_normal().string());
  for (const auto& m : in.models) p.inputs.push_back(std::filesystem::absolute(m.path).lexically_normal().string());
  for (const auto& g : in.gradient_profiles) p.inputs.push_back(std::filesystem::absolute(g).lexically_normal().string());
  for (auto& [key, t] : by_key) p.tasks.push_back(std::move(t));
  p.calibration = Calibrate(in.measured_seconds, &p.tasks);
  std::vector<double> costs;
  for (const auto& t : p.tasks) costs.push_back(t.cost_s);
  p.shard_tasks = CostBalancedShards(costs, in.shards);
  p.plan_id = PlanId(p);
  return p;
}

Result<BatchPlan> ReadBatchPlan(const std::string& path) {
  auto read = ReadJsonFile(path, "the plan");
  if (!read.ok()) return read.status();
  const nlohmann::json& j = *read;
  if (!j.is_object()) return Bad(path, "not a JSON object (a plan is what `tilebank batch plan` writes)");
  if (!j.contains("format") || !j["format"].is_string() || j["format"].get<std::string>() != kBatchPlanFormat)
    return Bad(path, "\"format\" is not \"" + std::string(kBatchPlanFormat) + "\"");
  if (!j.contains("version") || !j["version"].is_number_integer()) return Bad(path, "\"version\" must be an integer");
  if (j["version"].get<int>() > kBatchPlanVersion)
    return Status::Refused(path + ": plan format version " + std::to_string(j["version"].get<int>()) + " is newer than this tilebank reads (" +
                           std::to_string(kBatchPlanVersion) + ")");
  try {
    BatchPlan p;
    p.job_type = j.at("job_type").get<int>();
    if (!FindJobType(p.job_type)) return Bad(path, "\"job_type\" must be " + JobTypeChoices());
    p.soc_versions = j.contains("soc_versions") ? j["soc_versions"].get<std::vector<std::string>>()
                                                : std::vector<std::string>{j.at("soc_version").get<std::string>()};  // version 1
    if (p.soc_versions.empty()) return Bad(path, "\"soc_versions\" is empty");
    if (Status s = CheckSocVersions(p.soc_versions, "\"soc_versions\""); !s.ok()) return s.WithContext(path);
    p.trials = j.at("trials").get<int>();
    if (p.trials < 1) return Bad(path, "\"trials\" must be at least 1");
    p.seed = j.at("seed").get<uint64_t>();
    p.inputs = j.at("inputs").get<std::vector<std::string>>();
    for (const auto& t : j.at("tasks")) {
      BatchTask task;
      task.kind = t.at("kind").get<std::string>();
      if (task.kind != JobTypeOf(p.job_type).task_kind)
        return Bad(path, "task kind \"" + task.kind + "\" does not belong to job type " + std::to_string(p.job_type));
      task.key = t.at("key").get<std::string>();
      task.name = t.at("name").get<std::string>();
      task.op_type = t.at("op_type").get<std::string>();
      task.cost_s = t.at("cost_s").get<double>();
      task.models = t.at("models").get<std::vector<std::string>>();
      task.payload = t.at(JobTypeOf(p.job_type).payload_field);
      p.tasks.push_back(std::move(task));
    }
    p.shard_tasks = j.at("shard_tasks").get<std::vector<std::vector<size_t>>>();
    if (p.shard_tasks.empty()) return Bad(path, "\"shard_tasks\" is empty");
    if (p.shards() > 100000) return Bad(path, "more than 100000 shards");
    std::set<size_t> seen;
    for (const auto& shard : p.shard_tasks)
      for (size_t t : shard)
        if (t >= p.tasks.size() || !seen.insert(t).second) return Bad(path, "\"shard_tasks\" names task " + std::to_string(t) + " twice or out of range");
    if (seen.size() != p.tasks.size()) return Bad(path, "\"shard_tasks\" leaves tasks out");
    if (j.contains("calibration")) {
      p.calibration.measured_tasks = j["calibration"].at("measured_tasks").get<size_t>();
      p.calibration.scale = j["calibration"].at("scale").get<double>();
    }
    p.plan_id = j.at("plan_id").get<std::string>();
    if (PlanId(p) != p.plan_id) return Bad(path, "\"plan_id\" does not match its tasks (the plan was edited)");
    return p;
  } catch (const nlohmann::json::exception& e) {
    return Bad(path, std::string("a field is missing or of the wrong type: ") + e.what());
  }
}

Result<std::pair<size_t, size_t>> ParseShard(const std::string& text) {
  const size_t slash = text.find('/');
  auto number = [](const std::string& s, size_t* out) {
    if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = std::stoul(s);
    return true;
  };
  size_t i = 0, n = 0;
  if (slash == std::string::npos || !number(text.substr(0, slash), &i) || !number(text.substr(slash + 1), &n) || n < 1 || i >= n)
    return Status::InvalidInput("--shard " + text + ": expected I/N with 0 <= I < N, or mpi");
  return std::make_pair(i, n);
}

Result<std::pair<size_t, size_t>> ShardFromEnvironment() {
  static const char* const kLaunchers[][2] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, {"PMIX_RANK", "PMIX_SIZE"}, {"PMI_RANK", "PMI_SIZE"}, {"SLURM_PROCID", "SLURM_NTASKS"}};
  for (const auto& names : kLaunchers) {
    const char* rank = std::getenv(names[0]);
    const char* size = std::getenv(names[1]);
    if (!rank || !size) continue;
    auto parsed = ParseShard(std::string(rank) + "/" + size);
    if (!parsed.ok())
      return Status::InvalidInput(std::string("--shard mpi: ") + names[0] + "=" + rank + ", " + names[1] + "=" + size + " is not a rank below a size");
    return parsed;
  }
  return Status::InvalidInput("--shard mpi: no MPI rank in the environment (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK or SLURM_PROCID); "
                              "start it with mpirun or srun");
}

}  // namespace tilebank::engine
