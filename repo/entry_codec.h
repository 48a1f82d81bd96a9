// Entry <-> stored bytes. A stored value is an 8-byte little-endian xxh3-64 checksum of the
// FlatBuffer that follows it. DecodeEntry checks the checksum, runs the FlatBuffers Verifier and
// checks required fields, so a flipped byte anywhere in a value is reported, never used.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "repo/entry.h"

namespace tilebank {

std::string EncodeEntry(const Entry& entry);
Result<Entry> DecodeEntry(std::string_view stored);

// `stored`, a value that passed the checks of DecodeEntry, as a live record of another generation
// and revision (superseded_generation 0), every other byte kept. nullopt when one of these fields
// is not in the buffer (FlatBuffers leaves out a scalar at its default): then decode and encode.
std::optional<std::string> RestampStored(std::string_view stored, uint64_t generation, uint32_t revision);

// Just the checks of DecodeEntry, without building an Entry.
Status VerifyStoredEntry(std::string_view stored);

// What a write decision needs, after the checks of DecodeEntry, without building an Entry.
struct EntryPeek {
  bool same_descriptor = false;  // the stored descriptor equals `descriptor`
  double after_us = 0;
  int verification_rank = 0;     // Entry::VerificationRank
  // Keep-faster's rule: whether an incoming entry of this rank and time replaces the peeked one.
  bool BeatenBy(int rank, double incoming_after_us) const {
    return rank != verification_rank ? rank > verification_rank : incoming_after_us < after_us;
  }
};
// `with_rank`: read verification_rank too (only gradient plans record one; 0 otherwise).
Result<EntryPeek> PeekEntry(std::string_view stored, std::string_view descriptor, bool with_rank = false);

}  // namespace tilebank
