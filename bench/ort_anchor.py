"""ONNX Runtime as the anchor of the benches and the zoo: runs a model through bench/ort/ort_run.js
(onnxruntime-node 1.30's CPU provider, installed by `scripts/setup.sh --ort`) on ONNX test data
(input_<i>.pb) and returns its times, outputs and time per op type. tilebank never links it.

  import ort_anchor
  result = ort_anchor.run(model, data_dir, threads=2, warmup=2, repeat=10, profile=False)
  result.median_ms, result.load_ms, result.peak_rss_mib, result.outputs (numpy arrays in the
  model's order), result.op_ms and result.node_ms (ms per run by op type and by node name, with
  profile=True)

Raises ort_anchor.Unavailable when Node.js or the npm package is missing, RuntimeError (ONNX
Runtime's message) when it refuses the model.
"""
import glob
import json
import os
import statistics
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "ort", "ort_run.js")
PACKAGE = os.path.join(HERE, "ort", "node_modules", "onnxruntime-node")


class Unavailable(RuntimeError):
    pass


class Result:
    def __init__(self, answer, outputs):
        self.version = answer["version"]
        self.times_ms = answer["times_ms"]
        self.median_ms = statistics.median(self.times_ms)
        self.load_ms = answer["load_ms"]
        self.peak_rss_mib = answer.get("peak_rss_mib")
        self.outputs = outputs
        self.op_ms = answer.get("op_ms", {})
        self.node_ms = answer.get("node_ms", {})


def available():
    return os.path.isdir(PACKAGE) and subprocess.run(["node", "--version"], capture_output=True).returncode == 0


def read_inputs(model_path, data_dir):
    """The test data's inputs in the model's order, named as the model's runtime inputs."""
    import onnx
    from onnx import numpy_helper
    model = onnx.load(model_path, load_external_data=False)
    initializers = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    arrays = []
    for k, name in enumerate(names):
        tensor = onnx.TensorProto()
        with open(os.path.join(data_dir, f"input_{k}.pb"), "rb") as f:
            tensor.ParseFromString(f.read())
        arrays.append((name, numpy_helper.to_array(tensor)))
    return arrays


def read_outputs(data_dir):
    import onnx
    from onnx import numpy_helper
    outputs = []
    for path in sorted(glob.glob(os.path.join(data_dir, "output_*.pb")), key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0])):
        tensor = onnx.TensorProto()
        with open(path, "rb") as f:
            tensor.ParseFromString(f.read())
        outputs.append(numpy_helper.to_array(tensor))
    return outputs


def run(model_path, data_dir, threads=2, warmup=2, repeat=10, profile=False, keep_outputs=True):
    import numpy as np
    if not available():
        raise Unavailable("ONNX Runtime is not installed: run scripts/setup.sh --ort (Node.js and npm's onnxruntime-node 1.30.0)")
    with tempfile.TemporaryDirectory() as work:
        inputs = []
        for k, (name, array) in enumerate(read_inputs(model_path, data_dir)):
            path = os.path.join(work, f"input_{k}.bin")
            np.ascontiguousarray(array).tofile(path)
            inputs.append({"name": name, "type": str(array.dtype), "dims": list(array.shape), "file": path})
        request = {"model": os.path.abspath(model_path), "threads": threads, "warmup": warmup, "repeat": repeat, "profile": profile,
                   "inputs": inputs, "outputs_dir": work if keep_outputs else None, "outputs": None}
        request_path = os.path.join(work, "request.json")
        with open(request_path, "w") as f:
            json.dump(request, f)
        p = subprocess.run(["node", RUNNER, request_path], capture_output=True, text=True)
        lines = p.stdout.strip().splitlines()
        answer = json.loads(lines[-1]) if lines else {"error": (p.stderr.strip().splitlines() or ["no answer"])[-1]}
        if "error" in answer:
            raise RuntimeError("ONNX Runtime: " + answer["error"])
        outputs = []
        for o in answer.get("outputs", []):
            dtype = {"bool": np.bool_}.get(o["type"], o["type"])
            outputs.append(np.fromfile(o["file"], dtype=dtype).reshape(o["dims"]))
        return Result(answer, outputs)
