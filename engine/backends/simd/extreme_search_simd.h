// Searches for extremes of float32 rows, with Highway for the running CPU's best SIMD: ArgMax /
// ArgMin along one axis (a vector of inner positions at a time, or of one row's elements), and the next value past a bar
// (TopK passing over values that cannot enter its k), and TopK's order of a short row.
#pragma once
#include <cstdint>

namespace tilebank::engine {

// at[i] = the a in [0, dim) of the largest (smallest, when !max) row[a * inner + i], for i in
// [0, n): the first one, or the last with `last`. Nothing compares past a NaN: one at a = 0 stays the
// answer, a later one is never taken (tilebank's reference kernel compares so).
void ArgExtremeFloatRows(const float* row, int64_t dim, int64_t inner, int64_t n, bool max, bool last, int64_t* at);

// The same for one contiguous row (inner 1, the reduced axis the last): the a in [0, dim) of the
// largest (smallest) row[a], a vector of consecutive elements at a time, same rules.
int64_t ArgExtremeAlongRow(const float* row, int64_t dim, bool max, bool last);

// TopK's order of one float32 row of at most kRankRowMax values, counting for each value those that
// go before it (larger, or smaller when !largest; equal ones at a lower index) a vector at a time:
// order[0, k) gets the first k indices in that order, or by index when !sorted. False, with order
// untouched, when the row holds a NaN (the caller's sort orders those).
constexpr int64_t kRankRowMax = 128;
bool RankOrderRow(const float* row, int64_t dim, bool largest, bool sorted, int64_t k, int64_t* order);

// The first i in [0, n) with v[i] > bar (v[i] < bar when !above) or v[i] NaN; n when none.
int64_t FirstBeyond(const float* v, int64_t n, float bar, bool above);

}  // namespace tilebank::engine
