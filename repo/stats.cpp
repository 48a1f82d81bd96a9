#include "repo/stats.h"

#include <filesystem>

#include "repo/entry_codec.h"
#include "repo/entry_json.h"
#include "repo/records.h"
#include "repo/validate.h"

namespace tilebank {

Result<BankStats> CollectStats(const Bank& bank, const TemplateVersions& current_versions) {
  BankStats stats;
  auto snapshot = bank.Read();
  if (!snapshot.ok()) return snapshot.status();
  stats.meta = snapshot->meta();
  for (EntryKind kind : kAllKinds) {
    stats.entries[static_cast<int>(kind)] = snapshot->Count(kind);
    TB_RETURN_IF_ERROR(snapshot->ForEach(kind, [&](Key key, std::string_view stored) {
      auto entry = DecodeEntryAt(kind, key, stored);
      if (!entry.ok()) return entry.status();
      if (kind == EntryKind::kOp) ++stats.per_op_type[entry->op_type];
      if (!StaleReason(*entry, current_versions).empty()) ++stats.stale;
      return Status::Ok();
    }));
  }
  stats.history = snapshot->HistoryCount();
  std::error_code ec;
  stats.file_bytes = std::filesystem::file_size(std::filesystem::path(bank.dir()) / "data.mdb", ec);
  MDB_envinfo info;
  MDB_stat st;
  mdb_env_info(bank.env(), &info);
  mdb_env_stat(bank.env(), &st);
  stats.used_bytes = (info.me_last_pgno + 1) * uint64_t(st.ms_psize);
  stats.map_bytes = info.me_mapsize;
  return stats;
}

nlohmann::json StatsJson(const BankStats& s, const std::string& dir) {
  return {{"bank", dir},
          {"soc_version", s.meta.soc_version},
          {"fingerprint", s.meta.fingerprint},
          {"bank_id", s.meta.bank_id},
          {"creator", s.meta.creator},
          {"created", FormatTimestamp(s.meta.created_unix_ms)},
          {"format_version", FormatVersionString(s.meta.format_major, s.meta.format_minor)},
          {"generation", s.meta.generation},
          {"entries", {{"op", s.entries[0]}, {"graph", s.entries[1]}, {"grad", s.entries[2]}}},
          {"history", s.history},
          {"stale", s.stale},
          {"op_types", s.per_op_type},
          {"file_bytes", s.file_bytes},
          {"used_bytes", s.used_bytes}};
}

}  // namespace tilebank
