// Entry <-> one JSON object: the line format of `tilebank bank export` (docs/BANK_FORMAT.md).
// EntryFromJson checks every field and names the one at fault; the descriptor may be given in
// canonical form ("descriptor") or as a raw description ("description", canonicalized here).
#pragma once
#include <nlohmann/json.hpp>

#include "repo/entry.h"
#include "base/json_text.h"

namespace tilebank {

nlohmann::json EntryToJson(const Entry& entry);
Result<Entry> EntryFromJson(const nlohmann::json& object);

// Unix milliseconds <-> "YYYY-MM-DDTHH:MM:SS.mmmZ".
std::string FormatTimestamp(int64_t unix_ms);
Result<int64_t> ParseTimestamp(const std::string& text);

nlohmann::json PolicyToJson(const std::vector<Knob>& policy);


}  // namespace tilebank
