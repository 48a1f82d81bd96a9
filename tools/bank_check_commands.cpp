// tilebank bank diff | validate
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "engine/catalog/policy_check.h"
#include "engine/core/template_catalog.h"
#include "repo/bank_location.h"
#include "repo/diff.h"
#include "repo/entry_json.h"
#include "repo/validate.h"
#include "tools/cli_common.h"

namespace tilebank::cli {
namespace {

using json = nlohmann::json;

std::string Describe(const DiffRow& row) {
  const Entry& e = row.a ? *row.a : *row.b;
  return std::string(KindName(row.kind)) + " " + FormatKey(row.kind, row.key) + " " + e.op_type;
}

int RunDiff(const BankFlags& flags, const std::string& a_arg, const std::string& b_arg) {
  auto a_ref = ParseBankRef(a_arg, SocOf(flags));
  if (!a_ref.ok()) return Fail(a_ref.status());
  auto b_ref = ParseBankRef(b_arg, SocOf(flags));
  if (!b_ref.ok()) return Fail(b_ref.status());
  auto a_bank = OpenBankOnHost(a_ref->dir, OpenMode::kReadOnly, "");
  if (!a_bank.ok()) return Fail(a_bank.status());
  std::error_code ec;
  const bool same = std::filesystem::equivalent(a_ref->dir, b_ref->dir, ec);
  // One bank at two generations reads through one snapshot (LMDB allows one read per thread).
  std::unique_ptr<Bank> b_owned;
  if (!same) {
    auto b_bank = OpenBankOnHost(b_ref->dir, OpenMode::kReadOnly, "");
    if (!b_bank.ok()) return Fail(b_bank.status());
    b_owned = std::move(*b_bank);
  }
  auto a_snap = (*a_bank)->Read();
  if (!a_snap.ok()) return Fail(a_snap.status());
  std::optional<Snapshot> b_snap;
  if (!same) {
    auto snap = b_owned->Read();
    if (!snap.ok()) return Fail(snap.status());
    b_snap.emplace(std::move(*snap));
  }
  auto report = DiffBanks(*a_snap, a_ref->generation, same ? *a_snap : *b_snap, b_ref->generation);
  if (!report.ok()) return Fail(report.status());

  if (flags.json) {
    std::cout << DumpJson(DiffReportJson(*report, a_arg, b_arg), 2) << "\n";
  } else {
    for (const DiffRow& r : report->only_a) std::cout << "only in A: " << Describe(r) << "\n";
    for (const DiffRow& r : report->only_b) std::cout << "only in B: " << Describe(r) << "\n";
    for (const DiffRow& r : report->changed) {
      char ratio[48] = "n/a";
      if (r.a->after.median_us > 0) std::snprintf(ratio, sizeof ratio, "x%.3f", r.b->after.median_us / r.a->after.median_us);
      std::cout << "changed:   " << Describe(r) << "  " << FormatMicros(r.a->after.median_us) << " -> "
                << FormatMicros(r.b->after.median_us) << " (" << ratio << ")"
                << (r.a->policy == r.b->policy ? "" : ", policy differs") << "\n";
    }
    if (!report->equal())
      std::cout << report->only_a.size() << " only in A, " << report->only_b.size() << " only in B, "
                << report->changed.size() << " changed\n";
  }
  return report->equal() ? kExitOk : kExitFound;
}

int RunValidate(const BankFlags& flags, const std::string& path) {
  std::string dir = BankDirOf(flags);
  if (!path.empty()) {
    auto ref = ParseBankRef(path, SocOf(flags));
    if (!ref.ok()) return Fail(ref.status());
    dir = ref->dir;
  }
  auto bank = OpenBankOnHost(dir, OpenMode::kReadOnly, "");
  if (!bank.ok()) return Fail(bank.status());
  // The soc_version must match the directory a root keeps it in, or --soc when given.
  std::string expected = flags.soc;
  if (expected.empty() && path.empty()) expected = SocOf(flags);
  auto problems = ValidateBank(**bank, expected, EngineTemplateVersions(), engine::EnginePolicyCheck((*bank)->meta_at_open().soc_version));
  if (!problems.ok()) return Fail(problems.status());
  if (flags.json) {
    json out = json::array();
    for (const Problem& p : *problems) out.push_back({{"where", p.where}, {"problem", p.what}});
    if (!problems->empty()) std::cout << DumpJson(out, 2) << "\n";
  } else {
    for (const Problem& p : *problems) std::cout << dir << ": " << p.where << ": " << p.what << "\n";
  }
  return problems->empty() ? kExitOk : kExitFound;
}

}  // namespace

void RegisterBankCheckCommands(CLI::App* bank, int* exit_code) {
  static BankFlags diff_flags, validate_flags;
  static std::string diff_a, diff_b, validate_path;

  CLI::App* diff = bank->add_subcommand("diff", "keys only in A, only in B, and changed; PATH@GEN names a generation");
  AddBankFlags(diff, &diff_flags, true);
  diff->add_option("a", diff_a, "bank directory or root, optionally @GENERATION")->required();
  diff->add_option("b", diff_b, "bank directory or root, optionally @GENERATION")->required();
  diff->callback([=] { *exit_code = RunDiff(diff_flags, diff_a, diff_b); });

  CLI::App* validate = bank->add_subcommand("validate", "check every value, key and measurement; silent when clean");
  AddBankFlags(validate, &validate_flags, true);
  validate->add_option("path", validate_path, "bank directory or root to check (default: --bank/--soc)");
  validate->callback([=] { *exit_code = RunValidate(validate_flags, validate_path); });
}

}  // namespace tilebank::cli
