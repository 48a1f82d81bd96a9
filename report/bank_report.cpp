#include "report/bank_report.h"

#include <filesystem>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/runtime/model_session.h"
#include "engine/core/host_bank.h"
#include "engine/core/soc_version.h"
#include "engine/core/template_catalog.h"
#include "report/html_page.h"
#include "report/svg_chart.h"
#include "repo/bank.h"
#include "repo/bank_location.h"
#include "repo/diff.h"
#include "repo/jsonl.h"
#include "repo/key.h"
#include "repo/stats.h"

namespace tilebank::report {

namespace {

using nlohmann::json;

// A bank root or a bank directory, read-only, as `bank` commands open it.
Result<std::unique_ptr<Bank>> OpenForReport(const std::string& given, const std::string& soc) {
  const std::string soc_version = soc.empty() ? HostSocVersion() : soc;
  const std::string dir = IsBankDir(given) ? given : BankDirUnder(ResolveBankRoot(given), soc_version);
  if (!IsBankDir(dir)) return Status::NotFound("no bank at '" + dir + "'");
  return OpenBankOnHost(dir, OpenMode::kReadOnly, IsBankDir(given) && soc.empty() ? "" : soc_version);
}

Result<std::vector<json>> EntriesOf(const Bank& bank) {
  auto snapshot = bank.Read();
  if (!snapshot.ok()) return snapshot.status();
  std::stringstream text;
  TB_RETURN_IF_ERROR(ExportBank(*snapshot, text));
  std::vector<json> entries;
  for (std::string line; std::getline(text, line);) {
    json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("kind")) entries.push_back(std::move(j));
  }
  return entries;
}

std::vector<Bar> Bars(const std::map<std::string, size_t>& counts) {
  std::vector<Bar> bars;
  for (const auto& [label, n] : counts) bars.push_back({label, static_cast<double>(n), PaletteColor(bars.size()), label + ": " + std::to_string(n) + " entries"});
  std::stable_sort(bars.begin(), bars.end(), [](const Bar& a, const Bar& b) { return a.value > b.value; });
  return bars;
}

void Contents(HtmlPage& page, const std::vector<json>& entries) {
  std::map<std::string, size_t> by_op, by_template, by_origin, by_tool, by_month;
  for (const json& e : entries) {
    by_op[e.value("kind", "") + " " + e.value("op_type", "")]++;
    const json t = e.value("template", json::object());
    by_template[t.value("id", "") + " v" + std::to_string(t.value("version", 0))]++;
    const json origin = e.value("origin", json::object());
    by_origin[origin.value("host", "?") + " (" + origin.value("bank_id", "").substr(0, 8) + ")"]++;
    by_tool[e.value("tool_version", "?")]++;
    by_month[e.value("created", "").substr(0, 10)]++;
  }
  page.Heading("Entries per op type and template");
  page.Raw("<div class=\"charts\">" + BarChart(Bars(by_op), {"entries per kind and op type", "entries", "", 520}) +
           BarChart(Bars(by_template), {"entries per template and version", "entries", "", 520}) + "</div>");
  page.Heading("Provenance");
  page.Raw("<div class=\"charts\">" + BarChart(Bars(by_origin), {"entries per machine that tuned them (host, bank id)", "entries", "", 520}) +
           BarChart(Bars(by_tool), {"entries per tilebank version", "entries", "", 520}) +
           BarChart(Bars(by_month), {"entries per day created", "entries", "", 520}) + "</div>");
  std::vector<std::vector<std::string>> rows;
  for (const json& e : entries) {
    const double before = e.value("before", json::object()).value("median_us", 0.0), after = e.value("after", json::object()).value("median_us", 0.0);
    rows.push_back({e.value("kind", ""), e.value("key", ""), e.value("op_type", ""), e.value("template", json::object()).value("id", ""),
                    e.value("policy", json::object()).dump(), Fixed(before), Fixed(after), before > 0 ? Fixed((before - after) / before * 100, 1) : "",
                    e.value("origin", json::object()).value("host", ""), e.value("created", "")});
  }
  page.Heading("Entries");
  page.Table({"kind", "key", "op type", "template", "policy", "before us", "after us", "improvement %", "tuned on", "created"}, rows,
             {false, false, false, false, false, true, true, true, false, false});
}

Status Coverage(HtmlPage& page, const Bank& bank, const std::string& model) {
  auto executor = engine::model::LoadModel(model, {}, &bank);
  if (!executor.ok()) return executor.status();
  std::map<std::string, size_t> by_source;
  std::vector<std::vector<std::string>> rows;
  for (const auto& b : (*executor)->bindings()) {
    by_source[b.policy_source.empty() ? "basic" : b.policy_source]++;
    rows.push_back({b.name, b.op_type, b.shape, b.policy_source, b.template_id, b.policy});
  }
  page.Heading("Coverage of " + model);
  page.Paragraph("Where each step of the model gets its policy with this bank: bank (an entry of its shape), nearest (the entry of the nearest shape), builtin (no entry: the built-in choice), basic and alias (steps with nothing to tune).");
  page.Raw(BarChart(Bars(by_source), {"the model's steps by the source of their policy", "steps", "", 520}));
  page.Table({"step", "op", "shape", "source", "template", "policy"}, rows);
  return Status::Ok();
}

Status Diff(HtmlPage& page, const Bank& a, const Bank& b) {
  auto a_snap = a.Read();
  if (!a_snap.ok()) return a_snap.status();
  auto b_snap = b.Read();
  if (!b_snap.ok()) return b_snap.status();
  auto report = DiffBanks(*a_snap, std::nullopt, *b_snap, std::nullopt);
  if (!report.ok()) return report.status();
  page.Heading("Diff against " + b.dir());
  page.Raw(BarChart({{"only in this bank", static_cast<double>(report->only_a.size()), "#1f77b4", ""},
                     {"only in the other", static_cast<double>(report->only_b.size()), "#ff7f0e", ""},
                     {"in both, changed", static_cast<double>(report->changed.size()), "#9467bd", ""}},
                    {"entries", "entries", "", 520}));
  std::vector<std::vector<std::string>> rows;
  auto add = [&](const std::vector<DiffRow>& list, const char* where) {
    for (const DiffRow& r : list) {
      const Entry& e = r.a ? *r.a : *r.b;
      const double ta = r.a ? r.a->after.median_us : 0, tb = r.b ? r.b->after.median_us : 0;
      rows.push_back({where, KindName(r.kind), FormatKey(r.kind, r.key), e.op_type, r.a ? Fixed(ta) : "", r.b ? Fixed(tb) : "",
                      r.a && r.b && ta > 0 ? Fixed(tb / ta, 3) : ""});
    }
  };
  add(report->only_a, "only here");
  add(report->only_b, "only there");
  add(report->changed, "changed");
  page.Table({"where", "kind", "key", "op type", "here us", "there us", "there / here"}, rows, {false, false, false, false, true, true, true});
  return Status::Ok();
}

}  // namespace

Status WriteBankReport(const BankReportOptions& o, const std::string& output) {
  auto bank = OpenForReport(o.bank, o.soc);
  if (!bank.ok()) return bank.status();
  auto stats = CollectStats(**bank, EngineTemplateVersions());
  if (!stats.ok()) return stats.status();
  auto entries = EntriesOf(**bank);
  if (!entries.ok()) return entries.status();
  std::unique_ptr<Bank> other;
  if (!o.other.empty()) {
    auto opened = OpenForReport(o.other, (*bank)->meta_at_open().soc_version);
    if (!opened.ok()) return opened.status().WithContext("the bank to diff against");
    other = std::move(opened.value());
  }
  const BankStats& s = *stats;
  HtmlPage page("tilebank bank report: " + s.meta.soc_version);
  page.Facts({{"bank", (*bank)->dir()},
              {"soc_version", s.meta.soc_version},
              {"bank id", s.meta.bank_id},
              {"creator", s.meta.creator},
              {"generation", std::to_string(s.meta.generation)},
              {"entries", "op " + std::to_string(s.entries[0]) + ", graph " + std::to_string(s.entries[1]) + ", grad " + std::to_string(s.entries[2]) +
                              " (history " + std::to_string(s.history) + ", stale " + std::to_string(s.stale) + ")"},
              {"tilebank", TILEBANK_VERSION}});
  Contents(page, *entries);
  if (!o.model.empty()) TB_RETURN_IF_ERROR(Coverage(page, **bank, o.model));
  if (other) TB_RETURN_IF_ERROR(Diff(page, **bank, *other));
  return page.Write(output);
}

}  // namespace tilebank::report
