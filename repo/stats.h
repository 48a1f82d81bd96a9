// What a bank holds: entries per kind and per op type, history, generation, format, sizes.
#pragma once
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "repo/bank.h"
#include "repo/template_versions.h"

namespace tilebank {

struct BankStats {
  BankMeta meta;
  size_t entries[3] = {0, 0, 0};
  size_t history = 0;
  size_t stale = 0;
  std::map<std::string, size_t> per_op_type;  // op entries only
  uint64_t file_bytes = 0;   // data.mdb on disk
  uint64_t used_bytes = 0;   // pages in use (what `copy --compact` would keep, roughly)
  uint64_t map_bytes = 0;    // current map size (virtual)
};

Result<BankStats> CollectStats(const Bank& bank, const TemplateVersions& current_versions);

// The stats as `tilebank bank stats --json` and Python's Bank.stats give them (`dir`: the bank's directory).
nlohmann::json StatsJson(const BankStats& s, const std::string& dir);

}  // namespace tilebank
