// tilebank bank stats | query | log | export
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>

#include "engine/gdat/aoe_gdat_export.h"
#include "engine/core/template_catalog.h"
#include "repo/improvement.h"
#include "repo/canonical.h"
#include "repo/entry_json.h"
#include "repo/jsonl.h"
#include "repo/lookup.h"
#include "repo/maintenance.h"
#include "repo/stats.h"
#include "tools/cli_common.h"

namespace tilebank::cli {
namespace {

using json = nlohmann::json;

std::string PolicyText(const std::vector<Knob>& policy) {
  std::string out;
  for (const Knob& k : policy) {
    out += (out.empty() ? "" : " ") + k.name + "=";
    std::visit([&](const auto& v) {
      if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) out += v;
      else out += DumpJson(json(v));
    }, k.value);
  }
  return out.empty() ? "(default)" : out;
}

// AOE's definition, as the result files (repo/improvement.h).
std::string Improvement(const Entry& e) {
  if (e.before.median_us <= 0 || e.after.median_us <= 0) return "n/a";
  return ImprovementText(e.before.median_us, e.after.median_us) + " (before / after - 1)";
}

void PrintEntry(const Entry& e, const std::string& indent) {
  std::cout << indent << "policy:     " << PolicyText(e.policy) << "\n"
            << indent << "tune mode:  " << TuneModeName(e.tune_mode) << ", template " << e.template_id << " v"
            << e.template_version << ", " << e.strategy << " (" << e.trials << " trials)\n"
            << indent << "time:       " << FormatMicros(e.after.median_us) << " (spread " << FormatMicros(e.after.spread_us)
            << ", " << e.after.runs << " runs); before " << FormatMicros(e.before.median_us) << ", improved by "
            << Improvement(e) << "\n"
            << indent << "provenance: revision " << e.revision << ", generation " << e.generation << ", created "
            << FormatTimestamp(e.created_unix_ms) << " by "
            << (e.tool_version.rfind("tilebank", 0) == 0 ? "" : "tilebank ") << e.tool_version << " on " << e.origin_host
            << " (bank " << e.origin_bank << ")\n";
}

int RunStats(const BankFlags& flags) {
  auto bank = OpenBankOnHost(BankDirOf(flags), OpenMode::kReadOnly, SocOf(flags));
  if (!bank.ok()) return Fail(bank.status());
  auto stats = CollectStats(**bank, EngineTemplateVersions());
  if (!stats.ok()) return Fail(stats.status());
  const BankStats& s = *stats;
  if (flags.json) {
    const json out = StatsJson(s, (*bank)->dir());
    std::cout << DumpJson(out, 2) << "\n";
    return kExitOk;
  }
  std::cout << "bank         " << (*bank)->dir() << "\n"
            << "soc_version  " << s.meta.soc_version << "\n"
            << "fingerprint  " << s.meta.fingerprint << "\n"
            << "format       " << FormatVersionString(s.meta.format_major, s.meta.format_minor) << "\n"
            << "generation   " << s.meta.generation << "\n"
            << "entries      op " << s.entries[0] << ", graph " << s.entries[1] << ", grad " << s.entries[2]
            << " (history " << s.history << ", stale " << s.stale << ")\n"
            << "size         " << HumanBytes(s.file_bytes) << " on disk, " << HumanBytes(s.used_bytes) << " in use\n";
  std::cout << "op types    ";
  for (const auto& [type, count] : s.per_op_type) std::cout << " " << type << " " << count << ";";
  std::cout << (s.per_op_type.empty() ? " (none)\n" : "\n");
  return kExitOk;
}

struct QueryArgs {
  std::string description;
  std::string key;
  std::string kind;
  std::string fallback = "none";
};

int RunQuery(const BankFlags& flags, const QueryArgs& args) {
  if (args.description.empty() == args.key.empty())
    return Fail(Status::InvalidInput("give an operator description (inline JSON or a file) or --key, not both"));
  if (args.fallback != "none" && args.fallback != "nearest")
    return Fail(Status::InvalidInput("--fallback must be 'none' or 'nearest'"));
  auto bank = OpenBankOnHost(BankDirOf(flags), OpenMode::kReadOnly, SocOf(flags));
  if (!bank.ok()) return Fail(bank.status());
  const TemplateVersions versions = EngineTemplateVersions();

  std::vector<CanonicalDescriptor> wanted;
  if (!args.key.empty()) {
    auto key = ParseKey(args.key);
    if (!key.ok()) return Fail(key.status());
    auto snapshot = (*bank)->Read();
    if (!snapshot.ok()) return Fail(snapshot.status());
    for (EntryKind kind : kAllKinds) {
      if (!args.kind.empty() && args.kind != KindName(kind)) continue;
      auto entry = snapshot->Get(kind, *key);
      if (!entry.ok()) return Fail(entry.status());
      if (*entry) wanted.push_back({kind, (*entry)->op_type, (*entry)->descriptor, *key});
    }
    if (wanted.empty()) {
      if (flags.json) std::cout << DumpJson(json::array({{{"key", args.key}, {"state", "miss"}}}), 2) << "\n";
      else std::cout << args.key << ": miss (no entry with this key)\n";
      return kExitFound;
    }
  } else {
    auto description = ReadJsonArgument(args.description);
    if (!description.ok()) return Fail(description.status());
    std::vector<json> items = description->is_array() ? description->get<std::vector<json>>() : std::vector<json>{*description};
    for (size_t i = 0; i < items.size(); ++i) {
      auto canonical = CanonicalizeDescription(items[i]);
      if (!canonical.ok())
        return Fail(canonical.status().WithContext(items.size() > 1 ? "description " + std::to_string(i) : "description"));
      wanted.push_back(std::move(*canonical));
    }
  }

  json results = json::array();
  bool all_found = true;
  for (const CanonicalDescriptor& d : wanted) {
    auto found = LookupPolicy(**bank, d, versions, args.fallback == "nearest");
    if (!found.ok()) return Fail(found.status());
    const LookupResult& r = *found;
    const bool usable = r.state == LookupState::kHit || r.state == LookupState::kNearest;
    all_found = all_found && usable;
    if (flags.json) {
      json row = {{"kind", KindName(d.kind)}, {"key", FormatKey(d.kind, d.key)}, {"op_type", d.op_type},
                  {"state", LookupStateName(r.state)}};
      if (r.entry) row["entry"] = EntryToJson(*r.entry);
      if (!r.stale_reason.empty()) row["stale_reason"] = r.stale_reason;
      if (r.state == LookupState::kNearest) row["shape_distance"] = r.shape_distance;
      results.push_back(row);
      continue;
    }
    std::cout << KindName(d.kind) << " " << FormatKey(d.kind, d.key) << " " << d.op_type << ": " << LookupStateName(r.state);
    if (r.state == LookupState::kMiss) std::cout << " (no entry: use the default policy)\n";
    else if (r.state == LookupState::kStale) std::cout << " (" << r.stale_reason << ": entry ignored, use the default policy)\n";
    else if (r.state == LookupState::kNearest)
      std::cout << " (no exact entry; closest shape " << FormatKey(EntryKind::kOp, r.entry->key()) << " at distance "
                << r.shape_distance << ")\n  descriptor: " << r.entry->descriptor << "\n";
    else std::cout << "\n";
    if (usable) PrintEntry(*r.entry, "  ");
  }
  if (flags.json) std::cout << DumpJson(results, 2) << "\n";
  return all_found ? kExitOk : kExitFound;
}

int RunLog(const BankFlags& flags, const std::string& key_text, const std::string& kind_name) {
  auto key = ParseKey(key_text);
  if (!key.ok()) return Fail(key.status());
  auto bank = OpenBankOnHost(BankDirOf(flags), OpenMode::kReadOnly, SocOf(flags));
  if (!bank.ok()) return Fail(bank.status());
  json out = json::array();
  size_t shown = 0;
  for (EntryKind kind : kAllKinds) {
    if (!kind_name.empty() && kind_name != KindName(kind)) continue;
    auto log = EntryLog(**bank, kind, *key);
    if (!log.ok()) return Fail(log.status());
    for (const Entry& e : *log) {
      ++shown;
      if (flags.json) {
        json row = EntryToJson(e);
        row["generation"] = e.generation;
        if (e.superseded_generation) row["superseded_generation"] = e.superseded_generation;
        out.push_back(row);
        continue;
      }
      std::cout << KindName(kind) << " " << FormatKey(kind, *key) << " r" << e.revision << "  generation " << e.generation
                << (e.superseded_generation ? " -> superseded at " + std::to_string(e.superseded_generation) : " (live)")
                << "  " << FormatMicros(e.after.median_us) << "\n";
      PrintEntry(e, "    ");
    }
  }
  if (flags.json) std::cout << DumpJson(out, 2) << "\n";
  if (shown == 0) {
    if (!flags.json) std::cout << key_text << ": no entry and no history\n";
    return kExitFound;
  }
  return kExitOk;
}

// Writes through `write` to `output` ("-": standard output), beside the target and renamed into
// place, so that a failed export leaves no partial file.
int WriteExport(const std::string& output, const std::function<Status(std::ostream&)>& write) {
  if (output == "-") {
    Status s = write(std::cout);
    return s.ok() ? kExitOk : Fail(s);
  }
  const std::string temp = output + ".tmp-" + std::to_string(::getpid());
  std::ofstream out(temp, std::ios::binary | std::ios::trunc);
  if (!out) return Fail(Status::Refused("cannot write '" + output + "'"));
  Status s = write(out);
  out.close();
  std::error_code ec;
  if (s.ok() && !out) s = Status::IoError("writing '" + output + "' failed (disk full?)");
  if (s.ok()) std::filesystem::rename(temp, output, ec);
  if (!s.ok() || ec) {
    std::filesystem::remove(temp, ec);
    return Fail(s.ok() ? Status::IoError("cannot rename into '" + output + "'") : s);
  }
  return kExitOk;
}

// --format jsonl: the bank's own text format. --format aoe-gdat: the grad entries as AOE's
// <soc>_gradient_fusion.json (into that name when `output` is a directory).
int RunExport(const BankFlags& flags, const std::string& output, const std::string& format) {
  auto bank = OpenBankOnHost(BankDirOf(flags), OpenMode::kReadOnly, SocOf(flags));
  if (!bank.ok()) return Fail(bank.status());
  auto snapshot = (*bank)->Read();
  if (!snapshot.ok()) return Fail(snapshot.status());
  if (format == "jsonl") return WriteExport(output, [&](std::ostream& out) { return ExportBank(*snapshot, out); });
  auto fusion = engine::ExportAoeGradientFusion(*snapshot);
  if (!fusion.ok()) return Fail(fusion.status());
  std::error_code ec;
  const std::string path = output != "-" && std::filesystem::is_directory(output, ec)
                               ? (std::filesystem::path(output) / ((*bank)->meta_at_open().soc_version + "_gradient_fusion.json")).string()
                               : output;
  const int code = WriteExport(path, [&](std::ostream& out) {
    out << fusion->file.dump(1) << "\n";
    return Status::Ok();
  });
  if (code == kExitOk)
    std::fprintf(stderr, "%s: %zu gradient fusion plans%s\n", path == "-" ? "standard output" : path.c_str(), fusion->file.size(),
                 fusion->left_out ? (", " + std::to_string(fusion->left_out) + " entries left out: their policy does not check (bank validate)").c_str() : "");
  return code;
}

}  // namespace

void RegisterBankReadCommands(CLI::App* bank, int* exit_code) {
  static BankFlags stats_flags, query_flags, log_flags, export_flags;
  static QueryArgs query;
  static std::string log_key, log_kind, export_output, export_format = "jsonl";

  CLI::App* stats = bank->add_subcommand("stats", "entries per kind and op type, generation, format, size on disk");
  AddBankFlags(stats, &stats_flags, true);
  stats->callback([=] { *exit_code = RunStats(stats_flags); });

  CLI::App* q = bank->add_subcommand("query", "the cached policy for an operator (ATC single-op JSON, inline or a file) or a key");
  AddBankFlags(q, &query_flags, true);
  q->add_option("description", query.description, "operator, subgraph or gradient description: inline JSON or a file");
  q->add_option("--key", query.key, "look up by key (0x... hex or decimal repo_key)");
  q->add_option("--kind", query.kind, "with --key: op, graph or grad (default: all)")->check(CLI::IsMember({"op", "graph", "grad"}));
  q->add_option("--fallback", query.fallback, "on a miss: none (default) or nearest (the closest shape of the same operator)");
  q->callback([=] { *exit_code = RunQuery(query_flags, query); });

  CLI::App* log = bank->add_subcommand("log", "an entry's revisions, oldest first");
  AddBankFlags(log, &log_flags, true);
  log->add_option("key", log_key, "the key (0x... hex or decimal repo_key)")->required();
  log->add_option("--kind", log_kind, "op, graph or grad (default: all)")->check(CLI::IsMember({"op", "graph", "grad"}));
  log->callback([=] { *exit_code = RunLog(log_flags, log_key, log_kind); });

  CLI::App* exp = bank->add_subcommand("export", "write the bank as JSON Lines (docs/BANK_FORMAT.md)");
  AddBankFlags(exp, &export_flags, false);
  exp->add_option("-o,--output", export_output, "output file (aoe-gdat: or directory), or - for standard output")->required();
  exp->add_option("--format", export_format, "jsonl (the bank's own) or aoe-gdat (the grad entries as AOE's <soc>_gradient_fusion.json)")
      ->check(CLI::IsMember({"jsonl", "aoe-gdat"}))
      ->capture_default_str();
  exp->callback([=] { *exit_code = RunExport(export_flags, export_output, export_format); });
}

}  // namespace tilebank::cli
