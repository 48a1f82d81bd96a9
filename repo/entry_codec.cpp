#include "repo/entry_codec.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "bank_entry_generated.h"
#include "repo/entry_view.h"

namespace tilebank {
namespace {

constexpr size_t kChecksumBytes = 8;

uint64_t RecordedChecksum(std::string_view stored) {
  uint64_t recorded = 0;
  for (int i = 7; i >= 0; --i) recorded = (recorded << 8) | static_cast<unsigned char>(stored[i]);
  return recorded;
}

// Fills the first 8 bytes with the checksum of the rest (little-endian xxh3-64).
void WriteChecksum(std::string& stored) {
  const uint64_t checksum = XXH3_64bits(stored.data() + kChecksumBytes, stored.size() - kChecksumBytes);
  for (size_t i = 0; i < kChecksumBytes; ++i) stored[i] = static_cast<char>((checksum >> (8 * i)) & 0xff);
}

// Checks the checksum, then runs the Verifier and field checks on the aligned copy of the body.
Status CheckStored(std::string_view stored) {
  if (stored.size() < kChecksumBytes + 8) return Status::Corrupt("value too short (" + std::to_string(stored.size()) + " bytes)");
  std::string_view body = stored.substr(kChecksumBytes);
  if (XXH3_64bits(body.data(), body.size()) != RecordedChecksum(stored)) return Status::Corrupt("checksum mismatch: the value was altered");
  return Status::Ok();
}

Status CheckBody(const uint8_t* data, size_t size) {
  flatbuffers::Verifier verifier(data, size);
  if (!fb::VerifyEntryBuffer(verifier)) return Status::Corrupt("FlatBuffers verification failed");
  const fb::Entry* e = fb::GetEntry(data);
  if (static_cast<uint8_t>(e->kind()) > 2 || static_cast<uint8_t>(e->tune_mode()) > 2)
    return Status::Corrupt("kind or tune mode out of range");
  for (const fb::Measurement* m : {e->before(), e->after()})
    if (m && (!std::isfinite(m->median_us()) || !std::isfinite(m->spread_us())))
      return Status::Corrupt("a measured time is not a finite number");
  if (e->policy()) {
    flexbuffers::Reference root = e->policy_flexbuffer_root();
    if (!root.IsMap()) return Status::Corrupt("the policy is not a map");
    flexbuffers::Map map = root.AsMap();
    flexbuffers::TypedVector keys = map.Keys();
    flexbuffers::Vector values = map.Values();
    if (keys.size() != values.size()) return Status::Corrupt("the policy's keys and values differ in number");
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!keys[i].IsKey()) return Status::Corrupt("a policy knob has no name");
      if (i > 0 && std::strcmp(keys[i - 1].AsKey(), keys[i].AsKey()) >= 0)
        return Status::Corrupt("policy knob names are not sorted and unique");
      flexbuffers::Reference v = values[i];
      if (!v.IsInt() && !v.IsFloat() && !v.IsString())
        return Status::Corrupt(std::string("knob '") + keys[i].AsKey() + "' must hold an integer, a real or a text");
      if (v.IsFloat() && !std::isfinite(v.AsDouble()))
        return Status::Corrupt(std::string("knob '") + keys[i].AsKey() + "' holds a number that is not finite");
    }
  }
  return Status::Ok();
}

std::string Str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

}  // namespace

const char* TuneModeName(TuneMode mode) {
  switch (mode) {
    case TuneMode::kSchedule: return "Schedule";
    case TuneMode::kFormat: return "Format";
    case TuneMode::kImpl: return "Impl";
  }
  return "?";
}

Result<TuneMode> ParseTuneMode(std::string_view name) {
  for (TuneMode m : {TuneMode::kSchedule, TuneMode::kFormat, TuneMode::kImpl})
    if (name == TuneModeName(m)) return m;
  return Status::InvalidInput("unknown tune mode '" + std::string(name) + "' (expected Schedule, Format or Impl)");
}

std::string EncodeEntry(const Entry& e) {
  thread_local flatbuffers::FlatBufferBuilder b(1024);
  b.Clear();
  // The policy as a FlexBuffers map (keys sorted by the builder): about a third of the size of
  // a vector of tables, which keeps values small and lookups fast.
  // Knobs go in in name order so that the bytes depend only on the policy.
  std::vector<const Knob*> knobs;
  for (const Knob& k : e.policy) knobs.push_back(&k);
  std::sort(knobs.begin(), knobs.end(), [](const Knob* a, const Knob* b) { return a->name < b->name; });
  // Builders are reused per thread: encoding runs once per entry written.
  thread_local flexbuffers::Builder policy_builder(128, flexbuffers::BUILDER_FLAG_NONE);  // one map, unique keys
  policy_builder.Clear();
  policy_builder.Map([&] {
    for (const Knob* knob : knobs) {
      const Knob& k = *knob;
      if (auto* i = std::get_if<int64_t>(&k.value)) policy_builder.Int(k.name.c_str(), *i);
      else if (auto* r = std::get_if<double>(&k.value)) policy_builder.Double(k.name.c_str(), *r);
      else policy_builder.String(k.name.c_str(), std::get<std::string>(k.value));
    }
  });
  policy_builder.Finish();
  auto policy = b.CreateVector(policy_builder.GetBuffer());
  auto op_type = b.CreateString(e.op_type);
  auto descriptor = b.CreateString(e.descriptor);
  auto template_id = b.CreateString(e.template_id);
  auto strategy = b.CreateString(e.strategy);
  auto tool_version = b.CreateString(e.tool_version);
  auto origin_host = b.CreateString(e.origin_host);
  auto origin_bank = b.CreateString(e.origin_bank);
  fb::Measurement before(e.before.median_us, e.before.spread_us, e.before.runs);
  fb::Measurement after(e.after.median_us, e.after.spread_us, e.after.runs);
  fb::EntryBuilder eb(b);
  eb.add_kind(static_cast<fb::EntryKind>(e.kind));
  eb.add_op_type(op_type);
  eb.add_descriptor(descriptor);
  eb.add_template_id(template_id);
  eb.add_template_version(e.template_version);
  eb.add_tune_mode(static_cast<fb::TuneMode>(e.tune_mode));
  eb.add_policy(policy);
  eb.add_before(&before);
  eb.add_after(&after);
  eb.add_trials(e.trials);
  eb.add_strategy(strategy);
  eb.add_created_unix_ms(e.created_unix_ms);
  eb.add_tool_version(tool_version);
  eb.add_revision(e.revision);
  eb.add_origin_host(origin_host);
  eb.add_origin_bank(origin_bank);
  eb.add_generation(e.generation);
  eb.add_superseded_generation(e.superseded_generation);
  fb::FinishEntryBuffer(b, eb.Finish());

  std::string stored(kChecksumBytes + b.GetSize(), '\0');
  std::memcpy(stored.data() + kChecksumBytes, b.GetBufferPointer(), b.GetSize());
  WriteChecksum(stored);
  return stored;
}

std::optional<std::string> RestampStored(std::string_view stored, uint64_t generation, uint32_t revision) {
  std::string out(stored);
  // The copy's heap buffer is 16-byte aligned, so the body (after the 8-byte checksum) is 8-byte
  // aligned, as FlatBuffers' widest scalars want.
  auto* entry = flatbuffers::GetMutableRoot<fb::Entry>(reinterpret_cast<uint8_t*>(out.data()) + kChecksumBytes);
  // A mutate_ call writes in place and fails when the field is not in the buffer.
  if (!entry->mutate_generation(generation) || !entry->mutate_revision(revision) || !entry->mutate_superseded_generation(0))
    return std::nullopt;
  WriteChecksum(out);
  return out;
}

Status EntryView::Reset(std::string_view stored) {
  entry_ = nullptr;
  TB_RETURN_IF_ERROR(CheckStored(stored));
  // FlatBuffers wants its buffer aligned; LMDB values are not, so the view reads a copy.
  const std::string_view body = stored.substr(kChecksumBytes);
  if (buffer_.size() * 8 < body.size()) buffer_.resize((body.size() + 7) / 8);
  std::memcpy(buffer_.data(), body.data(), body.size());
  const auto* data = reinterpret_cast<const uint8_t*>(buffer_.data());
  TB_RETURN_IF_ERROR(CheckBody(data, body.size()));
  entry_ = fb::GetEntry(data);
  return Status::Ok();
}

Entry EntryView::ToEntry() const {
  const fb::Entry* f = entry_;
  Entry e;
  e.kind = static_cast<EntryKind>(f->kind());
  e.op_type = f->op_type()->str();
  e.descriptor = f->descriptor()->str();
  e.template_id = f->template_id()->str();
  e.template_version = f->template_version();
  e.tune_mode = static_cast<TuneMode>(f->tune_mode());
  if (f->policy()) {
    flexbuffers::Map map = f->policy_flexbuffer_root().AsMap();
    flexbuffers::TypedVector keys = map.Keys();
    flexbuffers::Vector values = map.Values();
    e.policy.reserve(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      Knob knob{keys[i].AsKey(), int64_t{0}};
      flexbuffers::Reference v = values[i];
      if (v.IsInt()) knob.value = v.AsInt64();
      else if (v.IsFloat()) knob.value = v.AsDouble();
      else knob.value = v.AsString().str();
      e.policy.push_back(std::move(knob));
    }
  }
  if (const fb::Measurement* m = f->before()) e.before = {m->median_us(), m->spread_us(), m->runs()};
  if (const fb::Measurement* m = f->after()) e.after = {m->median_us(), m->spread_us(), m->runs()};
  e.trials = f->trials();
  e.strategy = Str(f->strategy());
  e.created_unix_ms = f->created_unix_ms();
  e.tool_version = Str(f->tool_version());
  e.revision = f->revision();
  e.origin_host = Str(f->origin_host());
  e.origin_bank = Str(f->origin_bank());
  e.generation = f->generation();
  e.superseded_generation = f->superseded_generation();
  return e;
}

Status VerifyStoredEntry(std::string_view stored) {
  EntryView view;
  return view.Reset(stored);
}

Result<EntryPeek> PeekEntry(std::string_view stored, std::string_view descriptor, bool with_rank) {
  thread_local EntryView view;  // reused: no allocation per call
  TB_RETURN_IF_ERROR(view.Reset(stored));
  return EntryPeek{view.descriptor() == descriptor, view.after_us(), with_rank ? view.verification_rank() : 0};
}

Result<Entry> DecodeEntry(std::string_view stored) {
  thread_local EntryView view;
  TB_RETURN_IF_ERROR(view.Reset(stored));
  return view.ToEntry();
}

}  // namespace tilebank
