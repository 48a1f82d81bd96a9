// The measured-space tables in data/spaces/ (written by space_table, read by strategy_replay):
// which space a table covers and the cost of each of its configs.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/core/op_spec.h"
#include "engine/backends/op_template.h"
#include "engine/core/search_space.h"

namespace tilebank::bench {

// The space Schedule mode searches: the primary template's knobs, layout knobs at the default.
engine::SearchSpace ScheduleSpace(const engine::OpTemplate& t, const engine::OpSpec& op);

// A config as the table writes it: its knob values in the space's knob order, comma-separated.
std::string ConfigKey(const engine::SearchSpace& space, const engine::Config& config);
std::string CsvSafe(std::string text);  // commas and newlines replaced

// The description of the op called `name` in an ATC-style list file.
Result<nlohmann::json> FindOpDescription(const std::string& ops_file, const std::string& name);

struct SpaceTable {
  nlohmann::json op;                   // the op description
  std::string template_id;
  std::string host;
  std::string knob_header;             // the knob names, comma-separated, as in ConfigKey
  std::map<std::string, double> cost;  // ConfigKey -> median us (inf when the config failed)
};
Result<SpaceTable> ReadSpaceTable(const std::string& path);

}  // namespace tilebank::bench
