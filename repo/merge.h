// Merging banks of one soc_version: entries the destination lacks are added; for a shared key
// the faster measured entry wins (ties keep the destination's) and the loser goes to history.
// Every source value is verified; one bad value or a source of another soc_version refuses the
// whole merge and nothing is written.
#pragma once
#include <vector>

#include "repo/bank.h"

namespace tilebank {

Result<WriteCounts> MergeInto(Bank& destination, const std::vector<const Bank*>& sources, bool dry_run);

}  // namespace tilebank
