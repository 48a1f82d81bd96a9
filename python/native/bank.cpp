#include "python/native/bank.h"

#include <pybind11/stl.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/catalog/policy_check.h"
#include "engine/core/template_catalog.h"
#include "engine/core/host_bank.h"
#include "python/native/bank_open.h"
#include "python/native/errors.h"
#include "python/native/json_bridge.h"
#include "repo/bank_location.h"
#include "repo/canonical.h"
#include "repo/diff.h"
#include "repo/entry_json.h"
#include "repo/jsonl.h"
#include "repo/key.h"
#include "repo/lookup.h"
#include "repo/merge.h"
#include "repo/policy_check.h"
#include "repo/stats.h"
#include "repo/validate.h"

namespace tilebank::python {

namespace py = pybind11;
using nlohmann::json;

namespace {

class PyBank {
 public:
  PyBank(const std::optional<std::string>& root, const std::optional<std::string>& soc, bool readonly) : readonly_(readonly) {
    const std::string given = root.value_or("");
    // A bank directory itself, or a root holding one per soc_version.
    dir_ = !given.empty() && IsBankDir(given) ? given : BankDirFor(given, soc.value_or(""));
    soc_ = soc.value_or(IsBankDir(dir_) && !given.empty() && IsBankDir(given) ? "" : SocFor(""));
    if (readonly && !IsBankDir(dir_)) Raise(Status::NotFound("no bank at '" + dir_ + "' (readonly=False creates one)"));
    bank_ = ValueOrRaise(OpenBankOnHost(dir_, readonly ? OpenMode::kReadOnly : OpenMode::kCreateIfMissing, soc_));
  }

  const std::string& dir() const { return dir_; }
  std::string soc_version() const { return bank_->meta_at_open().soc_version; }
  Bank& bank() { return *bank_; }

  std::vector<json> Entries() const {
    auto snapshot = ValueOrRaise(bank_->Read());
    std::stringstream text;
    ThrowIfError(ExportBank(snapshot, text));
    std::vector<json> entries;
    for (std::string line; std::getline(text, line);) {
      json j = json::parse(line, nullptr, false);
      if (j.is_object() && j.contains("kind")) entries.push_back(std::move(j));  // not the header
    }
    return entries;
  }

  size_t Size() const {
    auto stats = ValueOrRaise(CollectStats(*bank_, EngineTemplateVersions()));
    return stats.entries[0] + stats.entries[1] + stats.entries[2];
  }

  py::object Query(const py::object& op, bool nearest) const {
    auto canonical = ValueOrRaise(CanonicalizeDescription(FromPython(op, "the operator description")));
    auto found = ValueOrRaise(LookupPolicy(*bank_, canonical, EngineTemplateVersions(), nearest));
    json row = {{"kind", KindName(canonical.kind)}, {"key", FormatKey(canonical.kind, canonical.key)}, {"op_type", canonical.op_type},
                {"state", LookupStateName(found.state)}};
    if (found.entry) row["entry"] = EntryToJson(*found.entry);
    if (!found.stale_reason.empty()) row["stale_reason"] = found.stale_reason;
    if (found.state == LookupState::kNearest) row["shape_distance"] = found.shape_distance;
    return ToPython(row);
  }

  py::object Stats() const {
    auto s = ValueOrRaise(CollectStats(*bank_, EngineTemplateVersions()));
    return ToPython(StatsJson(s, dir_));
  }

  py::list Validate() const {
    auto problems = ValueOrRaise(ValidateBank(*bank_, soc_version(), EngineTemplateVersions(), engine::EnginePolicyCheck(soc_version())));
    py::list out;
    for (const Problem& p : problems) out.append(py::dict(py::arg("where") = p.where, py::arg("problem") = p.what));
    return out;
  }

  py::object Diff(PyBank& other) const {
    auto a = ValueOrRaise(bank_->Read());
    std::error_code ec;
    const bool same = std::filesystem::equivalent(dir_, other.dir_, ec);
    std::optional<Snapshot> b;
    if (!same) b.emplace(ValueOrRaise(other.bank_->Read()));
    auto report = ValueOrRaise(DiffBanks(a, std::nullopt, same ? a : *b, std::nullopt));
    return ToPython(DiffReportJson(report, dir_, other.dir_));
  }

  // Merges `others` (banks of this soc_version) into this one; nothing is written when one is refused.
  py::object Merge(const py::args& others) {
    if (readonly_) Raise(Status::Refused("the bank at '" + dir_ + "' was opened readonly: open it with readonly=False to merge into it"));
    std::vector<const Bank*> sources;
    for (auto handle : others) {
      PyBank& source = handle.cast<PyBank&>();
      std::error_code ec;
      if (std::filesystem::equivalent(source.dir_, dir_, ec)) Raise(Status::Refused("'" + source.dir_ + "' is both a source and the destination"));
      if (source.soc_version() != soc_version())
        Raise(Status::Refused("cannot merge '" + source.dir_ + "' (soc_version " + source.soc_version() + ") into '" + dir_ + "' (soc_version " +
                              soc_version() + "): only banks of the same soc_version merge; nothing was written"));
      auto snapshot = ValueOrRaise(source.bank_->Read());
      ThrowIfError(RefuseInvalidPolicies(snapshot, engine::EnginePolicyCheck(soc_version()), "source '" + source.dir_ + "'"));
      sources.push_back(source.bank_.get());
    }
    Result<WriteCounts> counts = Status::Ok();
    {
      py::gil_scoped_release release;
      counts = MergeInto(*bank_, sources, /*dry_run=*/false);
    }
    const WriteCounts c = ValueOrRaise(std::move(counts));
    json out;
    for (EntryKind kind : kAllKinds) {
      const int i = static_cast<int>(kind);
      out[KindName(kind)] = {{"added", c.added[i]}, {"updated", c.updated[i]}, {"kept", c.kept[i]}};
    }
    return ToPython(out);
  }

  // The bank as JSON lines (the format `bank import` reads), written atomically.
  void Export(const std::string& path) const {
    auto snapshot = ValueOrRaise(bank_->Read());
    const std::string temp = path + ".tmp-" + std::to_string(::getpid());
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) Raise(Status::Refused("cannot write '" + path + "'"));
    Status s = ExportBank(snapshot, out);
    out.close();
    if (s.ok() && !out) s = Status::IoError("writing '" + path + "' failed (disk full?)");
    std::error_code ec;
    if (s.ok()) std::filesystem::rename(temp, path, ec);
    if (!s.ok() || ec) {
      std::filesystem::remove(temp, ec);
      Raise(s.ok() ? Status::IoError("cannot rename into '" + path + "'") : s);
    }
  }

 private:
  bool readonly_;
  std::string dir_, soc_;
  std::unique_ptr<Bank> bank_;
};

}  // namespace

void RegisterBank(py::module_& m) {
  py::class_<PyBank>(m, "Bank",
                     "Bank(root=None, soc=None, readonly=True): the bank of soc_version `soc` (default: this machine's) under\n"
                     "`root` (default: the command line's), or the bank directory `root` itself.")
      .def(py::init<const std::optional<std::string>&, const std::optional<std::string>&, bool>(), py::arg("root") = py::none(),
           py::arg("soc") = py::none(), py::arg("readonly") = true)
      .def_property_readonly("dir", &PyBank::dir)
      .def_property_readonly("soc_version", &PyBank::soc_version)
      .def("__len__", &PyBank::Size, "entries of every kind (op, graph, grad)")
      .def("entries", [](const PyBank& b) {
        py::list out;
        for (const auto& e : b.Entries()) out.append(ToPython(e));
        return out;
      }, "every entry as a dict (the JSON lines `bank export` writes)")
      .def("__iter__", [](const PyBank& b) { return py::iter(py::cast(b).attr("entries")()); })
      .def("query", &PyBank::Query, py::arg("op"), py::arg("nearest") = false,
           "the bank's answer for an ATC operator description (a dict): {'state': hit|miss|stale|nearest, 'entry', ...}")
      .def("stats", &PyBank::Stats)
      .def("validate", &PyBank::Validate, "the problems `bank validate` reports ([] for a sound bank)")
      .def("diff", &PyBank::Diff, py::arg("other"), "{'only_in_a', 'only_in_b', 'changed'} against another Bank")
      .def("merge", &PyBank::Merge, "merge(*banks): their entries into this bank (readonly=False), the faster kept; counts per kind")
      .def("export", &PyBank::Export, py::arg("path"), "the bank as JSON lines, as `bank export` writes it");
}

}  // namespace tilebank::python
