#!/usr/bin/env bash
# Halide on demand (link/halide_on_demand.cpp), from the outside: the command line and the Python
# extension neither name libHalide as a dependency nor leave a Halide symbol to the dynamic linker;
# a model no Halide kernel runs never maps libHalide, one that compiles a Halide kernel opens it and
# runs, and its next run, the kernel cached with a run description, runs it without opening it.
#   halide_on_demand_test.sh TILEBANK_BINARY PYTHON_EXTENSION
set -euo pipefail
tilebank=$1 extension=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for binary in "$tilebank" "$extension"; do
  if readelf -d "$binary" | grep -q 'NEEDED.*libHalide'; then echo "FAIL: $binary names libHalide as a dependency"; exit 1; fi
  if nm -D --undefined-only "$binary" | grep -q '6Halide'; then
    echo "FAIL: $binary leaves Halide symbols to the dynamic linker (data the stubs cannot stand for?):"
    nm -D --undefined-only "$binary" | grep '6Halide' | head -5
    exit 1
  fi
done
/usr/bin/python3 - "$work" <<'PY'
import sys
from onnx import TensorProto, helper, save
for name, op in (("plain", "Identity"), ("halide", "Relu")):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 37])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 37])
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"])], name, [x], [y])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), f"{sys.argv[1]}/{name}.onnx")
PY
# Runs model $1, the dynamic loader's log in $work/$1.ld.<pid>; prints how many times libHalide was
# initialized. A run that prints no latency fails the test.
export TILEBANK_KERNEL_CACHE="$work/kernels"
opened() {
  rm -f "$work/$1".ld.*
  LD_DEBUG=files LD_DEBUG_OUTPUT="$work/$1.ld" "$tilebank" run -m "$work/$1.onnx" --bank "$work/bank" --repeat 1 --warmup 0 --json >"$work/$1.json"
  grep -q '"latency_ms"' "$work/$1.json" || { echo "FAIL: the $1 model's run printed no latency" >&2; exit 1; }
  cat "$work/$1".ld.* | grep -c 'calling init: .*libHalide' || true
}
plain=$(opened plain)
halide=$(opened halide)
[ "$plain" = 0 ] || { echo "FAIL: an Identity model mapped libHalide"; exit 1; }
[ "$halide" != 0 ] || { echo "FAIL: a Relu model (Halide's elementwise template) did not open libHalide"; exit 1; }
grep -q '"halide_target"' "$work/halide.json" || { echo "FAIL: the Relu model's run built no Halide kernel"; cat "$work/halide.json"; exit 1; }
tr -d ' \n' <"$work/halide.json" | grep -q '"compiled":1' \
 || { echo "FAIL: the Relu model's first run compiled no kernel into the cache"; cat "$work/halide.json"; exit 1; }
warm=$(opened halide)
[ "$warm" = 0 ] || { echo "FAIL: the Relu model's second run, its kernel cached, mapped libHalide"; exit 1; }
tr -d ' \n' <"$work/halide.json" | grep -q '"loaded":1' \
 || { echo "FAIL: the Relu model's second run loaded no cached kernel"; cat "$work/halide.json"; exit 1; }
echo "Halide on demand: no dependency on libHalide, opened only by a model that builds a Halide kernel, not to run a cached one"
