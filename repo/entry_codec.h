// Entry <-> stored bytes. A stored value is an 8-byte little-endian xxh3-64 checksum of the
// FlatBuffer that follows it. DecodeEntry checks the checksum, runs the FlatBuffers Verifier and
// checks required fields, so a flipped byte anywhere in a value is reported, never used.
#pragma once
#include <string>
#include <string_view>

#include "repo/entry.h"

namespace tilebank {

std::string EncodeEntry(const Entry& entry);
Result<Entry> DecodeEntry(std::string_view stored);

// Just the checks of DecodeEntry, without building an Entry.
Status VerifyStoredEntry(std::string_view stored);

// What a write decision needs, after the checks of DecodeEntry, without building an Entry.
struct EntryPeek {
  bool same_descriptor = false;  // the stored descriptor equals `descriptor`
  double after_us = 0;
};
Result<EntryPeek> PeekEntry(std::string_view stored, std::string_view descriptor);

}  // namespace tilebank
