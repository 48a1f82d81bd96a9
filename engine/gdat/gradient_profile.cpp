#include "engine/gdat/gradient_profile.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace tilebank::engine {

namespace {

Status Bad(const std::string& where, const std::string& what) { return Status::InvalidInput(where + ": " + what); }

}  // namespace

int64_t GradientDtypeBytes(const std::string& dtype) {
  if (dtype == "float32" || dtype == "int32") return 4;
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  if (dtype == "float64" || dtype == "int64") return 8;
  return 0;
}

int64_t GradientProfile::TotalBytes() const {
  int64_t total = 0;
  for (const auto& g : gradients) total += g.bytes;
  return total;
}

Result<GradientProfile> GradientProfileFromJson(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return Bad(where, "a gradient profile is a JSON object");
  GradientProfile p;
  auto integer = [&](const char* key, int* out, int min) -> Status {
    if (!j.contains(key)) return Status::Ok();
    if (!j[key].is_number_integer() || j[key].get<int64_t>() < min || j[key].get<int64_t>() > (1 << 24))
      return Bad(where, std::string("\"") + key + "\" must be an integer >= " + std::to_string(min));
    *out = j[key].get<int>();
    return Status::Ok();
  };
  if (j.contains("model")) {
    if (!j["model"].is_string()) return Bad(where, "\"model\" must be a string");
    p.model = j["model"].get<std::string>();
  }
  if (!j.contains("world_size")) return Bad(where, "\"world_size\" is missing");
  TB_RETURN_IF_ERROR(integer("world_size", &p.world_size, 1));
  TB_RETURN_IF_ERROR(integer("ranks_per_node", &p.ranks_per_node, 1));
  TB_RETURN_IF_ERROR(integer("iterations", &p.iterations, 0));
  if (p.ranks_per_node > p.world_size) return Bad(where, "\"ranks_per_node\" is larger than \"world_size\"");
  if (j.contains("communicator")) {
    const auto& c = j["communicator"];
    if (!c.is_object() || !c.value("backend", nlohmann::json()).is_string() || !c.value("transport", nlohmann::json()).is_string())
      return Bad(where, "\"communicator\" must be {\"backend\": \"...\", \"transport\": \"...\"}");
    p.backend = c["backend"].get<std::string>();
    p.transport = c["transport"].get<std::string>();
  }
  if (j.contains("backward_ms")) {
    if (!j["backward_ms"].is_number() || j["backward_ms"].get<double>() < 0) return Bad(where, "\"backward_ms\" must be a number >= 0");
    p.backward_ms = j["backward_ms"].get<double>();
  }
  if (!j.contains("gradients") || !j["gradients"].is_array() || j["gradients"].empty())
    return Bad(where, "\"gradients\" must be a non-empty list");
  for (size_t i = 0; i < j["gradients"].size(); ++i) {
    const auto& g = j["gradients"][i];
    const std::string at = "gradients[" + std::to_string(i) + "]";
    if (!g.is_object()) return Bad(where, at + " is not an object");
    GradientRecord r;
    if (g.contains("name")) {
      if (!g["name"].is_string()) return Bad(where, at + ".name must be a string");
      r.name = g["name"].get<std::string>();
    }
    if (!g.contains("numel") || !g["numel"].is_number_integer() || g["numel"].get<int64_t>() < 1 || g["numel"].get<int64_t>() > (int64_t{1} << 40))
      return Bad(where, at + ".numel must be an integer >= 1");
    r.numel = g["numel"].get<int64_t>();
    if (g.contains("type")) {
      if (!g["type"].is_string()) return Bad(where, at + ".type must be a string");
      r.dtype = g["type"].get<std::string>();
    }
    const int64_t size = GradientDtypeBytes(r.dtype);
    if (size == 0) return Bad(where, at + ".type '" + r.dtype + "' is not float32, float16, bfloat16, float64, int32 or int64");
    r.bytes = r.numel * size;
    if (!g.contains("ready_ms") || !g["ready_ms"].is_number() || g["ready_ms"].get<double>() < 0)
      return Bad(where, at + ".ready_ms must be a number >= 0");
    r.ready_ms = g["ready_ms"].get<double>();
    if (!p.gradients.empty() && r.ready_ms < p.gradients.back().ready_ms)
      return Bad(where, at + ".ready_ms goes back in time: gradients are listed in the order they become ready");
    p.gradients.push_back(std::move(r));
  }
  if (!j.contains("allreduce") || !j["allreduce"].is_array() || j["allreduce"].size() < 2)
    return Bad(where, "\"allreduce\" must list the AllReduce time of at least two message sizes");
  for (size_t i = 0; i < j["allreduce"].size(); ++i) {
    const auto& a = j["allreduce"][i];
    const std::string at = "allreduce[" + std::to_string(i) + "]";
    if (!a.is_object() || !a.value("bytes", nlohmann::json()).is_number_integer() || a["bytes"].get<int64_t>() < 1)
      return Bad(where, at + ".bytes must be an integer >= 1");
    if (!a.value("ms", nlohmann::json()).is_number() || a["ms"].get<double>() < 0) return Bad(where, at + ".ms must be a number >= 0");
    AllReducePoint point{a["bytes"].get<int64_t>(), a["ms"].get<double>()};
    if (!p.allreduce.empty() && point.bytes <= p.allreduce.back().bytes)
      return Bad(where, at + ".bytes: the sweep's sizes must increase");
    p.allreduce.push_back(point);
  }
  return p;
}

Result<GradientProfile> ReadGradientProfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::InvalidInput("cannot read the gradient profile '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  auto j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded()) return Status::InvalidInput("'" + path + "' is not valid JSON");
  return GradientProfileFromJson(j, path);
}

nlohmann::json GradientProfileJson(const GradientProfile& p) {
  nlohmann::json grads = nlohmann::json::array(), sweep = nlohmann::json::array();
  for (const auto& g : p.gradients) grads.push_back({{"name", g.name}, {"numel", g.numel}, {"type", g.dtype}, {"ready_ms", g.ready_ms}});
  for (const auto& a : p.allreduce) sweep.push_back({{"bytes", a.bytes}, {"ms", a.ms}});
  return {{"model", p.model},
          {"world_size", p.world_size},
          {"ranks_per_node", p.ranks_per_node},
          {"communicator", {{"backend", p.backend}, {"transport", p.transport}}},
          {"iterations", p.iterations},
          {"backward_ms", p.backward_ms},
          {"gradients", grads},
          {"allreduce", sweep}};
}

nlohmann::json GradProblemDescription(const GradientProfile& p) {
  nlohmann::json grads = nlohmann::json::array();
  for (const auto& g : p.gradients) grads.push_back({{"numel", g.numel}, {"type", g.dtype}});
  return {{"gradients", grads},
          {"world_size", p.world_size},
          {"ranks_per_node", p.ranks_per_node},
          {"communicator", {{"backend", p.backend}, {"transport", p.transport}}}};
}

std::string ProfileName(const GradientProfile& profile, const std::string& path) {
  return !profile.model.empty() ? profile.model : std::filesystem::path(path).stem().string();
}

}  // namespace tilebank::engine
