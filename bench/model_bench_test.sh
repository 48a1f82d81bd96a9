#!/usr/bin/env bash
# bench/model_bench.py checks its binaries before any long work: given a --build it cannot build
# into, it stops in seconds with a message naming them, before exporting or tuning any model.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
touch "$work/file"
start=$(date +%s)
/usr/bin/python3 "$root/bench/model_bench.py" --build "$work/file/build" resnet50 >"$work/out" 2>"$work/err"
rc=$?
took=$(($(date +%s) - start))
failed=0
if [ "$rc" -eq 0 ]; then echo "FAIL: exit 0 without its binaries"; failed=1; fi
if ! grep -q "model_bench: cannot build tilebank and fma_peak" "$work/err"; then echo "FAIL: no message naming the binaries:"; cat "$work/err"; failed=1; fi
if grep -q "^== resnet50" "$work/err"; then echo "FAIL: it started on the model first"; failed=1; fi
if [ "$took" -gt 60 ]; then echo "FAIL: took ${took} s"; failed=1; fi
[ "$failed" -eq 0 ] && echo "ok: refused in ${took} s: $(tail -1 "$work/err")"
echo "$((1 - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
