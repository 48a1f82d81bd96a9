#!/usr/bin/env bash
# cmake/check_layers.cmake on made-up trees: an include that reaches a higher layer fails naming the
# file, the header and the layers it may use; includes downward and within a layer pass; and the
# real tree passes.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/engine/core" "$tree/engine/runtime" "$tree/base"
printf '#include "base/status.h"\n#include "engine/core/a.h"\n' > "$tree/engine/core/b.h"
printf '#include "engine/core/b.h"\n' > "$tree/engine/runtime/c.cpp"
check() { cmake -DSOURCE_DIR="$1" -DSTAMP="$tree/stamp" -P "$src/cmake/check_layers.cmake" 2>&1; }
check "$tree" >/dev/null || { echo "FAIL: downward includes refused"; exit 1; }
printf '#include "engine/runtime/c.h"\n' > "$tree/engine/core/d.cpp"
if out=$(check "$tree"); then echo "FAIL: an upward include passed"; exit 1; fi
grep -q "engine/core/d.cpp includes engine/runtime/c.h: layer core may include only core, repo, base, not runtime" <<<"$out" ||
  { echo "FAIL: unexpected message: $out"; exit 1; }
rm "$tree/engine/core/d.cpp"
printf '#include "engine/core/b.h"\n' > "$tree/engine/core/e_test.cpp"   # a unit test may include anything
printf '#include "tools/cli_common.h"\n' > "$tree/base/f.cpp"
if out=$(check "$tree"); then echo "FAIL: an include of tools/ from base passed"; exit 1; fi
grep -q "base/f.cpp includes tools/cli_common.h, which no layer below base holds" <<<"$out" || { echo "FAIL: unexpected message: $out"; exit 1; }
rm "$tree/base/f.cpp"
check "$tree" >/dev/null || { echo "FAIL: a unit test's include was checked"; exit 1; }
check "$src" >/dev/null || { echo "FAIL: the source tree crosses its layers:"; check "$src"; exit 1; }
echo "layer check: upward includes refused, the tree clean"
