// Differences between two banks, or two generations of one: keys only in A, only in B, and keys
// in both whose policy or measured times differ (provenance and bookkeeping are not compared).
#pragma once
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "repo/bank.h"

namespace tilebank {

struct DiffRow {
  EntryKind kind;
  Key key;
  std::optional<Entry> a, b;
};

struct DiffReport {
  std::vector<DiffRow> only_a, only_b, changed;
  bool equal() const { return only_a.empty() && only_b.empty() && changed.empty(); }
};

Result<DiffReport> DiffBanks(const Snapshot& a, std::optional<uint64_t> generation_a, const Snapshot& b,
                             std::optional<uint64_t> generation_b);

// The report as `tilebank bank diff --json` and Python's Bank.diff give it: {"a", "b", "only_in_a",
// "only_in_b", "changed"}, each row {"kind", "key", "a"?, "b"?, "time_ratio" (changed rows)}.
nlohmann::json DiffReportJson(const DiffReport& report, const std::string& a, const std::string& b);

}  // namespace tilebank
