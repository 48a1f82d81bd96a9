#include "repo/jsonl.h"

#include <algorithm>

#include "repo/entry_codec.h"
#include "repo/records.h"
#include "repo/entry_json.h"

namespace tilebank {

using json = nlohmann::json;

Status ExportBank(const Snapshot& snapshot, std::ostream& out) {
  out << DumpJson(json{{"tilebank_export", kExportFormat}, {"soc_version", snapshot.meta().soc_version}}) << '\n';
  for (EntryKind kind : kAllKinds) {
    TB_RETURN_IF_ERROR(snapshot.ForEach(kind, [&](Key key, std::string_view stored) {
      auto entry = DecodeEntryAt(kind, key, stored);
      if (!entry.ok()) return entry.status();
      out << DumpJson(EntryToJson(*entry)) << '\n';
      return Status::Ok();
    }));
  }
  out.flush();
  return out ? Status::Ok() : Status::IoError("writing the export failed (disk full?)");
}

Result<ParsedJsonl> ParseJsonl(std::istream& in, const std::string& name) {
  ParsedJsonl parsed;
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    auto at = [&](const std::string& problem) {
      return Status::InvalidInput(name + ":" + std::to_string(number) + ": " + problem);
    };
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json object = json::parse(line, nullptr, false);
    if (object.is_discarded()) return at("not valid JSON (truncated or corrupt line?)");
    if (object.is_object() && object.contains("tilebank_export")) {
      if (number != 1) return at("a header line may only be the first line");
      const json& version = object["tilebank_export"];
      if (!version.is_number_integer()) return at("'tilebank_export' must be an integer");
      if (version.get<int64_t>() > kExportFormat)
        return at("export format " + DumpJson(version) + " is newer than this tool's " + std::to_string(kExportFormat) +
                  ": use a newer tilebank");
      if (!object.contains("soc_version") || !object["soc_version"].is_string())
        return at("the header needs 'soc_version'");
      parsed.soc_version = object["soc_version"].get<std::string>();
      continue;
    }
    auto entry = EntryFromJson(object);
    if (!entry.ok()) return at(entry.status().message());
    parsed.entries.push_back(std::move(*entry));
  }
  if (in.bad()) return Status::IoError(name + ": read error");
  return parsed;
}

Result<WriteCounts> ImportEntries(Bank& bank, const std::vector<Entry>& entries, PutPolicy policy, bool commit) {
  // Writing in key order touches each B-tree page once instead of at random, which keeps a
  // large import's dirty pages few. The sort is stable: repeats of a key keep file order.
  std::vector<std::pair<Key, const Entry*>> order;
  order.reserve(entries.size());
  for (const Entry& e : entries) order.push_back({e.key(), &e});
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second->kind < b.second->kind;
  });
  WriteCounts counts;
  Status s = bank.Write(
      [&](WriteTxn& txn) -> Status {
        counts = WriteCounts();
        for (const auto& [key, entry] : order) {
          const Entry& e = *entry;
          auto outcome = txn.Put(e, policy);
          if (!outcome.ok()) return outcome.status();
          counts.Count(e.kind, *outcome);
        }
        return Status::Ok();
      },
      commit);
  if (!s.ok()) return s;
  return counts;
}

}  // namespace tilebank
