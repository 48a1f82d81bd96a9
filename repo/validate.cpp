#include "repo/validate.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <thread>

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

// Structural UTF-8 check (lead byte and continuation bytes), enough to know JSON output holds.
bool IsValidUtf8(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const size_t extra = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xe ? 2 : (c >> 3) == 0x1e ? 3 : 4;
    if (extra == 4 || i + extra >= text.size()) return false;
    for (size_t k = 1; k <= extra; ++k)
      if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return false;
    i += extra + 1;
  }
  return true;
}

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
  if (e.after.runs == 0 && !e.IsPrediction()) problem("implausible: no measured runs (and not a prediction: no knob verified = model)");
  if (e.revision == 0) problem("revision 0 (revisions start at 1)");
  for (const std::string* text : {&e.op_type, &e.template_id, &e.strategy, &e.tool_version, &e.origin_host, &e.origin_bank})
    if (!IsValidUtf8(*text)) problem("a text field is not valid UTF-8");
  for (const Knob& k : e.policy)
    if (!IsValidUtf8(k.name) || (std::holds_alternative<std::string>(k.value) && !IsValidUtf8(std::get<std::string>(k.value))))
      problem("knob '" + k.name + "' is not valid UTF-8");
  if (e.generation > bank_generation)
    problem("written at generation " + std::to_string(e.generation) + ", after the bank's generation " + std::to_string(bank_generation));
}

}  // namespace

Result<std::vector<Problem>> ValidateBank(const Bank& bank, const std::string& expected_soc,
                                          const TemplateVersions& current_versions, const PolicyCheck& policy_check) {
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

  // Values are copied out of the read transaction in batches and checked on all cores; problems
  // come out in bank order whatever the thread count.
  struct Item {
    EntryKind kind;
    Key key;
    std::optional<uint32_t> history_revision;
    std::string stored;
  };
  struct Checked {
    std::vector<Problem> problems;
    std::optional<uint64_t> shape_class;  // live op entries: their index row
  };
  auto check = [&](const Item& item) {
    Checked out;
    const std::string where = (item.history_revision ? std::string("history ") : std::string()) + KindName(item.kind) + " " +
                              FormatKey(item.kind, item.key) +
                              (item.history_revision ? " r" + std::to_string(*item.history_revision) : std::string());
    auto entry = DecodeEntry(item.stored);
    if (!entry.ok()) {
      out.problems.push_back({where, "corrupt value: " + entry.status().message()});
      return out;
    }
    CheckEntry(*entry, item.kind, item.key, where, meta.generation, out.problems);
    if (!item.history_revision) {
      if (std::string stale = StaleReason(*entry, current_versions); !stale.empty()) out.problems.push_back({where, stale});
      else if (policy_check)
        if (std::string bad = policy_check(*entry); !bad.empty()) out.problems.push_back({where, "policy: " + bad});
      if (item.kind == EntryKind::kOp) out.shape_class = ShapeClassKey(entry->descriptor);
      return out;
    }
    if (entry->revision != *item.history_revision)
      out.problems.push_back({where, "stored under revision " + std::to_string(*item.history_revision) + " but says " +
                                         std::to_string(entry->revision)});
    if (entry->superseded_generation == 0 || entry->superseded_generation > meta.generation)
      out.problems.push_back({where, "superseded at an impossible generation " + std::to_string(entry->superseded_generation)});
    return out;
  };
  std::set<std::pair<uint64_t, Key>> expected_index;
  std::vector<Item> batch;
  const size_t threads = std::max(1u, std::thread::hardware_concurrency());
  auto flush = [&] {
    std::vector<Checked> results(batch.size());
    std::vector<std::thread> workers;
    for (size_t t = 0; t < threads; ++t)
      workers.emplace_back([&, t] {
        for (size_t i = t; i < batch.size(); i += threads) results[i] = check(batch[i]);
      });
    for (std::thread& w : workers) w.join();
    for (size_t i = 0; i < batch.size(); ++i) {
      for (Problem& p : results[i].problems) problems.push_back(std::move(p));
      if (results[i].shape_class) expected_index.insert({*results[i].shape_class, batch[i].key});
    }
    batch.clear();
  };
  auto add = [&](Item item) {
    batch.push_back(std::move(item));
    if (batch.size() == 8192) flush();
  };
  for (EntryKind kind : kAllKinds)
    TB_RETURN_IF_ERROR(snapshot->ForEach(kind, [&](Key key, std::string_view stored) {
      add({kind, key, std::nullopt, std::string(stored)});
      return Status::Ok();
    }));
  TB_RETURN_IF_ERROR(snapshot->ForEachHistory([&](EntryKind kind, Key key, uint32_t revision, std::string_view stored) {
    add({kind, key, revision, std::string(stored)});
    return Status::Ok();
  }));
  flush();
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
