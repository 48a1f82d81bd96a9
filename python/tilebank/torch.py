"""tilebank for PyTorch training jobs: gradient fusion plans (GDAT) for DistributedDataParallel.

    import tilebank.torch as tb
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    plan = tb.gradient_fusion(ddp)   # a FusionPlan: what was arranged ("applied", "pending", "tuning")
    if plan: print(plan.ends)        # true while the bank's plan is in force

Call it on every rank, after the process group and DDP are made and before training. The plan is
looked up by the gradients' sizes and dtypes in ready order, the world size, the ranks per node and
the communicator (backend, transport), in the bank the command line uses (TUNE_BANK_PATH, ...);
rank 0 looks it up and every rank applies the same plan. The ready order is taken to be the reverse
of DDP's parameter order; when that finds nothing, the order the first iteration shows is looked up
before the second, and a plan found then is applied from the second iteration on: the FusionPlan
gradient_fusion returned says "pending" until then, and "applied" (with its ends) or "none" after.

TILEBANK_GDAT=tune: the job tunes its plan as it trains (tilebank/gdat_tune.py), keeps the winner in
the bank and goes on with it. TILEBANK_GDAT=off: nothing is applied. Ranks per node: LOCAL_WORLD_SIZE,
else the ranks that share this host's name.
"""
import os
import socket
import sys

import torch.distributed as dist

from tilebank import cli, ddp_plan, gradient_profile
from tilebank.step_clock import StepClock


class GradientProblem:
    """What a plan is for: DDP's parameters (reducer order), their ready order, the cluster."""

    def __init__(self, ddp):
        self.params = ddp_plan.reducer_parameters(ddp)
        names = {id(p): n for n, p in ddp.module.named_parameters()}
        self.names = [names.get(id(p), f"param{i}") for i, p in enumerate(self.params)]
        self.order = list(reversed(range(len(self.params))))  # DDP's guess; the job's first iteration tells
        group = ddp.process_group
        self.world_size = dist.get_world_size(group)
        local = os.environ.get("LOCAL_WORLD_SIZE")
        if local and local.isdigit() and int(local) > 0:
            self.ranks_per_node = int(local)
        else:
            hosts = [None] * self.world_size
            dist.all_gather_object(hosts, socket.gethostname(), group=group)
            self.ranks_per_node = hosts.count(socket.gethostname())
        self.backend = str(dist.get_backend(group))
        self.transport = "tcp"
        self.model = os.environ.get("TILEBANK_GDAT_MODEL") or type(ddp.module).__name__
        self.find_unused_parameters = ddp.find_unused_parameters

    def description(self):
        """The bank's gradient problem description (repo/canonical.h)."""
        grads = [{"numel": self.params[i].numel(), "type": gradient_profile._DTYPE_NAMES.get(self.params[i].dtype, "float32")}
                 for i in self.order]
        return {"gradients": grads, "world_size": self.world_size, "ranks_per_node": self.ranks_per_node,
                "communicator": {"backend": self.backend, "transport": self.transport}}

    def description_with(self, grads, sweep, iterations):
        """A gradient profile (engine/gdat/gradient_profile.h) of this problem."""
        return {"model": self.model, "world_size": self.world_size, "ranks_per_node": self.ranks_per_node,
                "communicator": {"backend": self.backend, "transport": self.transport}, "iterations": iterations,
                "backward_ms": grads[-1]["ready_ms"], "gradients": grads, "allreduce": sweep}


class FusionPlan:
    """What gradient_fusion arranged for a DDP model. True while a bank plan is in force.

    state: "applied"  the bank's plan is in force from the first iteration on;
           "pending"  the bank has none for DDP's guessed ready order: the order the first iteration
                      shows is looked up before the second, and the state becomes "applied" (the plan
                      is in force from the second iteration on) or "none";
           "tuning"   TILEBANK_GDAT=tune: the job tunes its plan as it trains, starting from `ends`
                      (the bank's plan) or DDP's buckets when None;
           "none"     the bank has no plan for this model and cluster: DDP's own buckets run.
    ends: the segment ends, in ready order, each exclusive, of the plan in force or tuned from; else None.
    """

    def __init__(self, state, ends=None):
        self.state, self.ends = state, ends

    def __bool__(self):
        return self.state == "applied"

    def __repr__(self):
        return f"FusionPlan(state={self.state!r}, ends={self.ends!r})"


def _bank_ends(problem, group):
    """Rank 0's bank lookup, on every rank: the plan's segment ends, or None."""
    ends = None
    if dist.get_rank(group) == 0:
        entry = cli.query_grad(problem.description())
        if entry is not None:
            ends = [int(e) for e in entry["policy"]["ends"].split(",")]
    box = [ends]
    dist.broadcast_object_list(box, src=0, group=group)
    return box[0]


class _LookupAfterFirstIteration:
    """When the guessed ready order finds no plan: looks up the order the first iteration showed."""

    def __init__(self, ddp, problem, plan):
        self.ddp, self.problem, self.plan = ddp, problem, plan
        self.clock = StepClock(ddp, problem.params)
        self.seen = 0
        self.hook = ddp.register_forward_pre_hook(self)

    def __call__(self, *_):
        sample = self.clock.next_iteration()
        self.seen += 1
        if self.seen == 1:
            return
        self.hook.remove()
        self.clock.remove()
        order = [sample.order if sample is not None else None]
        dist.broadcast_object_list(order, src=0, group=self.ddp.process_group)
        if order[0] is None or order[0] == self.problem.order:
            self.plan.state = "none"
            return
        self.problem.order = order[0]
        ends = _bank_ends(self.problem, self.ddp.process_group)
        if ends is None:
            self.plan.state = "none"
        else:
            ddp_plan.install_plan(self.ddp, self.problem.order, ends)
            self.plan.state, self.plan.ends = "applied", ends
            if dist.get_rank(self.ddp.process_group) == 0:
                print(f"tilebank GDAT: the bank's plan for the observed ready order applied: {len(ends)} segments",
                      file=sys.stderr, flush=True)


def gradient_fusion(ddp):
    """Arranges the bank's gradient fusion plan for `ddp` and returns a FusionPlan saying what will
    happen: applied now, looked up after the first iteration ("pending", then "applied" or "none"),
    or tuned as the job trains (TILEBANK_GDAT=tune). None with TILEBANK_GDAT=off: nothing is done."""
    mode = os.environ.get("TILEBANK_GDAT", "").strip().lower()
    if mode not in ("", "tune", "off"):
        raise ValueError(f"TILEBANK_GDAT must be 'tune' or 'off', not '{mode}'")
    if mode == "off":
        return None
    problem = GradientProblem(ddp)
    ends = _bank_ends(problem, ddp.process_group)
    if mode == "tune":
        from tilebank.gdat_tune import GdatTuner
        ddp._tilebank_tuner = GdatTuner(ddp, problem, bank_ends=ends)
        plan = FusionPlan("tuning", ends)
    elif ends is not None:
        ddp_plan.install_plan(ddp, problem.order, ends)
        plan = FusionPlan("applied", ends)
    else:
        plan = FusionPlan("pending")
        _LookupAfterFirstIteration(ddp, problem, plan)
    ddp._tilebank_plan = plan
    return plan
