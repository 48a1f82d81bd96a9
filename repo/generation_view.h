// The entries of a bank as they stood at a generation: the current entry when it was written at
// or before that generation, else the history revision that was live then.
#pragma once
#include <map>
#include <optional>
#include <string>

#include "repo/bank.h"

namespace tilebank {

// Stored values (checksum + FlatBuffer) by key, for one kind; nullopt generation: as of now.
Result<std::map<Key, std::string>> StoredEntriesAt(const Snapshot& snapshot, EntryKind kind,
                                                   std::optional<uint64_t> generation);

}  // namespace tilebank
