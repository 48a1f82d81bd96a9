#include "engine/jobs/sgat_checkpoint.h"

#include <nlohmann/json.hpp>

#include "base/json_text.h"

namespace tilebank::engine {

namespace {

nlohmann::json RecordJson(const SubgraphRecord& r) {
  return {{"repo_key", r.repo_key}, {"name", r.name},          {"op_type", r.op_type},     {"occurrences", r.occurrences}, {"status", r.status},
          {"fuse", r.fuse},         {"impl", r.impl},           {"before_ms", r.before_ms}, {"after_ms", r.after_ms}, {"failure", r.failure}};
}

SubgraphRecord RecordOf(const nlohmann::json& j) {
  SubgraphRecord r;
  r.repo_key = j.at("repo_key");
  r.name = j.at("name");
  r.op_type = j.at("op_type");
  r.occurrences = j.at("occurrences");
  r.status = j.at("status");
  r.fuse = j.at("fuse");
  r.impl = j.value("impl", "");
  r.before_ms = j.at("before_ms");
  r.after_ms = j.at("after_ms");
  r.failure = j.at("failure");
  return r;
}

}  // namespace

std::string SgatCheckpoint::ToJson() const {
  nlohmann::json records_json = nlohmann::json::array();
  for (const auto& r : records) records_json.push_back(RecordJson(r));
  return DumpJson(nlohmann::json{{"job", "sgat"},
                        {"tuning_name", tuning_name},
                        {"model_path", model_path},
                        {"subgraphs_path", subgraphs_path},
                        {"result_path", result_path},
                        {"input_shapes", input_shapes},
                        {"baseline_ms", baseline_ms},
                        {"keys", keys},
                        {"records", records_json},
                        {"replaced", ReplacedToJson(replaced)},
                        {"finished", finished},
                        {"elapsed_s", elapsed_s}}
      );
}

Result<SgatCheckpoint> SgatCheckpoint::FromJson(const std::string& text, const std::string& job_name) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("job") || j["job"] != "sgat")
    return Status::InvalidInput("--reload: job '" + job_name + "' is not a subgraph tuning (SGAT) job");
  try {
    SgatCheckpoint cp;
    cp.job_name = job_name;
    cp.tuning_name = j.at("tuning_name");
    cp.model_path = j.at("model_path");
    cp.subgraphs_path = j.at("subgraphs_path");
    cp.result_path = j.at("result_path");
    cp.input_shapes = j.at("input_shapes").get<std::map<std::string, std::vector<int64_t>>>();
    cp.baseline_ms = j.at("baseline_ms");
    cp.keys = j.at("keys").get<std::vector<std::string>>();
    for (const auto& r : j.at("records")) cp.records.push_back(RecordOf(r));
    auto replaced = ReplacedFromJson(j.at("replaced"), "--reload: job '" + job_name + "'");
    if (!replaced.ok()) return replaced.status();
    cp.replaced = std::move(replaced.value());
    cp.finished = j.at("finished");
    cp.elapsed_s = j.value("elapsed_s", 0.0);  // absent in checkpoints written before it was recorded
    return cp;
  } catch (const nlohmann::json::exception& e) {
    return Status::Corrupt("--reload: job '" + job_name + "' has a damaged checkpoint: " + e.what());
  }
}

}  // namespace tilebank::engine
