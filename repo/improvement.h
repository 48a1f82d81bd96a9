// "Performance improved by": AOE's definition, the one tilebank uses everywhere (result files,
// the closing line, `bank query`): before / after - 1, as a percentage. 134 us -> 99 us is 35.35%.
#pragma once
#include <string>

namespace tilebank {

// 0 when `after` is not positive.
double ImprovementPercent(double before, double after);
// "35.35%".
std::string ImprovementText(double before, double after);
// A percentage as the closing line prints it: "35.35%".
std::string PercentText(double percent);

}  // namespace tilebank
