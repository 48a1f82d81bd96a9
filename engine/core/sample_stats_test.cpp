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

TEST_CASE("PairedDifferenceOf: the median of the pairs' differences and the sign test's 95% interval") {
  CHECK(PairedDifferenceOf({}, {1, 2}).pairs == 0);
  // Ten pairs: the interval is the 2nd to the 9th smallest difference (coverage 97.9%).
  const std::vector<double> a = {10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
  std::vector<double> b = a;
  const std::vector<double> d = {0.5, -0.2, 0.9, 0.3, 0.7, 0.1, 0.4, 0.8, 0.6, 0.2};  // sorted: -0.2 0.1 0.2 ... 0.9
  for (size_t i = 0; i < b.size(); ++i) b[i] -= d[i];
  const PairedDifference p = PairedDifferenceOf(a, b);
  CHECK(p.pairs == 10);
  CHECK(p.median == doctest::Approx(0.45));
  CHECK(p.low == doctest::Approx(0.1));
  CHECK(p.high == doctest::Approx(0.8));
  // Fewer than 6 pairs: the smallest and largest difference.
  const PairedDifference few = PairedDifferenceOf({5, 5, 5}, {4, 4.5, 3});
  CHECK(few.low == doctest::Approx(0.5));
  CHECK(few.high == doctest::Approx(2));
  // Unpaired samples past the shorter side are left out.
  CHECK(PairedDifferenceOf({1, 1, 1, 100}, {0, 0, 0}).pairs == 3);
  // Many pairs narrow the interval around the median: 100 pairs alternating 0.9 and 1.1.
  std::vector<double> many_a(100, 10), many_b;
  for (int i = 0; i < 100; ++i) many_b.push_back(10 - (i % 2 ? 0.9 : 1.1));
  const PairedDifference many = PairedDifferenceOf(many_a, many_b);
  CHECK(many.low == doctest::Approx(0.9));
  CHECK(many.high == doctest::Approx(1.1));
}

TEST_CASE("FasterBeyondSpread: kept only when the whole interval is above zero and the gain is at least 1% of the baseline") {
  CHECK(FasterBeyondSpread({0.5, 0.1, 0.9, 10}, 10.0));
  CHECK_FALSE(FasterBeyondSpread({0.5, -0.1, 0.9, 10}, 10.0));  // the interval reaches zero
  CHECK_FALSE(FasterBeyondSpread({0.05, 0.01, 0.09, 10}, 10.0));  // a clear gain, but 0.5% of 10
  CHECK_FALSE(FasterBeyondSpread({}, 10.0));  // nothing measured
  CHECK(SlowerBeyondSpread({-0.5, -0.9, -0.1, 10}));
  CHECK_FALSE(SlowerBeyondSpread({-0.5, -0.9, 0.1, 10}));
  CHECK_FALSE(SlowerBeyondSpread({}));
}

}  // namespace tilebank::engine
