// tilebank bank import | merge | prune | copy | upgrade
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "engine/catalog/policy_check.h"
#include "engine/core/template_catalog.h"
#include "repo/bank_location.h"
#include "repo/entry_json.h"
#include "repo/jsonl.h"
#include "repo/maintenance.h"
#include "repo/merge.h"
#include "tools/cli_common.h"

namespace tilebank::cli {
namespace {

using json = nlohmann::json;

json CountsToJson(const WriteCounts& c) {
  json out;
  for (EntryKind kind : kAllKinds) {
    int i = static_cast<int>(kind);
    out[KindName(kind)] = {{"added", c.added[i]}, {"updated", c.updated[i]}, {"kept", c.kept[i]}};
  }
  return out;
}

void PrintCounts(const WriteCounts& c, bool as_json, const std::string& title, bool dry_run) {
  if (as_json) {
    json out = CountsToJson(c);
    out["dry_run"] = dry_run;
    std::cout << DumpJson(out, 2) << "\n";
    return;
  }
  std::cout << title << (dry_run ? " (dry run: nothing written)" : "") << "\n";
  for (EntryKind kind : kAllKinds) {
    int i = static_cast<int>(kind);
    std::printf("  %-5s added %zu, updated %zu, kept %zu\n", KindName(kind), c.added[i], c.updated[i], c.kept[i]);
  }
}

struct ImportArgs {
  std::string file;
  std::string policy = "keep-faster";
  bool dry_run = false;
};

int RunImport(const BankFlags& flags, const ImportArgs& args) {
  auto policy = ParsePutPolicy(args.policy);
  if (!policy.ok()) return Fail(policy.status());
  std::ifstream in(args.file, std::ios::binary);
  if (!in) return Fail(Status::NotFound("cannot read '" + args.file + "'"));
  if (StderrIsTerminal()) std::cerr << "reading " << args.file << " ...\n";
  auto parsed = ParseJsonl(in, args.file);
  if (!parsed.ok()) return Fail(parsed.status().WithContext("nothing was imported"));
  std::string soc = SocOf(flags);
  if (parsed->soc_version) {
    if (!flags.soc.empty() && flags.soc != *parsed->soc_version)
      return Fail(Status::Refused("'" + args.file + "' holds entries for soc_version " + *parsed->soc_version +
                                  ", not " + flags.soc + "; nothing was imported"));
    soc = *parsed->soc_version;
  }
  // A bank holds only policies a kernel of its soc_version can run: one invalid policy refuses the
  // whole file.
  if (Status s = RefuseInvalidPolicies(parsed->entries, engine::EnginePolicyCheck(soc), args.file); !s.ok()) return Fail(s);
  const std::string dir = BankDirUnder(ResolveBankRoot(flags.bank), soc);
  if (args.dry_run && !IsBankDir(dir)) {
    WriteCounts counts;  // the bank does not exist yet: everything would be added
    for (const Entry& e : parsed->entries) counts.Count(e.kind, PutOutcome::kAdded);
    PrintCounts(counts, flags.json, "import into " + dir + ": " + std::to_string(parsed->entries.size()) + " entries", true);
    return kExitOk;
  }
  // A dry run runs the same transaction and aborts it.
  auto bank = OpenBankOnHost(dir, args.dry_run ? OpenMode::kReadWrite : OpenMode::kCreateIfMissing, soc);
  if (!bank.ok()) return Fail(bank.status());
  if (StderrIsTerminal()) std::cerr << "importing " << parsed->entries.size() << " entries into " << dir << " ...\n";
  auto counts = ImportEntries(**bank, parsed->entries, *policy, !args.dry_run);
  if (!counts.ok()) return Fail(counts.status().WithContext("nothing was imported"));
  PrintCounts(*counts, flags.json, "import into " + dir + ": " + std::to_string(parsed->entries.size()) + " entries",
              args.dry_run);
  return kExitOk;
}

struct MergeArgs {
  std::vector<std::string> sources;
  std::string into;
  bool dry_run = false;
};

int RunMerge(const BankFlags& flags, MergeArgs args) {
  namespace fs = std::filesystem;
  if (args.into.empty()) args.into = ResolveBankRoot(flags.bank);  // --into defaults to this machine's bank root
  // Each source is a bank directory or a root; a root contributes each of its soc_versions
  // (only --soc's when given). Sources are grouped by soc_version; each group merges into the
  // destination's bank of that soc_version.
  struct Source {
    std::string dir;
    std::unique_ptr<Bank> bank;
  };
  std::map<std::string, std::vector<Source>> by_soc;  // each source opened once, read-only
  auto add_source = [&](const std::string& dir) -> Status {
    auto bank = OpenBankOnHost(dir, OpenMode::kReadOnly, "");
    if (!bank.ok()) return bank.status();
    by_soc[(*bank)->meta_at_open().soc_version].push_back({dir, std::move(*bank)});
    return Status::Ok();
  };
  for (const std::string& source : args.sources) {
    if (IsBankDir(source)) {
      if (Status s = add_source(source); !s.ok()) return Fail(s);
      continue;
    }
    const std::vector<std::string> present = SocVersionsUnder(source);
    if (present.empty()) return Fail(Status::NotFound("no bank at '" + source + "' (neither a bank directory nor a root holding one)"));
    std::vector<std::string> socs = flags.soc.empty() ? present : std::vector<std::string>{flags.soc};
    if (!IsBankDir(BankDirUnder(source, socs[0]))) {
      std::string list;
      for (const std::string& soc : present) list += (list.empty() ? "" : ", ") + soc;
      return Fail(Status::Refused("cannot merge '" + source + "' (soc_version " + list + ") into a bank of soc_version " +
                                  flags.soc + ": only banks of the same soc_version merge; nothing was written"));
    }
    for (const std::string& soc : socs)
      if (Status s = add_source(BankDirUnder(source, soc)); !s.ok()) return Fail(s);
  }
  const bool into_bank_dir = IsBankDir(args.into);
  std::string into_soc;
  if (into_bank_dir) {
    auto dst = OpenBankOnHost(args.into, OpenMode::kReadOnly, "");
    if (!dst.ok()) return Fail(dst.status());
    into_soc = (*dst)->meta_at_open().soc_version;
  }
  // Refuse before writing anything: every source must match its destination's soc_version.
  for (const auto& [soc, sources] : by_soc) {
    const std::string& first = sources[0].dir;
    if (into_bank_dir && soc != into_soc)
      return Fail(Status::Refused("cannot merge '" + first + "' (soc_version " + soc + ") into '" + args.into +
                                  "' (soc_version " + into_soc + "): only banks of the same soc_version merge; nothing was written"));
    if (!flags.soc.empty() && soc != flags.soc)
      return Fail(Status::Refused("cannot merge '" + first + "' (soc_version " + soc + ") into a bank of soc_version " +
                                  flags.soc + "; nothing was written"));
    std::string dst_dir = into_bank_dir ? args.into : BankDirUnder(args.into, soc);
    for (const Source& source : sources) {
      std::error_code ec;
      if (IsBankDir(dst_dir) && fs::equivalent(source.dir, dst_dir, ec))
        return Fail(Status::Refused("'" + source.dir + "' is both a source and the destination"));
    }
  }
  // ... and every source's policies must be ones a kernel can run.
  for (const auto& [soc, sources] : by_soc)
    for (const Source& source : sources) {
      auto snapshot = source.bank->Read();
      if (!snapshot.ok()) return Fail(snapshot.status());
      if (Status s = RefuseInvalidPolicies(*snapshot, engine::EnginePolicyCheck(soc), "source '" + source.dir + "'"); !s.ok())
        return Fail(s);
    }
  json report = json::object();
  for (const auto& [soc, sources] : by_soc) {
    const std::string dst_dir = into_bank_dir ? args.into : BankDirUnder(args.into, soc);
    std::vector<const Bank*> source_ptrs;
    std::vector<std::string> dirs;
    for (const Source& source : sources) {
      source_ptrs.push_back(source.bank.get());
      dirs.push_back(source.dir);
    }
    OpenMode mode = args.dry_run ? OpenMode::kReadWrite : OpenMode::kCreateIfMissing;
    if (args.dry_run && !IsBankDir(dst_dir)) {
      std::cout << "merge into " << dst_dir << " (dry run): the destination does not exist yet; every entry would be added\n";
      continue;
    }
    auto dst = OpenBankOnHost(dst_dir, mode, soc);
    if (!dst.ok()) return Fail(dst.status());
    if (StderrIsTerminal()) std::cerr << "merging " << dirs.size() << " bank(s) into " << dst_dir << " ...\n";
    auto counts = MergeInto(**dst, source_ptrs, args.dry_run);
    if (!counts.ok()) return Fail(counts.status());
    if (flags.json) {
      report[soc] = {{"into", dst_dir}, {"sources", dirs}, {"dry_run", args.dry_run}, {"counts", CountsToJson(*counts)}};
    } else {
      PrintCounts(*counts, false, "merge of " + std::to_string(dirs.size()) + " bank(s) into " + dst_dir, args.dry_run);
    }
  }
  if (flags.json) std::cout << DumpJson(report, 2) << "\n";
  return kExitOk;
}

int RunPrune(const BankFlags& flags, bool stale, bool dry_run) {
  if (!stale) return Fail(Status::InvalidInput("say what to prune: --stale"));
  auto bank = OpenBankOnHost(BankDirOf(flags), OpenMode::kReadWrite, SocOf(flags));
  if (!bank.ok()) return Fail(bank.status());
  auto removed = PruneStale(**bank, EngineTemplateVersions(), dry_run);
  if (!removed.ok()) return Fail(removed.status());
  std::cout << (dry_run ? "would prune " : "pruned ") << *removed << " stale entr" << (*removed == 1 ? "y" : "ies")
            << (dry_run ? "" : " (kept in history)") << "\n";
  return kExitOk;
}

int RunCopy(const BankFlags& flags, const std::string& source, const std::string& destination_root, bool compact) {
  auto ref = ParseBankRef(source, SocOf(flags));
  if (!ref.ok()) return Fail(ref.status());
  if (ref->generation) return Fail(Status::InvalidInput("copy takes a bank, not a generation ('" + source + "')"));
  auto bank = OpenBankOnHost(ref->dir, OpenMode::kReadOnly, "");
  if (!bank.ok()) return Fail(bank.status());
  const std::string soc = (*bank)->meta_at_open().soc_version;
  const std::string dst = BankDirUnder(destination_root, soc);
  Status s = (*bank)->CopyTo(dst, compact);
  if (!s.ok()) return Fail(s);
  std::cout << "copied " << ref->dir << " to " << dst << (compact ? " (compacted)" : "") << "\n";
  return kExitOk;
}

int RunUpgrade(const BankFlags& flags) {
  OpenOptions options;
  options.mode = OpenMode::kReadWrite;
  options.soc_version = SocOf(flags);
  options.allow_older_format = true;
  auto bank = Bank::Open(BankDirOf(flags), options);
  if (!bank.ok()) return Fail(bank.status());
  std::string what;
  Status s = (*bank)->Upgrade(&what);
  if (!s.ok()) return Fail(s);
  std::cout << (*bank)->dir() << ": " << what << "\n";
  return kExitOk;
}

}  // namespace

void RegisterBankWriteCommands(CLI::App* bank, int* exit_code) {
  static BankFlags import_flags, merge_flags, prune_flags, copy_flags, upgrade_flags;
  static ImportArgs import;
  static MergeArgs merge;
  static bool prune_stale = false, prune_dry_run = false, copy_compact = false;
  static std::string copy_source, copy_destination;

  CLI::App* imp = bank->add_subcommand("import", "add entries from a JSON Lines export (all or nothing)");
  AddBankFlags(imp, &import_flags, true);
  imp->add_option("file", import.file, "JSON Lines file (docs/BANK_FORMAT.md)")->required();
  imp->add_option("--policy", import.policy, "for keys already in the bank: keep-faster (default), overwrite, keep-existing")
      ->check(CLI::IsMember({"keep-faster", "overwrite", "keep-existing"}));
  imp->add_flag("--dry-run", import.dry_run, "count what would change, write nothing");
  imp->callback([=] { *exit_code = RunImport(import_flags, import); });

  CLI::App* mrg = bank->add_subcommand("merge", "merge banks of the same soc_version: the faster entry wins");
  AddBankFlags(mrg, &merge_flags, true);
  mrg->add_option("sources", merge.sources, "source banks (bank directories or roots)")->required();
  mrg->add_option("--into", merge.into, "destination root or bank directory (default: the --bank root)");
  mrg->add_flag("--dry-run", merge.dry_run, "count what would change, write nothing");
  mrg->callback([=] { *exit_code = RunMerge(merge_flags, merge); });

  CLI::App* prune = bank->add_subcommand("prune", "remove stale entries (they stay in history)");
  AddBankFlags(prune, &prune_flags, false);
  prune->add_flag("--stale", prune_stale, "entries whose template version is not the engine's");
  prune->add_flag("--dry-run", prune_dry_run, "count, write nothing");
  prune->callback([=] { *exit_code = RunPrune(prune_flags, prune_stale, prune_dry_run); });

  CLI::App* copy = bank->add_subcommand("copy", "copy a bank (safe while it is written), optionally compacted");
  AddBankFlags(copy, &copy_flags, false);
  copy->add_option("source", copy_source, "bank directory or root (with --soc)")->required();
  copy->add_option("destination", copy_destination, "destination root: the copy goes to DESTINATION/<soc_version>")->required();
  copy->add_flag("--compact", copy_compact, "leave out free pages");
  copy->callback([=] { *exit_code = RunCopy(copy_flags, copy_source, copy_destination, copy_compact); });

  CLI::App* upgrade = bank->add_subcommand("upgrade", "bring a bank of an older format to the current one");
  AddBankFlags(upgrade, &upgrade_flags, false);
  upgrade->callback([=] { *exit_code = RunUpgrade(upgrade_flags); });
}

}  // namespace tilebank::cli
