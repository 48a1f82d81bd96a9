#include "repo/improvement.h"

#include <cstdio>

namespace tilebank {

double ImprovementPercent(double before, double after) { return after > 0 ? (before / after - 1.0) * 100.0 : 0.0; }

std::string ImprovementText(double before, double after) { return PercentText(ImprovementPercent(before, after)); }

std::string PercentText(double percent) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", percent);
  return text;
}

}  // namespace tilebank
