"""Applies a gradient fusion plan to a torch 1.13 DistributedDataParallel: one AllReduce bucket per
planned segment.

DDP's reducer rebuilds its buckets after the first iteration from its two size caps alone, so a
bucket list given to it does not survive; a reducer built with find_unused_parameters=True never
rebuilds. A plan is therefore applied by building such a reducer over DDP's parameters with the
plan's buckets and swapping it in for DDP's own (whose autograd hooks go with it). The gradients
are reduced in place in their buckets exactly as DDP reduces them (sum, divided by the world size),
so the math does not change; the cost is find_unused_parameters' graph walk and one small
AllReduce of the used-parameter map per iteration. install_ddp_default puts DDP's own reducer back.

Swap only between iterations (before a forward), on every rank at the same iteration.
"""
import sys

import torch.distributed as dist


def reducer_parameters(ddp):
    """The parameters DDP reduces, in its reducer's index order."""
    params, _ = ddp._build_params_for_reducer()
    return params


def _swap(ddp, reducer, find_unused):
    ddp.reducer = reducer  # the old reducer is freed here, and its autograd hooks with it
    ddp.find_unused_parameters = find_unused
    ddp.logger = dist.Logger(reducer)
    reducer.set_logger(ddp.logger)


def install_plan(ddp, order, ends):
    """Buckets: the parameters `order` lists (reducer indices, in ready order) split at `ends`."""
    params, sparse = ddp._build_params_for_reducer()
    if sorted(order) != list(range(len(params))):
        raise ValueError(f"the plan's order must list each of the {len(params)} parameters once")
    starts = [0] + list(ends[:-1])
    buckets = [order[a:b] for a, b in zip(starts, ends)]
    sizes = [sum(params[i].numel() * params[i].element_size() for i in b) for b in buckets]
    reducer = dist.Reducer(params, buckets, sizes, ddp.process_group, sparse, sys.maxsize, True,
                           ddp.gradient_as_bucket_view, {}, sys.maxsize)
    _swap(ddp, reducer, True)


def install_ddp_default(ddp, find_unused_parameters=False):
    """DDP's own reducer as DDP builds it (one bucket the first iteration, then its caps)."""
    params, sparse = ddp._build_params_for_reducer()
    limits = [sys.maxsize] if not find_unused_parameters else [dist._DEFAULT_FIRST_BUCKET_BYTES, ddp.bucket_bytes_cap]
    buckets, per_bucket = dist._compute_bucket_assignment_by_size(params, limits, sparse)
    reducer = dist.Reducer(params, list(reversed(buckets)), list(reversed(per_bucket)), ddp.process_group, sparse,
                           ddp.bucket_bytes_cap, find_unused_parameters, ddp.gradient_as_bucket_view, {},
                           dist._DEFAULT_FIRST_BUCKET_BYTES)
    _swap(ddp, reducer, find_unused_parameters)
