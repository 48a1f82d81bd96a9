#!/usr/bin/env bash
# Configures and builds tilebank into BUILD_DIR (default build/). Extra arguments go to cmake.
# BUILD_TARGETS (space-separated) builds only those targets and what they need; default: everything.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
# Ninja compiles a library's sources while the layers below it still build (Make waits for each
# library); a build directory made earlier keeps its generator.
generator=()
[ -f "$build_dir/CMakeCache.txt" ] || generator=(-G Ninja)
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
targets=()
for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build_dir" -j"$(nproc)" "${targets[@]}"
