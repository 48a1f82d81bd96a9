// Bank upkeep: an entry's revisions, pruning stale entries, upgrading an older format.
#pragma once
#include <vector>

#include "repo/bank.h"
#include "repo/template_versions.h"

namespace tilebank {

// The live entry (if any) and every superseded revision of a key, oldest first.
Result<std::vector<Entry>> EntryLog(const Bank& bank, EntryKind kind, Key key);

// Moves every stale entry to history in one transaction; returns how many.
Result<size_t> PruneStale(Bank& bank, const TemplateVersions& current_versions, bool dry_run);

}  // namespace tilebank
