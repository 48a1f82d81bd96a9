#include "repo/improvement.h"

#include <cstdio>

namespace tilebank {

double ImprovementPercent(double before, double after) { return after > 0 ? (before / after - 1.0) * 100.0 : 0.0; }

std::string ImprovementText(double before, double after) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", ImprovementPercent(before, after));
  return text;
}

}  // namespace tilebank
