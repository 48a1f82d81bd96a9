#include "repo/entry_codec.h"

#include <xxhash.h>

#include <array>
#include <cstring>
#include <vector>

#include "bank_entry_generated.h"

namespace tilebank {
namespace {

constexpr size_t kChecksumBytes = 8;

// FlatBuffers wants its buffer aligned; LMDB values are not, so checks and reads go through a
// copy: on the stack for the usual sizes, on the heap beyond.
class AlignedCopy {
 public:
  explicit AlignedCopy(std::string_view bytes) : size_(bytes.size()) {
    uint64_t* target = inline_.data();
    if (bytes.size() > sizeof inline_) {
      heap_.resize((bytes.size() + 7) / 8);
      target = heap_.data();
    }
    if (!bytes.empty()) std::memcpy(target, bytes.data(), bytes.size());
  }
  AlignedCopy(const AlignedCopy&) = delete;
  const uint8_t* data() const {
    return reinterpret_cast<const uint8_t*>(heap_.empty() ? inline_.data() : heap_.data());
  }
  size_t size() const { return size_; }

 private:
  std::array<uint64_t, 256> inline_;
  std::vector<uint64_t> heap_;
  size_t size_;
};

uint64_t RecordedChecksum(std::string_view stored) {
  uint64_t recorded = 0;
  for (int i = 7; i >= 0; --i) recorded = (recorded << 8) | static_cast<unsigned char>(stored[i]);
  return recorded;
}

// Checks the checksum, then runs the Verifier and field checks on the aligned copy of the body.
Status CheckStored(std::string_view stored) {
  if (stored.size() < kChecksumBytes + 8) return Status::Corrupt("value too short (" + std::to_string(stored.size()) + " bytes)");
  std::string_view body = stored.substr(kChecksumBytes);
  if (XXH3_64bits(body.data(), body.size()) != RecordedChecksum(stored)) return Status::Corrupt("checksum mismatch: the value was altered");
  return Status::Ok();
}

Status CheckBody(const AlignedCopy& copy) {
  flatbuffers::Verifier verifier(copy.data(), copy.size());
  if (!fb::VerifyEntryBuffer(verifier)) return Status::Corrupt("FlatBuffers verification failed");
  const fb::Entry* e = fb::GetEntry(copy.data());
  if (static_cast<uint8_t>(e->kind()) > 2 || static_cast<uint8_t>(e->tune_mode()) > 2)
    return Status::Corrupt("kind or tune mode out of range");
  if (e->policy())
    for (const fb::Knob* k : *e->policy())
      if (int(k->has_int()) + int(k->has_real()) + int(k->text_value() != nullptr) != 1)
        return Status::Corrupt("knob '" + k->name()->str() + "' must hold exactly one value");
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
  flatbuffers::FlatBufferBuilder b(256 + e.descriptor.size());
  std::vector<flatbuffers::Offset<fb::Knob>> knobs;
  for (const Knob& k : e.policy) {
    auto name = b.CreateString(k.name);
    flatbuffers::Offset<flatbuffers::String> text;
    if (auto* s = std::get_if<std::string>(&k.value)) text = b.CreateString(*s);
    fb::KnobBuilder kb(b);
    kb.add_name(name);
    if (auto* i = std::get_if<int64_t>(&k.value)) {
      kb.add_int_value(*i);
      kb.add_has_int(true);
    } else if (auto* r = std::get_if<double>(&k.value)) {
      kb.add_real_value(*r);
      kb.add_has_real(true);
    } else {
      kb.add_text_value(text);
    }
    knobs.push_back(kb.Finish());
  }
  auto op_type = b.CreateString(e.op_type);
  auto descriptor = b.CreateString(e.descriptor);
  auto template_id = b.CreateString(e.template_id);
  auto policy = b.CreateVector(knobs);
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

  const uint64_t checksum = XXH3_64bits(b.GetBufferPointer(), b.GetSize());
  std::string stored(kChecksumBytes + b.GetSize(), '\0');
  for (size_t i = 0; i < kChecksumBytes; ++i) stored[i] = static_cast<char>((checksum >> (8 * i)) & 0xff);
  std::memcpy(stored.data() + kChecksumBytes, b.GetBufferPointer(), b.GetSize());
  return stored;
}

Status VerifyStoredEntry(std::string_view stored) {
  TB_RETURN_IF_ERROR(CheckStored(stored));
  AlignedCopy copy(stored.substr(kChecksumBytes));
  return CheckBody(copy);
}

Result<EntryPeek> PeekEntry(std::string_view stored, std::string_view descriptor) {
  TB_RETURN_IF_ERROR(CheckStored(stored));
  AlignedCopy copy(stored.substr(kChecksumBytes));
  TB_RETURN_IF_ERROR(CheckBody(copy));
  const fb::Entry* f = fb::GetEntry(copy.data());
  EntryPeek peek;
  peek.same_descriptor = f->descriptor()->string_view() == descriptor;
  peek.after_us = f->after() ? f->after()->median_us() : 0;
  return peek;
}

Result<Entry> DecodeEntry(std::string_view stored) {
  TB_RETURN_IF_ERROR(CheckStored(stored));
  AlignedCopy copy(stored.substr(kChecksumBytes));
  TB_RETURN_IF_ERROR(CheckBody(copy));
  const fb::Entry* f = fb::GetEntry(copy.data());
  Entry e;
  e.kind = static_cast<EntryKind>(f->kind());
  e.op_type = f->op_type()->str();
  e.descriptor = f->descriptor()->str();
  e.template_id = f->template_id()->str();
  e.template_version = f->template_version();
  e.tune_mode = static_cast<TuneMode>(f->tune_mode());
  if (f->policy()) {
    e.policy.reserve(f->policy()->size());
    for (const fb::Knob* k : *f->policy()) {
      Knob knob{k->name()->str(), int64_t{0}};
      if (k->has_int()) knob.value = k->int_value();
      else if (k->has_real()) knob.value = k->real_value();
      else knob.value = k->text_value()->str();
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

}  // namespace tilebank
