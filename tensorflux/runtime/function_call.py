"""Function bodies run as sub-steps of the calling step (`ctx.run_function`).

Contract: `run_function(ctx, fn, args)` runs the body graph of `fn` (a `DefinedFunction`, or a
name in the session graph's library) on the caller's device, in the calling thread. The body is
pruned to its outputs and control outputs, and planned once per (function, device): the plan,
its kernels (stateful ones keep their state from call to call) and its runner are cached on the
device. Each call gets a context of its own step id (the body's per-step resources end with the
call) sharing the caller's rendezvous, cancellation, session and options: cancelling the step
cancels the body, and a failure in the body fails the step, naming the body's node. Ref
arguments arrive as the caller's variable objects, so the body's assigns update them.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from tensorflux.framework import errors
from tensorflux.runtime import subgraph
from tensorflux.runtime.direct_session import _may_alias_state, next_step_id
from tensorflux.runtime.executor import Executor
from tensorflux.runtime.fastpath import FastPath, eligible
from tensorflux.runtime.plan import Plan
from tensorflux.runtime.step import StepContext

_LOCK = threading.Lock()
_RUNNERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # device -> {fn: runner}


class _Runner:
    __slots__ = ("plan", "runner", "fast", "copy_flags")

    def __init__(self, fn, device):
        nodes, fetch_points, _ = subgraph.build_step_graph(
            fn.graph, list(fn.inputs), list(fn.outputs), list(fn.control_outputs))
        for node in nodes:
            node.assigned_device = device.name
            if node.op == "_Arg":  # a ref argument stays a ref inside the body
                node.output_dtypes = [fn.inputs[node.attrs["index"]].dtype]
        self.plan = Plan(nodes, device, fetch_points, {})
        self.fast = eligible(self.plan)
        # NOTE: one driver thread per call: a body must not wait for pool threads its
        # caller may be holding.
        self.runner = FastPath(self.plan) if self.fast else Executor(self.plan)
        self.copy_flags = [_may_alias_state(node, idx) for node, idx in fetch_points]


def _resolve(ctx, fn):
    if hasattr(fn, "graph") and hasattr(fn, "outputs"):
        return fn
    graph = getattr(ctx.session, "graph", None)
    library = getattr(graph, "_functions", {})
    name = getattr(fn, "name", fn)
    if name not in library:
        raise errors.NotFoundError(None, None, f"Function '{name}' is not in the graph's "
                                   "function library.")
    return library[name]


def _runner_for(fn, device) -> _Runner:
    table = _RUNNERS.get(device)
    runner = table.get(fn) if table is not None else None
    if runner is None:
        with _LOCK:
            table = _RUNNERS.setdefault(device, {})
            runner = table.get(fn)
            if runner is None:
                runner = table[fn] = _Runner(fn, device)
    return runner


def run_function(ctx, fn, args) -> list:
    """Runs `fn` on `args` as a sub-step of `ctx`'s step; returns the output values.

    Raises:
        InvalidArgumentError: wrong number of arguments.
        OpError: the body's failure, naming its node.
    """
    fn = _resolve(ctx, fn)
    if len(args) != len(fn.inputs):
        raise errors.InvalidArgumentError(
            None, None, f"Function '{fn.name}' takes {len(fn.inputs)} arguments, got "
            f"{len(args)}.")
    entry = _runner_for(fn, ctx.device)
    child = StepContext(next_step_id(), ctx.device, ctx.rendezvous, ctx.cancellation,
                        ctx.session, ctx.options)
    if entry.fast:
        results = entry.runner.run(child, list(args))
    else:
        # The body runs inside a kernel of the calling step: serially, offloading nothing.
        results = entry.runner.run(child, list(args), None, None, pool=None)
    return [np.array(value, copy=True) if copy else value
            for value, copy in zip(results, entry.copy_flags)]


__all__ = ["run_function"]
