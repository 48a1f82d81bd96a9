"""ONNX Runtime's profile of a session: a JSON array of Chrome trace events ("ph": "X"), one per
line, that chrome://tracing, Perfetto and ONNX Runtime's own tools read.

Events: "model_loading_uri" (the load, the binding of a model whose input shapes are fixed
included), then per run
one "<step>_kernel_time" event per executor step (category "Node": its measured time, with args
op_name, provider and tilebank's template, policy, its source (bank, nearest, builtin) and layout) and "model_run" (category "Session").
Times are microseconds since the profile started. A run's steps run one after another, so each
step's "ts" is the run's start plus the steps before it.
"""
import json
import os
import threading
import time

from tilebank.onnxruntime.providers import TILEBANK


class Profile:
    def __init__(self, prefix):
        self._prefix = prefix
        self._start_ns = time.time_ns()
        self._clock0 = time.perf_counter_ns()
        self._events = []
        self._lock = threading.Lock()

    @property
    def start_time_ns(self):
        return self._start_ns

    def now_us(self):
        return (time.perf_counter_ns() - self._clock0) // 1000

    def session_event(self, name, start_us, end_us):
        self._add({"cat": "Session", "name": name, "ts": start_us, "dur": max(0, end_us - start_us), "args": {}})

    def run_events(self, start_us, end_us, steps):
        ts = start_us
        events = []
        for step in steps:
            dur = int(round(step["time_us"]))
            events.append({"cat": "Node", "name": f"{step['name'] or step['op_type']}_kernel_time", "ts": ts, "dur": dur,
                           "args": {"op_name": step["op_type"], "provider": TILEBANK, "template": step["template"],
                                    "policy": step["policy"], "source": step["source"], "layout": step["layout"]}})
            ts += dur
        events.append({"cat": "Session", "name": "model_run", "ts": start_us, "dur": max(0, end_us - start_us), "args": {}})
        for event in events:
            self._add(event)

    def write(self):
        """Writes <prefix>_<date>_<time>.json in the working directory; returns its name."""
        name = f"{self._prefix}_{time.strftime('%Y-%m-%d_%H-%M-%S', time.localtime(self._start_ns / 1e9))}.json"
        pid = os.getpid()
        with self._lock:
            events = list(self._events)
        lines = []
        for event in events:
            full = {"cat": event["cat"], "pid": pid, "tid": event.get("tid", pid), "dur": event["dur"], "ts": event["ts"],
                    "ph": "X", "name": event["name"], "args": event["args"]}
            lines.append(json.dumps(full))
        with open(name, "w") as f:
            f.write("[\n" + ",\n".join(lines) + "\n]\n")
        return name

    def _add(self, event):
        event["tid"] = threading.get_native_id()
        with self._lock:
            self._events.append(event)
