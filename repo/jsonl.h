// The bank's text format: JSON Lines (docs/BANK_FORMAT.md). Line 1 is a header
//   {"tilebank_export":1,"soc_version":"..."}
// and every further line is one entry (repo/entry_json.h), kinds in the order op, graph, grad and
// keys ascending within a kind, so that export -> import into an empty bank -> export gives the
// same bytes.
#pragma once
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "repo/bank.h"

namespace tilebank {

inline constexpr int kExportFormat = 1;

Status ExportBank(const Snapshot& snapshot, std::ostream& out);

struct ParsedJsonl {
  std::optional<std::string> soc_version;  // from the header; absent in a file without one
  std::vector<Entry> entries;
};
// Reads the whole stream; the first bad line fails it all, as "NAME:LINE: problem".
Result<ParsedJsonl> ParseJsonl(std::istream& in, const std::string& name);

// Writes the entries in one transaction (all or nothing).
Result<WriteCounts> ImportEntries(Bank& bank, const std::vector<Entry>& entries, PutPolicy policy, bool commit = true);

}  // namespace tilebank
