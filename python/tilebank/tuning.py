"""tilebank.tune and its TuneResult: a tuning job of any type (1 SGAT, 2 OPAT, 4 GDAT) run in this
process by the C++ engine, with the GIL released while it tunes.

callbacks: each is called with every event as a dict ({"event": "job_started" | "task_started" |
"trial" | "task_done" | "job_done", "done", "tasks", "elapsed_s", ...}, trial fields with "trial"); one
that returns True stops the job after the current task, and one that raises stops it and the
exception is raised once the job has stopped. A stopped job goes on with tune(reload="") (the latest
job of its type) or reload=<job name>, as `tilebank tune --reload` does.
"""

import json
import os

from tilebank import _native


class TuneResult:
    """A finished (or stopped) job: its result file as objects, its trials, and its report."""

    def __init__(self, native):
        self.job_type = native["job_type"]
        self.result_path = native["result_path"]
        self.trials_path = native.get("trials_path") or None
        self.tuning_name = native["tuning_name"]
        self.stopped = bool(native.get("stopped", False))
        self.note = native.get("note", "")
        with open(self.result_path) as f:
            self.result = json.load(f)  # AOE's result file: [{"basic": ...}, {"OPAT" | "SGAT" | "GDAT": ...}]
        self.trials, self.tasks = [], []
        if self.trials_path and os.path.exists(self.trials_path):
            with open(self.trials_path) as f:
                for line in f:
                    try:
                        event = json.loads(line)
                    except ValueError:
                        continue  # a line cut by a kill
                    if event.get("event") == "trial":
                        self.trials.append(event)
                    elif event.get("event") == "task_done":
                        self.tasks.append(event)

    @property
    def section(self):
        """The result file's OPAT, SGAT or GDAT section (a dict)."""
        for part in self.result[1:]:
            for value in part.values():
                return value
        return {}

    @property
    def improvement(self):
        """The result file's model_performance_improvement ("12.50%"), or None."""
        return self.section.get("model_performance_improvement")

    def report(self, path="report.html"):
        """Writes the job's HTML report (as `tilebank report RESULT.json -o path`) and returns its path."""
        _native._report_jobs([self.result_path], path)
        return path

    def __repr__(self):
        return "TuneResult(job_type=%d, tuning_name=%r, tasks=%d, trials=%d, improvement=%r%s)" % (
            self.job_type, self.tuning_name, len(self.tasks), len(self.trials), self.improvement,
            ", stopped" if self.stopped else "")


def tune(path=None, job_type=2, bank=None, soc=None, trials=48, time_budget=0.0, callbacks=(), progress=True,
         output_dir=".", reload=None, input_shapes=None, repeat_tune=False, seed=1, patience=12, precision_mode="force_fp32"):
    """Tunes `path` and stores the winners in the bank, as `tilebank tune` does.

    path: an ONNX model (job types 1 and 2), an ATC operator list (2), a subgraph file (1) or a gradient
    profile (4). bank: the bank root (default: the CLI's). soc: this machine's soc_version (job type 4
    may name another). trials: candidates per task; patience: a template's search for a task ends after this many
    trials in a row that made it no faster (0: never); time_budget: seconds in all (0: none). progress: a
    live line on a terminal, a line per task elsewhere. input_shapes: "name:d0,d1;name2:..." for dynamic
    inputs. precision_mode (job type 2): "force_fp32", or "allow_fp32_to_bf16" to also try bf16 kernels where
    the CPU has them (README: precision). Returns a TuneResult.
    """
    if callable(callbacks):
        callbacks = [callbacks]
    native = _native._tune(None if path is None else os.fspath(path), job_type, bank, soc, trials, float(time_budget),
                           list(callbacks), progress, output_dir, reload, input_shapes, repeat_tune, seed, patience, precision_mode)
    return TuneResult(native)


def report(result_paths, path="report.html"):
    """The HTML report of one or more jobs' result files (several: a batch's shards over time)."""
    if isinstance(result_paths, (str, os.PathLike)):
        result_paths = [result_paths]
    _native._report_jobs([os.fspath(p) for p in result_paths], os.fspath(path))
    return path


def bank_report(bank=None, path="bank_report.html", soc=None, model=None, diff=None):
    """The HTML report of a bank: entries per op type and template, provenance, a model's coverage, a diff."""
    _native._report_bank(bank or "", soc or "", model or "", diff or "", os.fspath(path))
    return path
