#!/usr/bin/env bash
# Halide on demand (link/halide_on_demand.cpp), from the outside: the command line and the Python
# extension neither name libHalide as a dependency nor leave a Halide symbol to the dynamic linker;
# a model no Halide kernel runs never maps libHalide, and one that compiles a Halide kernel opens it
# and runs.   halide_on_demand_test.sh TILEBANK_BINARY PYTHON_EXTENSION
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
opened() { LD_DEBUG=files "$tilebank" run -m "$work/$1.onnx" --bank "$work/bank" --repeat 1 --warmup 0 --json 2>&1 >"$work/$1.json" | grep -c 'calling init: .*libHalide' || true; }
[ "$(opened plain)" = 0 ] || { echo "FAIL: an Identity model mapped libHalide"; exit 1; }
[ "$(opened halide)" != 0 ] || { echo "FAIL: a Relu model (Halide's elementwise template) did not open libHalide"; exit 1; }
grep -q '"halide_target"' "$work/halide.json" || { echo "FAIL: the Relu model's run built no Halide kernel"; cat "$work/halide.json"; exit 1; }
echo "Halide on demand: no dependency on libHalide, opened only by a model that builds a Halide kernel"
