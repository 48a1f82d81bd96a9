#!/usr/bin/env bash
# Clean-build times of the command line as the README's demo builds it (the commit's own
# scripts/build.sh with BUILD_TARGETS=tilebank and -DTILEBANK_BENCH=OFF: configure and compile, its
# generator and unity settings), for each commit given (default: HEAD), each from a fresh export of
# the commit into a temporary directory, one after another on this machine.
# Usage: bench/build_time.sh [COMMIT...]    e.g. bench/build_time.sh c01c395 HEAD
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
commits=("$@")
[ ${#commits[@]} -eq 0 ] && commits=(HEAD)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-12s %-10s %10s %10s %10s\n' commit generator wall_s cpu_s objects
for c in "${commits[@]}"; do
  id=$(git -C "$repo" rev-parse --short "$c")
  rm -rf "$work/src" && mkdir -p "$work/src"
  git -C "$repo" archive "$id" | tar -x -C "$work/src"
  start=$(date +%s.%N)
  (cd "$work/src" && BUILD_DIR=build BUILD_TARGETS=tilebank /usr/bin/time -f '%U %S' -o "$work/cpu" bash scripts/build.sh -DTILEBANK_BENCH=OFF \
    >"$work/log" 2>&1) || { tail -20 "$work/log"; exit 1; }
  end=$(date +%s.%N)
  read -r user sys < "$work/cpu"
  generator=$(grep -m1 '^CMAKE_GENERATOR:' "$work/src/build/CMakeCache.txt" | cut -d= -f2 | tr ' ' '_')
  objects=$(find "$work/src/build" -name '*.o' | wc -l)
  printf '%-12s %-10s %10.0f %10.0f %10d\n' "$id" "$generator" "$(echo "$end - $start" | bc)" "$(echo "$user + $sys" | bc)" "$objects"
done
echo "wall_s: configure and build, from clean; cpu_s: user + system seconds of the build's processes; $(nproc) cores"
