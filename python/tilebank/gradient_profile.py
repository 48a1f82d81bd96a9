"""Records a GDAT gradient profile (engine/gdat/gradient_profile.h) from a real PyTorch model.

Ready times: a hook on each parameter's gradient accumulator notes when its gradient is ready
(torch 1.13 has no post-accumulate-grad hook), relative to the start of loss.backward(); the
median over `iterations` timed backward passes after `warmup` untimed ones. The AllReduce sweep:
`world_size` gloo ranks started here (loopback, or whatever MASTER_ADDR names), each size the
median of `repeats` AllReduce calls after a warm-up.
"""
import json
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

_DTYPE_NAMES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float64: "float64"}


def ready_times(model, step, iterations=4, warmup=1):
    """(name, parameter, median ready ms) in ready order; `step()` returns the loss of one forward pass."""
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    stamps = {}
    hooks = []
    keep = []  # the accumulators must outlive the hooks
    def stamp(name):
        def hook(*_):
            stamps.setdefault(name, time.perf_counter())  # a hook returns None: the gradients stay as they are
        return hook

    for name, p in params:
        acc = p.expand_as(p).grad_fn.next_functions[0][0]
        keep.append(acc)
        hooks.append(acc.register_hook(stamp(name)))
    samples = {name: [] for name, _ in params}
    try:
        for i in range(warmup + iterations):
            model.zero_grad(set_to_none=True)
            loss = step()
            stamps.clear()
            start = time.perf_counter()
            loss.backward()
            if i >= warmup:
                for name, _ in params:
                    samples[name].append((stamps[name] - start) * 1000.0)
    finally:
        for h in hooks:
            h.remove()
    rows = [(name, p, statistics.median(samples[name])) for name, p in params]
    rows.sort(key=lambda r: r[2])
    return rows


def sweep_sizes(max_bytes):
    """4 B to the first power of 4 at or above `max_bytes`, by factors of 4."""
    sizes = [4]
    while sizes[-1] < max_bytes:
        sizes.append(sizes[-1] * 4)
    return sizes


def time_allreduce(sizes, repeats, group=None):
    """[{"bytes", "ms"}]: each size's float32 AllReduce on `group`, the median of `repeats` calls
    after two untimed ones, each call started together (a barrier before it). Every rank calls it."""
    out = []
    for size in sizes:
        t = torch.ones(max(1, size // 4))
        for _ in range(2):
            dist.all_reduce(t, group=group)
        times = []
        for _ in range(repeats):
            dist.barrier(group=group)
            start = time.perf_counter()
            dist.all_reduce(t, group=group)
            times.append((time.perf_counter() - start) * 1000.0)
        out.append({"bytes": t.numel() * 4, "ms": statistics.median(times)})
    return out


def _sweep_rank(rank, world_size, port, sizes, repeats, queue):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.set_num_threads(1)
    out = time_allreduce(sizes, repeats)
    if rank == 0:
        queue.put(out)
    dist.destroy_process_group()


def allreduce_sweep(world_size=2, port=29517, max_bytes=64 << 20, repeats=10):
    """[{"bytes", "ms"}] for 4 B to `max_bytes` by factors of 4, from `world_size` gloo ranks started here."""
    sizes = sweep_sizes(max_bytes)
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_sweep_rank, args=(r, world_size, port, sizes, repeats, queue)) for r in range(world_size)]
    for p in procs:
        p.start()
    result = queue.get(timeout=600)
    for p in procs:
        p.join()
    return result


def profile(model, step, model_name, world_size=2, ranks_per_node=2, iterations=4, warmup=1, sweep=None):
    """The profile as a dict (write it with json.dump)."""
    rows = ready_times(model, step, iterations, warmup)
    grads = [{"name": name, "numel": p.numel(), "type": _DTYPE_NAMES.get(p.dtype, "float32"), "ready_ms": round(ms, 4)}
             for name, p, ms in rows]
    return {"model": model_name, "world_size": world_size, "ranks_per_node": ranks_per_node,
            "communicator": {"backend": "gloo", "transport": "tcp"}, "iterations": iterations,
            "backward_ms": grads[-1]["ready_ms"], "gradients": grads,
            "allreduce": sweep if sweep is not None else allreduce_sweep(world_size)}
