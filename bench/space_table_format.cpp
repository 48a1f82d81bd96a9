#include "bench/space_table_format.h"

#include <cmath>
#include <fstream>
#include <sstream>

namespace tilebank::bench {

engine::SearchSpace ScheduleSpace(const engine::OpTemplate& t, const engine::OpSpec& op) {
  return t.Space(op).PinnedExcept(TuneMode::kSchedule, t.DefaultPolicy(op));
}

std::string ConfigKey(const engine::SearchSpace& space, const engine::Config& config) {
  std::string key;
  for (size_t i = 0; i < space.knobs.size(); ++i) key += (i ? "," : "") + engine::KnobValueText(space.knobs[i].values[config[i]]);
  return key;
}

std::string CsvSafe(std::string text) {
  for (char& ch : text)
    if (ch == ',' || ch == '\n' || ch == '\r') ch = ' ';
  return text;
}

Result<nlohmann::json> FindOpDescription(const std::string& ops_file, const std::string& name) {
  std::ifstream in(ops_file);
  auto list = nlohmann::json::parse(in, nullptr, false);
  if (list.is_discarded()) return Status::InvalidInput(ops_file + ": not JSON");
  if (!list.is_array()) list = nlohmann::json::array({list});
  for (const auto& d : list)
    if (d.is_object() && d.value("name", "") == name) return d;
  return Status::InvalidInput(ops_file + ": no operator named " + name);
}

Result<SpaceTable> ReadSpaceTable(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::InvalidInput(path + ": cannot be read");
  SpaceTable table;
  std::string line;
  size_t line_no = 0, knobs = 0;
  auto bad = [&](const std::string& why) { return Status::InvalidInput(path + ":" + std::to_string(line_no) + ": " + why); };
  while (std::getline(in, line)) {
    ++line_no;
    if (line.rfind("# op: ", 0) == 0) {
      table.op = nlohmann::json::parse(line.substr(6), nullptr, false);
      if (table.op.is_discarded()) return bad("the op description is not JSON");
    } else if (line.rfind("# template: ", 0) == 0) {
      table.template_id = line.substr(12, line.find(' ', 12) - 12);
    } else if (line.rfind("# host: ", 0) == 0) {
      table.host = line.substr(8);
    } else if (table.knob_header.empty()) {
      const std::string tail = ",median_us,spread_us,status";
      if (line.size() <= tail.size() || line.compare(line.size() - tail.size(), tail.size(), tail) != 0) return bad("not a space table header");
      table.knob_header = line.substr(0, line.size() - tail.size());
      knobs = std::count(table.knob_header.begin(), table.knob_header.end(), ',') + 1;
    } else {
      size_t pos = 0;
      for (size_t i = 0; i < knobs && pos != std::string::npos; ++i) pos = line.find(',', pos + (i ? 1 : 0));
      if (pos == std::string::npos) return bad("too few columns");
      std::string key = line.substr(0, pos);
      std::string cost = line.substr(pos + 1, line.find(',', pos + 1) - pos - 1);
      double v = cost == "inf" ? INFINITY : std::strtod(cost.c_str(), nullptr);
      if (!(v > 0)) return bad("median_us is not a positive number");
      table.cost[key] = v;
    }
  }
  if (table.op.is_null() || table.template_id.empty() || table.cost.empty()) return Status::InvalidInput(path + ": not a space table");
  return table;
}

}  // namespace tilebank::bench
