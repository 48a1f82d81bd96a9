#include "engine/core/sample_stats.h"

#include <doctest/doctest.h>

#include <string>

namespace tilebank::engine {

TEST_CASE("sample stats: one rule for the median and the interquartile spread, whatever the order of the samples") {
  CHECK(Summarize({}).median == 0);
  CHECK(Summarize({}).spread == 0);
  CHECK(Summarize({7}).median == 7);
  CHECK(Summarize({7}).spread == 0);
  CHECK(Summarize({4, 1, 3, 2}).median == doctest::Approx(2.5));       // the mean of the middle two
  CHECK(Summarize({5, 1, 4, 2, 3}).median == doctest::Approx(3));
  CHECK(Summarize({5, 1, 4, 2, 3}).spread == doctest::Approx(2));      // 4 - 2
  CHECK(Summarize({1, 2, 3, 4}).spread == doctest::Approx(1.5));       // 3.25 - 1.75, interpolated
  CHECK(Summarize({10, 10, 10, 1000}).median == doctest::Approx(10));  // one outlier moves neither
  CHECK(Summarize({10, 10, 10, 1000}).spread == doctest::Approx(247.5));
}

TEST_CASE("FastestOf: every run called, the warm-up untimed, a failure gives 1e30 at once") {
  int calls = 0;
  const double fastest = FastestOf(5, 2, [&] {
    ++calls;
    return true;
  });
  CHECK(calls == 5);
  CHECK(fastest >= 0);
  CHECK(fastest < 1e30);
  calls = 0;
  CHECK(FastestOf(5, 1, [&] { return ++calls < 3; }) == 1e30);
  CHECK(calls == 3);
  CHECK(FastestOf(2, 2, [] { return true; }) == 1e30);  // nothing timed
}

TEST_CASE("FastestOfAlternated: the ways take turns, round by round, and a failing way gives 1e30, the others their times") {
  std::string order;
  const std::vector<double> fastest = FastestOfAlternated(3, 2, 1,
                                                          {[&] {
                                                             order += 'a';
                                                             return true;
                                                           },
                                                           [&] {
                                                             order += 'b';
                                                             return order.size() < 3;  // fails at each of its calls
                                                           }});
  CHECK(order == "aabaabaab");  // FastestOf stops a way at its first failure
  REQUIRE(fastest.size() == 2);
  CHECK(fastest[0] < 1e30);
  CHECK(fastest[1] == 1e30);
  CHECK(FastestOfAlternated(2, 3, 0, {}).empty());
}

}  // namespace tilebank::engine
