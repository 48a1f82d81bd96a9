// A bank entry in memory: one tuned policy and its provenance (schema/bank_entry.fbs on disk).
#pragma once
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "repo/key.h"

namespace tilebank {

enum class TuneMode : uint8_t { kSchedule = 0, kFormat = 1, kImpl = 2 };
const char* TuneModeName(TuneMode mode);  // "Schedule", "Format", "Impl" (AOE's spelling)
Result<TuneMode> ParseTuneMode(std::string_view name);

// One named knob of a policy: an integer, a real or a text.
struct Knob {
  std::string name;
  std::variant<int64_t, double, std::string> value;
  bool operator==(const Knob&) const = default;
};

struct Measurement {
  double median_us = 0;
  double spread_us = 0;
  uint32_t runs = 0;
  bool operator==(const Measurement&) const = default;
};

struct Entry {
  EntryKind kind = EntryKind::kOp;
  std::string op_type;
  std::string descriptor;  // canonical (repo/canonical.h); KeyOfDescriptor(descriptor) is the key
  std::string template_id;
  uint32_t template_version = 0;
  TuneMode tune_mode = TuneMode::kSchedule;
  std::vector<Knob> policy;  // sorted by name
  Measurement before;
  Measurement after;
  uint32_t trials = 0;
  std::string strategy;
  int64_t created_unix_ms = 0;
  std::string tool_version;
  uint32_t revision = 0;
  std::string origin_host;
  std::string origin_bank;
  // Bank-local bookkeeping, not part of an export:
  uint64_t generation = 0;             // the bank generation that wrote this revision
  uint64_t superseded_generation = 0;  // history only: the generation that replaced or removed it

  Key key() const { return KeyOfDescriptor(descriptor); }
  // 1 when the policy says its times were measured where it runs (knob verified = "measured", as
  // a gradient plan measured in a running job records), else 0 (verified by a model, or no knob).
  // Keep-faster compares gradient plans' times only between entries of one rank: a higher rank
  // wins outright. Other kinds carry no such knob and are compared by time alone.
  int VerificationRank() const {
    for (const Knob& k : policy)
      if (k.name == "verified") return std::holds_alternative<std::string>(k.value) && std::get<std::string>(k.value) == "measured";
    return 0;
  }
  // Whether the times are a cost model's predictions rather than measurements (knob verified =
  // "model", as an offline gradient plan records): their runs are then 0.
  bool IsPrediction() const {
    for (const Knob& k : policy)
      if (k.name == "verified") return std::holds_alternative<std::string>(k.value) && std::get<std::string>(k.value) == "model";
    return false;
  }
  // Everything but the bank-local bookkeeping (revision, generation, superseded_generation).
  bool SameContent(const Entry& o) const {
    return kind == o.kind && op_type == o.op_type && descriptor == o.descriptor && template_id == o.template_id &&
           template_version == o.template_version && tune_mode == o.tune_mode && policy == o.policy &&
           before == o.before && after == o.after && trials == o.trials && strategy == o.strategy &&
           created_unix_ms == o.created_unix_ms && tool_version == o.tool_version && origin_host == o.origin_host &&
           origin_bank == o.origin_bank;
  }
  // Same policy and measurements (what diff compares); provenance and bookkeeping ignored.
  bool SamePolicyAndTimes(const Entry& other) const {
    return policy == other.policy && after == other.after && before == other.before &&
           tune_mode == other.tune_mode && template_id == other.template_id &&
           template_version == other.template_version;
  }
};

}  // namespace tilebank
