"""Timestamps of a DDP training job's iterations, on this rank: forward start and end, each
gradient's ready time (a hook on its gradient accumulator: torch 1.13 has no post-accumulate-grad
hook) and the backward pass's end, after DDP's last AllReduce: DDP queues the callback that waits
for every bucket when its hook sees the last gradient, which may run after ours (a reducer made
later hooks in later), so the callback queued here queues the one that stamps the end, and that
runs after DDP's (the engine runs callbacks queued while callbacks run). The backward pass is taken to
start when the forward ends (the loss in between is small beside either).
"""
import time

import torch


class IterationSample:
    """One iteration, in milliseconds after its forward started."""

    def __init__(self, forward_end, ready, order, backward_end, next_start):
        self.forward_end = forward_end
        self.ready = ready            # by reducer index
        self.order = order            # reducer indices in the order their gradients became ready
        self.backward_end = backward_end
        self.iteration = next_start   # to the next forward start

    @property
    def finish(self):
        """Backward start to the last AllReduce done."""
        return self.backward_end - self.forward_end

    @property
    def hangover(self):
        """The last gradient ready to the last AllReduce done."""
        return self.backward_end - max(self.ready)


class StepClock:
    def __init__(self, ddp, params):
        self._n = len(params)
        self._accumulators = []  # held: an accumulator nobody holds is made anew, without the hook
        self._handles = []
        for index, p in enumerate(params):
            acc = p.expand_as(p).grad_fn.next_functions[0][0]
            self._accumulators.append(acc)
            self._handles.append(acc.register_hook(self._ready_hook(index)))
        self._handles.append(ddp.register_forward_hook(self._forward_done))
        self._reset(None)

    def _reset(self, start):
        self._start = start
        self._forward_end = None
        self._ready = [None] * self._n
        self._order = []
        self._backward_end = None

    def _ready_hook(self, index):
        def hook(*_):
            if self._start is None or self._ready[index] is not None:
                return
            self._ready[index] = time.perf_counter()
            self._order.append(index)
            if len(self._order) == self._n:
                torch.autograd.Variable._execution_engine.queue_callback(self._after_ddp)
        return hook

    def _forward_done(self, *_):
        self._forward_end = time.perf_counter()

    def _after_ddp(self):
        torch.autograd.Variable._execution_engine.queue_callback(self._backward_done)

    def _backward_done(self):
        self._backward_end = time.perf_counter()

    def next_iteration(self):
        """Call at each forward start: the iteration that just ended (None when some part of it was
        not seen: the first call, a gradient that did not come, no backward), and starts the next."""
        now = time.perf_counter()
        sample = None
        if self._start is not None and self._forward_end is not None and self._backward_end is not None:
            ms = lambda t: (t - self._start) * 1000.0  # noqa: E731
            sample = IterationSample(ms(self._forward_end), [ms(t) for t in self._ready], list(self._order),
                                     ms(self._backward_end), ms(now))
        self._reset(now)
        return sample

    def remove(self):
        for h in self._handles:
            h.remove()
        self._handles = []
