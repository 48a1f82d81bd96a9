"""Systems compared side by side, alternated: round r runs every column once, forward in even rounds
and backward in odd ones (ab.., ..ba), so a change in the machine's speed while they run (clock,
another process, the page cache) falls on every column alike. Each column's time is the median of
its round medians.

  from alternate import alternate
  ms, rounds_ms, last = alternate({"tilebank": fn_a, "ONNX Runtime": fn_b}, rounds=3)

Each column is a function of no arguments returning (median_ms, details); `last` holds each column's
details from its last round (a JSON answer, an ONNX Runtime result).
"""
import statistics


def alternate(columns, rounds):
    names = list(columns)
    rounds_ms = {name: [] for name in names}
    last = {}
    for r in range(max(1, rounds)):
        for name in (names if r % 2 == 0 else list(reversed(names))):
            ms, details = columns[name]()
            rounds_ms[name].append(ms)
            last[name] = details
    return {name: statistics.median(v) for name, v in rounds_ms.items()}, rounds_ms, last
