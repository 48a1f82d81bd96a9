#!/usr/bin/env bash
# Configures and builds tilebank into BUILD_DIR (default build/). Extra arguments go to cmake.
# BUILD_TARGETS (space-separated) builds only those targets and what they need; default: everything.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
targets=()
for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build_dir" -j"$(nproc)" "${targets[@]}"
