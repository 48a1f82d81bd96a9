#include "repo/entry_json.h"

#include <cstdio>
#include <ctime>
#include <set>

#include "repo/canonical.h"

namespace tilebank {
namespace {

using json = nlohmann::json;

json MeasurementToJson(const Measurement& m) {
  return {{"median_us", m.median_us}, {"runs", m.runs}, {"spread_us", m.spread_us}};
}

// Reads fields of one JSON object, recording the first problem with the field's path.
class FieldReader {
 public:
  FieldReader(const json& object, std::string path) : object_(object), path_(std::move(path)) {}
  const Status& status() const { return status_; }

  const json* Field(const char* name, bool required) {
    seen_.insert(name);
    if (!object_.contains(name)) {
      if (required) Fail(name, "is missing");
      return nullptr;
    }
    return &object_[name];
  }
  std::string Text(const char* name, bool required = true) {
    const json* v = Field(name, required);
    if (!v) return {};
    if (!v->is_string()) return Fail(name, "must be a string"), std::string();
    return v->get<std::string>();
  }
  double Number(const char* name) {
    const json* v = Field(name, true);
    if (!v) return 0;
    if (!v->is_number()) return Fail(name, "must be a number"), 0.0;
    return v->get<double>();
  }
  uint64_t Unsigned(const char* name, uint64_t max, bool required = true) {
    const json* v = Field(name, required);
    if (!v) return 0;
    if (!v->is_number_unsigned() || v->get<uint64_t>() > max)
      return Fail(name, "must be an integer from 0 to " + std::to_string(max)), 0;
    return v->get<uint64_t>();
  }
  const json* Object(const char* name, bool required = true) {
    const json* v = Field(name, required);
    if (v && !v->is_object()) return Fail(name, "must be an object"), nullptr;
    return v;
  }
  // Unknown fields are an error: they are typos or a newer format this tool would drop.
  void RejectUnknown() {
    for (auto& [name, value] : object_.items())
      if (!seen_.count(name)) Fail(name.c_str(), "is not a known field");
  }
  void Fail(const char* name, const std::string& problem) {
    if (status_.ok()) status_ = Status::InvalidInput("field '" + path_ + name + "' " + problem);
  }
  void Adopt(const Status& status) {
    if (status_.ok() && !status.ok()) status_ = status;
  }

 private:
  const json& object_;
  std::string path_;
  std::set<std::string> seen_;
  Status status_;
};

Measurement ReadMeasurement(FieldReader& parent, const char* name) {
  const json* v = parent.Object(name);
  if (!v) return {};
  FieldReader r(*v, std::string(name) + ".");
  Measurement m{r.Number("median_us"), r.Number("spread_us"),
                static_cast<uint32_t>(r.Unsigned("runs", UINT32_MAX))};
  r.RejectUnknown();
  parent.Adopt(r.status());
  return m;
}

}  // namespace

std::string FormatTimestamp(int64_t unix_ms) {
  std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(unix_ms % 1000));
  return buf;
}

Result<int64_t> ParseTimestamp(const std::string& text) {
  std::tm tm{};
  int ms = 0;
  char z = 0;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &ms, &z, &consumed) != 8 ||
      z != 'Z' || consumed != static_cast<int>(text.size()) || tm.tm_year < 1970)
    return Status::InvalidInput("timestamp '" + text + "' is not YYYY-MM-DDTHH:MM:SS.mmmZ (UTC, 1970 or later)");
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + ms;
}

json PolicyToJson(const std::vector<Knob>& policy) {
  json out = json::object();
  for (const Knob& k : policy) std::visit([&](const auto& v) { out[k.name] = v; }, k.value);
  return out;
}

json EntryToJson(const Entry& e) {
  return {
      {"kind", KindName(e.kind)},
      {"key", FormatKey(e.kind, e.key())},
      {"op_type", e.op_type},
      {"descriptor", json::parse(e.descriptor, nullptr, false)},
      {"template", {{"id", e.template_id}, {"version", e.template_version}}},
      {"tune_mode", TuneModeName(e.tune_mode)},
      {"policy", PolicyToJson(e.policy)},
      {"before", MeasurementToJson(e.before)},
      {"after", MeasurementToJson(e.after)},
      {"trials", e.trials},
      {"strategy", e.strategy},
      {"created", FormatTimestamp(e.created_unix_ms)},
      {"tool_version", e.tool_version},
      {"revision", e.revision},
      {"origin", {{"host", e.origin_host}, {"bank_id", e.origin_bank}}},
  };
}

Result<Entry> EntryFromJson(const json& object) {
  if (!object.is_object()) return Status::InvalidInput("an entry must be a JSON object");
  FieldReader r(object, "");
  Entry e;
  auto kind = ParseKind(r.Text("kind"));
  if (!kind.ok()) return kind.status();
  e.kind = *kind;

  const json* descriptor = r.Object("descriptor", false);
  const json* description = r.Object("description", false);
  if (descriptor && description) return Status::InvalidInput("give either 'descriptor' or 'description', not both");
  if (!descriptor && !description) return Status::InvalidInput("field 'descriptor' is missing");
  std::string op_type_from_description;
  if (descriptor) {
    e.descriptor = descriptor->dump();
  } else {
    auto canonical = CanonicalizeDescription(*description);
    if (!canonical.ok()) return canonical.status().WithContext("field 'description'");
    if (canonical->kind != e.kind)
      return Status::InvalidInput(std::string("field 'description' describes a ") + KindName(canonical->kind) +
                                  " but 'kind' is " + KindName(e.kind));
    e.descriptor = canonical->text;
    op_type_from_description = canonical->op_type;
  }
  if (const json* key = r.Field("key", false)) {
    auto given = key->is_string() ? ParseKey(key->get<std::string>()) : Result<Key>(Status::InvalidInput("not a string"));
    if (!given.ok()) return given.status().WithContext("field 'key'");
    if (*given != e.key())
      return Status::InvalidInput("field 'key' is " + key->get<std::string>() + " but the descriptor hashes to " +
                                  FormatKey(e.kind, e.key()));
  }
  e.op_type = r.Text("op_type", op_type_from_description.empty());
  if (e.op_type.empty()) e.op_type = op_type_from_description;

  if (const json* t = r.Object("template")) {
    FieldReader tr(*t, "template.");
    e.template_id = tr.Text("id");
    e.template_version = static_cast<uint32_t>(tr.Unsigned("version", UINT32_MAX));
    tr.RejectUnknown();
    r.Adopt(tr.status());
  }
  auto mode = ParseTuneMode(r.Text("tune_mode"));
  if (r.status().ok() && !mode.ok()) return mode.status().WithContext("field 'tune_mode'");
  if (mode.ok()) e.tune_mode = *mode;

  if (const json* p = r.Object("policy")) {
    for (auto& [name, value] : p->items()) {
      Knob k{name, int64_t{0}};
      if (value.is_number_integer()) k.value = value.get<int64_t>();
      else if (value.is_number_float()) k.value = value.get<double>();
      else if (value.is_string()) k.value = value.get<std::string>();
      else return Status::InvalidInput("field 'policy." + name + "' must be an integer, a number or a string");
      e.policy.push_back(std::move(k));  // json objects iterate sorted by name
    }
  }
  e.before = ReadMeasurement(r, "before");
  e.after = ReadMeasurement(r, "after");
  e.trials = static_cast<uint32_t>(r.Unsigned("trials", UINT32_MAX));
  e.strategy = r.Text("strategy");
  std::string created = r.Text("created");
  if (r.status().ok()) {
    auto ms = ParseTimestamp(created);
    if (!ms.ok()) return ms.status().WithContext("field 'created'");
    e.created_unix_ms = *ms;
  }
  e.tool_version = r.Text("tool_version");
  e.revision = static_cast<uint32_t>(r.Unsigned("revision", UINT32_MAX, false));
  if (e.revision == 0) e.revision = 1;
  if (const json* o = r.Object("origin", false)) {
    FieldReader orr(*o, "origin.");
    e.origin_host = orr.Text("host", false);
    e.origin_bank = orr.Text("bank_id", false);
    orr.RejectUnknown();
    r.Adopt(orr.status());
  }
  r.RejectUnknown();
  if (!r.status().ok()) return r.status();
  return e;
}

}  // namespace tilebank
