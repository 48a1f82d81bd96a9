// A checked, read-only view of one stored entry, read in place: the value is copied once into
// an aligned buffer the view owns (and reuses), its checksum and FlatBuffers structure are
// checked, and fields are read without building an Entry. This is the runtime's fast path;
// ToEntry() gives the full copy.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "bank_entry_generated.h"
#include "repo/entry.h"

namespace tilebank {

class EntryView {
 public:
  // Copies `stored` (checksum + FlatBuffer) and checks it; on error the view is empty.
  Status Reset(std::string_view stored);
  bool empty() const { return entry_ == nullptr; }

  const fb::Entry& raw() const { return *entry_; }
  std::string_view descriptor() const { return entry_->descriptor()->string_view(); }
  std::string_view op_type() const { return entry_->op_type()->string_view(); }
  std::string_view template_id() const { return entry_->template_id()->string_view(); }
  uint32_t template_version() const { return entry_->template_version(); }
  double after_us() const { return entry_->after() ? entry_->after()->median_us() : 0; }
  // Entry::VerificationRank of the stored value.
  int verification_rank() const {
    const auto verified = policy()["verified"];
    return verified.IsString() && verified.AsString().str() == "measured";
  }
  // The policy: knob name -> integer, real or text (a FlexBuffers map, checked by Reset).
  flexbuffers::Map policy() const {
    return entry_->policy() ? entry_->policy_flexbuffer_root().AsMap() : flexbuffers::Map::EmptyMap();
  }

  Entry ToEntry() const;

 private:
  std::vector<uint64_t> buffer_;
  const fb::Entry* entry_ = nullptr;
};

}  // namespace tilebank
