#include "repo/improvement.h"

#include <doctest/doctest.h>

namespace tilebank {

TEST_CASE("improvement is AOE's before / after - 1 (seeds/004: 134 us -> 99 us is 35.35%)") {
  CHECK(ImprovementText(134, 99) == "35.35%");
  CHECK(ImprovementText(200, 100) == "100.00%");
  CHECK(ImprovementText(100, 125) == "-20.00%");
  CHECK(ImprovementPercent(5, 0) == 0);
}

}  // namespace tilebank
