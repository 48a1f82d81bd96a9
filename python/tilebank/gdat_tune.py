"""GDAT in a running DDP job (TILEBANK_GDAT=tune): records, plans, verifies, keeps.

Driven from DDP's forward pre-hook, on every rank alike (decisions are rank 0's, broadcast):
  1. `warmup` iterations, then `record` iterations under DDP's default plan: each gradient's ready
     time (the median over them, in the order rank 0 saw them become ready);
  2. the communicator's AllReduce time across sizes, measured on DDP's process group;
  3. rank 0 writes the profile and has `tilebank tune -j 4 --print-plans` plan it; the candidates
     are DDP's default (DDP's own reducer, the baseline, and the same plan through tilebank's), the
     other anchors within the segment cap (one bucket, Horovod's 64 MB and 128 MB, HCCL's split),
     the `candidates` best plans the model predicts and the bank's plan, if any;
  4. the candidates run in the loop in rounds (`rounds`: [(how many go on, timed iterations each)]):
     in each round every candidate left runs in turn, one untimed iteration after each switch then
     its timed ones (iteration time, backward start to the last AllReduce done, the hangover); after
     a round only the fastest go on (median iteration so far), DDP's default always among them;
  5. rank 0 hands the measurements to `tilebank tune -j 4 --measured` (the last round's plans are
     the finalists), which keeps the fastest finalist in the bank (verified=measured) when it is
     clearly faster than DDP's default (engine/gdat/plan_measurements.h: ClearlyFaster) and writes
     aoe_result_gdat_<time>_<pid>.json (ASCEND_WORK_PATH or the working directory) and the closing
     line; training goes on with the plan kept, or with DDP's default when none beat it.
By default: all candidates x 2 timed, the best 4 and DDP's x 3, the best 2 and DDP's x 4; with the
usual 9-11 candidates 7 + 63..75 iterations.
"""
import json
import os
import shutil
import statistics
import sys
import tempfile

import torch.distributed as dist

from tilebank import cli, ddp_plan, gradient_profile
from tilebank.step_clock import StepClock


def _broadcast(value, group):
    box = [value]
    dist.broadcast_object_list(box, src=0, group=group)
    return box[0]


class GdatTuner:
    ANCHORS = ("one bucket", "horovod (64 MB)", "horovod (128 MB)", "hccl (96.54% / 3.46%)")

    def __init__(self, ddp, problem, bank_ends=None, warmup=2, record=5, candidates=3,
                 rounds=((None, 2), (4, 3), (2, 4)), max_segments=8, log=None):
        self.ddp = ddp
        self.problem = problem  # torch.GradientProblem: parameters, world, communicator
        self.bank_ends = bank_ends
        self.warmup, self.record, self.candidates = warmup, record, candidates
        self.rounds, self.max_segments = list(rounds), max_segments
        self.round = 0
        self.left = []           # candidate indices still in the running
        self.group = ddp.process_group
        self.rank = dist.get_rank(self.group)
        self.log = log or (lambda msg: print(msg, file=sys.stderr, flush=True) if self.rank == 0 else None)
        self.clock = StepClock(ddp, problem.params)
        self.iteration = 0
        self.recorded = []
        self.schedule = []
        self.active = None       # (candidate index, timed) of the iteration under way
        self.measured = {}       # candidate index -> [IterationSample]
        self.plans = []          # [(name, ends)]
        self.order = None
        self.work_dir = None
        self.profile_path = None
        self.profile = None      # rank 0: the profile planned from
        self.tuning_iterations = 0
        self.kept = None         # (name, ends) or None once done
        self.done = False
        self._hook = ddp.register_forward_pre_hook(self._on_forward_start)

    # The state machine: one step per forward.
    def _on_forward_start(self, *_):
        sample = self.clock.next_iteration()
        self.iteration += 1
        if self.active is not None and sample is not None and self.active[1]:
            self.measured.setdefault(self.active[0], []).append(sample)
        if self.iteration <= self.warmup + 1:
            return  # iteration `warmup + 1` is the first recorded; its sample arrives at the next forward
        if not self.plans:
            if sample is not None:
                self.recorded.append(sample)
            if len(self.recorded) < self.record:
                return
            self._plan()
            if self.done:
                return  # planning failed: DDP's default plan goes on
        if not self.schedule and self.round < len(self.rounds):
            self._next_round()
        if self.schedule:
            index, timed = self.schedule.pop(0)
            if self.active is None or self.active[0] != index:
                if self.plans[index][0] == "ddp":
                    ddp_plan.install_ddp_default(self.ddp, self.problem.find_unused_parameters)
                else:
                    ddp_plan.install_plan(self.ddp, self.order, self.plans[index][1])
            self.active = (index, timed)
            return
        self._decide()

    def _profile(self):
        first = self.recorded[0].order
        ready = {i: statistics.median(s.ready[i] - s.forward_end for s in self.recorded) for i in first}
        grads, latest = [], 0.0
        for i in first:
            latest = max(latest, ready[i])  # ready times along the order do not go back
            p = self.problem.params[i]
            grads.append({"name": self.problem.names[i], "numel": p.numel(),
                          "type": gradient_profile._DTYPE_NAMES.get(p.dtype, "float32"), "ready_ms": round(latest, 4)})
        return first, grads

    def _plan(self):
        order, grads = self._profile() if self.rank == 0 else (None, None)
        self.order, grads = _broadcast((order, grads), self.group)
        self.problem.order = self.order
        total = sum(p.numel() * p.element_size() for p in self.problem.params)
        sizes = gradient_profile.sweep_sizes(min(total, 64 << 20))
        sweep = gradient_profile.time_allreduce(sizes, repeats=5, group=self.group)
        plans = None
        if self.rank == 0:
            try:
                plans = self._candidates(grads, sweep, total)
            except (cli.TilebankError, OSError, ValueError, KeyError) as e:
                self.log(f"tilebank GDAT: planning failed, training goes on with DDP's default plan: {e}")
        self.plans = _broadcast(plans, self.group)
        if not self.plans:
            self._finish(None)
            return
        self.left = list(range(len(self.plans)))

    def median_iteration(self, index):
        """This rank's median iteration ms of candidate `index` so far (inf before any); rank 0's decide."""
        samples = self.measured.get(index)
        return statistics.median(s.iteration for s in samples) if samples else float("inf")

    def _next_round(self):
        """Schedules the next round: the fastest so far go on (rank 0's choice), DDP's default too."""
        go_on, timed = self.rounds[self.round]
        if self.round > 0 and go_on is not None:
            left = None
            if self.rank == 0:
                others = sorted((i for i in self.left if i != 0), key=self.median_iteration)
                left = [0] + sorted(others[:go_on])
            self.left = _broadcast(left, self.group)
        turn = self.left[self.round % len(self.left):] + self.left[: self.round % len(self.left)]
        for index in turn:
            self.schedule.append((index, False))
            self.schedule += [(index, True)] * timed
        self.round += 1

    def _candidates(self, grads, sweep, total):
        """Rank 0: writes the profile, has the command line plan it; [(name, ends)] to measure."""
        self.work_dir = tempfile.mkdtemp(prefix="tilebank_gdat_")
        self.profile_path = os.path.join(self.work_dir, "profile.json")
        profile = self.problem.description_with(grads, sweep, self.record)
        self.profile = profile
        with open(self.profile_path, "w") as f:
            json.dump(profile, f, indent=1)
        _, out = cli.run(["tune", "-j", "4", "--gradients", self.profile_path, "--print-plans",
                          "--max-segments", str(self.max_segments)])
        predicted = json.loads(out)["plans"]
        ddp = next(p for p in predicted if p["plan"].startswith("ddp"))
        tuned = sorted((p for p in predicted if p["plan"] == "tuned"), key=lambda p: p["predicted_finish(ms)"])
        # "ddp" runs DDP's own reducer (what the job runs untuned); its plan through tilebank's
        # reducer is a candidate like the planner's.
        anchors = [(p["plan"], p["ends"]) for p in predicted if p["plan"] in self.ANCHORS and p["segments"] <= self.max_segments]
        plans = [("ddp (tilebank's reducer)", ddp["ends"])] + anchors + [(f"tuned {p['segments']}", p["ends"]) for p in tuned[: self.candidates]]
        if self.bank_ends is not None:
            plans.append(("bank", ",".join(str(e) for e in self.bank_ends)))
        seen, unique = set(), [("ddp", [int(e) for e in ddp["ends"].split(",")])]
        for name, ends in plans:
            if ends not in seen:
                seen.add(ends)
                unique.append((name, [int(e) for e in ends.split(",")]))
        plans = unique
        self.log(f"tilebank GDAT: {len(grads)} gradients, {total / 2**20:.1f} MiB; measuring {len(plans)} plans: "
                 + ", ".join(n for n, _ in plans))
        return plans

    def _decide(self):
        kept = None
        if self.rank == 0:
            try:
                kept = self._keep()
            except (cli.TilebankError, OSError, ValueError, KeyError) as e:
                self.log(f"tilebank GDAT: keeping the plan failed, training goes on with DDP's default plan: {e}")
        self._finish(_broadcast(kept, self.group))

    def _keep(self):
        """Rank 0: has the command line keep the measured winner; the bank's plan now, or None."""
        plans = []
        for index, (name, ends) in enumerate(self.plans):
            samples = self.measured.get(index, [])
            if not samples:
                continue
            plans.append({"plan": name, "ends": ",".join(map(str, ends)),
                          "iteration_ms": [round(s.iteration, 4) for s in samples],
                          "finish_ms": [round(s.finish, 4) for s in samples],
                          "hangover_ms": [round(s.hangover, 4) for s in samples], "finalist": index in self.left})
        measured_path = os.path.join(self.work_dir, "measured.json")
        with open(measured_path, "w") as f:
            json.dump({"plans": plans}, f, indent=1)
        output_dir = os.environ.get("ASCEND_WORK_PATH") or os.getcwd()
        _, out = cli.run(["tune", "-j", "4", "--gradients", self.profile_path, "--measured", measured_path,
                          "--output", output_dir])
        self.log(out.strip())
        shutil.rmtree(self.work_dir, ignore_errors=True)
        entry = cli.query_grad(self.problem.description())
        return None if entry is None else ("bank", [int(e) for e in entry["policy"]["ends"].split(",")])

    def _finish(self, kept):
        self.kept = kept
        if self.kept is None:
            ddp_plan.install_ddp_default(self.ddp, self.problem.find_unused_parameters)
        else:
            ddp_plan.install_plan(self.ddp, self.order, self.kept[1])
        self._hook.remove()
        self.clock.remove()
        self.tuning_iterations = self.iteration - 1  # this forward runs with the plan kept
        self.done = True
