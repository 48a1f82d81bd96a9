#!/usr/bin/env bash
# bank_bench refuses what it must not run on, with exit 2 and nothing removed: a --dir that holds
# files, counts of zero or not numbers; and a small run labels its lines by its own counts. Usage: bank_bench_args_test.sh BANK_BENCH
set -u
bench=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0 passed=0
expect_refused() {  # expect_refused WHAT ARGS...
  local what=$1; shift
  "$bench" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  if [ "$rc" -ne 2 ] || ! grep -q "bank_bench: " "$work/err"; then
    echo "FAIL: $what: exit $rc, stderr: $(cat "$work/err")"; failed=$((failed + 1))
  else
    echo "ok: $what: $(cat "$work/err")"; passed=$((passed + 1))
  fi
}
mkdir -p "$work/keep" && echo precious >"$work/keep/file.txt"
expect_refused "a --dir that holds a file" --dir "$work/keep" --entries 10 --lookups 10
if [ "$(cat "$work/keep/file.txt" 2>/dev/null)" != precious ]; then echo "FAIL: --dir's file was removed"; failed=$((failed + 1)); fi
expect_refused "--entries 0" --entries 0 --dir "$work/a"
expect_refused "--lookups 0" --lookups 0 --dir "$work/b"
expect_refused "--repeats 0" --repeats 0 --dir "$work/c"
expect_refused "--entries not a number" --entries 12abc --dir "$work/d"
expect_refused "--entries negative" --entries -5 --dir "$work/e"
# A small run names what it merged, and does not judge the goal set at 1M + 1M.
if "$bench" --entries 200 --lookups 200 --repeats 1 --dir "$work/small" >"$work/out" 2>"$work/err" &&
   grep -q "merge 200 + 200 < 20 s .*not judged" "$work/out" && ! grep -q "merge 1M" "$work/out"; then
  echo "ok: --entries 200 labels its merge line by its own count"; passed=$((passed + 1))
else
  echo "FAIL: --entries 200: $(grep merge "$work/out") $(cat "$work/err")"; failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
