#include "repo/diff.h"

#include "repo/entry_codec.h"
#include "repo/entry_json.h"
#include "repo/generation_view.h"

namespace tilebank {

Result<DiffReport> DiffBanks(const Snapshot& a, std::optional<uint64_t> generation_a, const Snapshot& b,
                             std::optional<uint64_t> generation_b) {
  DiffReport report;
  for (EntryKind kind : kAllKinds) {
    auto left = StoredEntriesAt(a, kind, generation_a);
    if (!left.ok()) return left.status().WithContext("bank A");
    auto right = StoredEntriesAt(b, kind, generation_b);
    if (!right.ok()) return right.status().WithContext("bank B");
    auto decode = [&](const std::string& stored, Key key, const char* side) -> Result<Entry> {
      auto e = DecodeEntry(stored);
      if (!e.ok()) return e.status().WithContext(std::string("bank ") + side + ", " + EntryName(kind, key));
      return e;
    };
    auto l = left->begin(), r = right->begin();
    while (l != left->end() || r != right->end()) {
      if (r == right->end() || (l != left->end() && l->first < r->first)) {
        auto e = decode(l->second, l->first, "A");
        if (!e.ok()) return e.status();
        report.only_a.push_back({kind, l->first, std::move(*e), std::nullopt});
        ++l;
      } else if (l == left->end() || r->first < l->first) {
        auto e = decode(r->second, r->first, "B");
        if (!e.ok()) return e.status();
        report.only_b.push_back({kind, r->first, std::nullopt, std::move(*e)});
        ++r;
      } else {
        if (l->second != r->second) {
          auto ea = decode(l->second, l->first, "A");
          if (!ea.ok()) return ea.status();
          auto eb = decode(r->second, r->first, "B");
          if (!eb.ok()) return eb.status();
          if (!ea->SamePolicyAndTimes(*eb)) report.changed.push_back({kind, l->first, std::move(*ea), std::move(*eb)});
        }
        ++l, ++r;
      }
    }
  }
  return report;
}

nlohmann::json DiffReportJson(const DiffReport& report, const std::string& a, const std::string& b) {
  auto rows = [](const std::vector<DiffRow>& list, bool changed) {
    nlohmann::json out = nlohmann::json::array();
    for (const DiffRow& r : list) {
      nlohmann::json row = {{"kind", KindName(r.kind)}, {"key", FormatKey(r.kind, r.key)}};
      if (r.a) row["a"] = EntryToJson(*r.a);
      if (r.b) row["b"] = EntryToJson(*r.b);
      if (changed && r.a->after.median_us > 0) row["time_ratio"] = r.b->after.median_us / r.a->after.median_us;
      out.push_back(row);
    }
    return out;
  };
  return {{"a", a}, {"b", b}, {"only_in_a", rows(report.only_a, false)}, {"only_in_b", rows(report.only_b, false)},
          {"changed", rows(report.changed, true)}};
}

}  // namespace tilebank
