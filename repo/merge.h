// Merging banks of one soc_version: entries the destination lacks are added; for a shared key
// the faster measured entry wins (ties keep the destination's) and the loser goes to history.
// Every source value is verified; one bad value or a source of another soc_version refuses the
// whole merge and nothing is written.
#pragma once
#include <vector>

#include "repo/bank.h"

namespace tilebank {

// How the entries go in; every method gives the same bank. kAuto rewrites a kind's table in key
// order when the sources hold at least a quarter as many entries of that kind as the destination
// (a batch's merge), and puts them one by one otherwise (a few entries into a large bank).
enum class MergeMethod { kAuto, kPutEach, kRewrite };

Result<WriteCounts> MergeInto(Bank& destination, const std::vector<const Bank*>& sources, bool dry_run,
                              MergeMethod method = MergeMethod::kAuto);

}  // namespace tilebank
