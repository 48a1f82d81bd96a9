#include "repo/validate.h"

#include <map>
#include <set>

#include "repo/canonical.h"
#include "repo/entry_codec.h"
#include "repo/entry_json.h"

namespace tilebank {

std::string StaleReason(const Entry& entry, const TemplateVersions& current_versions) {
  if (!current_versions) return {};
  auto current = current_versions(entry.template_id);
  if (!current) return "template '" + entry.template_id + "' is unknown to this engine";
  if (*current != entry.template_version)
    return "stale: template '" + entry.template_id + "' version " + std::to_string(entry.template_version) +
           ", the engine's is " + std::to_string(*current);
  return {};
}

namespace {

// Checks shared by live entries and history revisions.
void CheckEntry(const Entry& e, EntryKind kind, Key key, const std::string& where, uint64_t bank_generation,
                std::vector<Problem>& problems) {
  auto problem = [&](std::string what) { problems.push_back({where, std::move(what)}); };
  if (e.kind != kind) problem(std::string("stored in the ") + KindName(kind) + " database but says it is " + KindName(e.kind));
  if (e.key() != key) problem("key does not match its descriptor (the descriptor hashes to " + FormatKey(kind, e.key()) + ")");
  auto canonical = Recanonicalize(kind, e.descriptor);
  if (!canonical.ok()) problem("descriptor is malformed: " + canonical.status().message());
  else if (canonical->text != e.descriptor) problem("descriptor is not in canonical form");
  if (e.after.median_us <= 0 || e.before.median_us <= 0) problem("implausible: time before or after tuning is zero or negative");
  else if (e.after.median_us > e.before.median_us)
    problem("implausible: the stored policy (" + std::to_string(e.after.median_us) + " us) is slower than its baseline (" +
            std::to_string(e.before.median_us) + " us)");
  if (e.after.spread_us < 0 || e.before.spread_us < 0) problem("implausible: negative spread");
  if (e.after.runs == 0) problem("implausible: no measured runs");
  if (e.revision == 0) problem("revision 0 (revisions start at 1)");
  try {
    (void)EntryToJson(e).dump();
  } catch (const nlohmann::json::exception&) {
    problem("a text field is not valid UTF-8");
  }
  if (e.generation > bank_generation)
    problem("written at generation " + std::to_string(e.generation) + ", after the bank's generation " + std::to_string(bank_generation));
}

}  // namespace

Result<std::vector<Problem>> ValidateBank(const Bank& bank, const std::string& expected_soc,
                                          const TemplateVersions& current_versions) {
  std::vector<Problem> problems;
  auto snapshot = bank.Read();
  if (!snapshot.ok()) return snapshot.status();
  const BankMeta& meta = snapshot->meta();
  if (!expected_soc.empty() && meta.soc_version != expected_soc)
    problems.push_back({"meta", "soc_version is " + meta.soc_version + ", expected " + expected_soc});
  if (meta.format_major != kFormatMajor || meta.format_minor != kFormatMinor)
    problems.push_back({"meta", "format " + FormatVersionString(meta.format_major, meta.format_minor) +
                                    " is not the current " + FormatVersionString(kFormatMajor, kFormatMinor) +
                                    " (run `tilebank bank upgrade`)"});

  std::set<std::pair<uint64_t, Key>> expected_index;
  for (EntryKind kind : kAllKinds) {
    TB_RETURN_IF_ERROR(snapshot->ForEach(kind, [&](Key key, std::string_view stored) {
      const std::string where = std::string(KindName(kind)) + " " + FormatKey(kind, key);
      auto entry = DecodeEntry(stored);
      if (!entry.ok()) {
        problems.push_back({where, "corrupt value: " + entry.status().message()});
        return Status::Ok();
      }
      CheckEntry(*entry, kind, key, where, meta.generation, problems);
      if (std::string stale = StaleReason(*entry, current_versions); !stale.empty()) problems.push_back({where, stale});
      if (kind == EntryKind::kOp) expected_index.insert({KeyOfDescriptor(ShapeClassOf(entry->descriptor)), key});
      return Status::Ok();
    }));
  }
  TB_RETURN_IF_ERROR(snapshot->ForEachHistory([&](EntryKind kind, Key key, uint32_t revision, std::string_view stored) {
    const std::string where = std::string("history ") + KindName(kind) + " " + FormatKey(kind, key) + " r" + std::to_string(revision);
    auto entry = DecodeEntry(stored);
    if (!entry.ok()) {
      problems.push_back({where, "corrupt value: " + entry.status().message()});
      return Status::Ok();
    }
    CheckEntry(*entry, kind, key, where, meta.generation, problems);
    if (entry->revision != revision) problems.push_back({where, "stored under revision " + std::to_string(revision) +
                                                                    " but says " + std::to_string(entry->revision)});
    if (entry->superseded_generation == 0 || entry->superseded_generation > meta.generation)
      problems.push_back({where, "superseded at an impossible generation " + std::to_string(entry->superseded_generation)});
    return Status::Ok();
  }));
  if (bank.has_shape_index()) {
    size_t rows = 0, missing_or_extra = 0;
    TB_RETURN_IF_ERROR(snapshot->ForEachShapeIndexRow([&](uint64_t shape_class, Key key) {
      ++rows;
      if (!expected_index.count({shape_class, key})) ++missing_or_extra;
      return Status::Ok();
    }));
    missing_or_extra += expected_index.size() > rows - missing_or_extra ? expected_index.size() - (rows - missing_or_extra) : 0;
    if (missing_or_extra)
      problems.push_back({"shape index", std::to_string(missing_or_extra) + " rows disagree with the op entries (run `tilebank bank upgrade` to rebuild)"});
  }
  return problems;
}

}  // namespace tilebank
