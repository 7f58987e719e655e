"""The dataflow executor: pending counts, dead values, frames and iterations, async kernels.

Contract: one `Executor` per (signature, partition), reusable and safe for concurrent steps;
all bookkeeping of a step happens in that step's driver thread, so it needs no lock. Kernels run
inline in the driver, or on an idle worker of the step's inter-op pool (`thread_budget`) when
they are expensive and other work is ready;
asynchronous kernels and pool kernels report back through the step's inbox. The first error
cancels the step (every partition of it, through the shared cancellation manager and
rendezvous) and is raised once nothing of the step is still running.

Semantics follow the paper's control flow: a `Switch` makes its untaken output dead; an op with
a dead input does not run and makes its outputs dead; a `Merge` fires on its first live input
(or dead when all inputs are dead); `Enter` moves values into a child frame (per loop), `Exit`
back to the parent, `NextIteration` into the next iteration, at most `parallel_iterations`
iterations of a frame being alive at once.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque

import numpy as np

from tensorflux.framework import errors
from tensorflux.runtime import plan as plan_mod
from tensorflux.runtime import thread_budget
from tensorflux.runtime.plan import (
    ARG,
    ASYNC,
    CTX,
    ENTER,
    EXIT,
    MERGE,
    NEXT,
    NOOP,
    SEND,
    SWITCH,
    TRIGGER,
    Plan,
)
from tensorflux.runtime.step import DEAD, frame_id_of, node_error

_DEFAULT = object()
_POOL_LOCK = threading.Lock()
_POOL = []


def shared_pool():
    """A process-wide pool for blocking work: the drivers of a step's other partitions and
    streaming receives. Its threads wait more than they compute, so it is not part of the
    thread budget; offloaded kernels use the budgeted pools of `thread_budget` instead.
    """
    from concurrent.futures import ThreadPoolExecutor

    with _POOL_LOCK:
        if not _POOL:
            # NOTE: threads start on demand; the cap only bounds how many steps may wait at
            # once, so it is large (a small cap could deadlock steps waiting on each other).
            _POOL.append(ThreadPoolExecutor(max_workers=256, thread_name_prefix="tfx-step"))
        return _POOL[0]


def per_step_container(step_id: int) -> str:
    """The resource container of one step's scoped state (TensorArrays, stacks)."""
    return f"__per_step_{step_id}"


def end_step(ctx) -> None:
    """The step-end hook: drops the step's per-step container on ctx's device, if any.

    Executors (and the fast path, for plans with `step_scoped` ops) call it once the step's
    partition has finished, successfully or not.
    """
    mgr = ctx.resource_mgr
    if mgr is not None:
        container = per_step_container(ctx.step_id)
        if container in mgr._containers:
            mgr.cleanup(container)


class _Iteration:
    """Per-iteration state; its kernel context is made only if a kernel asks for it."""

    __slots__ = ("pending", "dead", "inputs", "outstanding_ops", "outstanding_frames", "_ctx",
                 "_parent_ctx", "_frame_id", "_number")

    def __init__(self, template, ctx, first: bool = False, frame_id: int = 0, number: int = 0):
        self.pending = list(template.pending_init)
        self.dead = list(template.dead_first) if first else [0] * len(template.items)
        self.inputs = [None] * template.num_slots
        self.outstanding_ops = 0
        self.outstanding_frames = 0
        self._ctx = ctx if not frame_id else None
        self._parent_ctx = ctx
        self._frame_id = frame_id
        self._number = number

    @property
    def ctx(self):
        ctx = self._ctx
        if ctx is None:
            ctx = self._ctx = self._parent_ctx.child(self._frame_id, self._number)
        return ctx


class _Frame:
    __slots__ = ("template", "path", "parent", "parent_iter", "iterations", "iteration_count",
                 "num_outstanding_iterations", "max_parallel", "next_iter_roots", "inv_values",
                 "dead_exits", "num_pending_inputs", "frame_id", "key")

    def __init__(self, template, path, parent, parent_iter, key):
        self.template = template
        self.path = path
        self.parent = parent
        self.parent_iter = parent_iter
        self.iterations: dict = {}
        self.iteration_count = 0
        self.num_outstanding_iterations = 1
        self.max_parallel = max(1, template.parallel_iterations)
        self.next_iter_roots: list = []
        self.inv_values: list = []
        self.dead_exits: list = []
        self.num_pending_inputs = template.num_enters
        self.frame_id = frame_id_of(path) if path else 0
        self.key = key


class Executor:
    """Runs one partition's plan for a step (see the module docstring)."""

    def __init__(self, plan: Plan):
        self.plan = plan

    def run(self, ctx, feeds, deadline=None, trace=None, pool=_DEFAULT):
        """Runs a step in the calling thread; returns the fetched values.

        Args:
            pool: the `thread_budget.KernelPool` expensive kernels may be offloaded to when
                other work is ready (default: the process's pool; None: none).

        Raises:
            OpError: the first failure of the step, naming its node.
        """
        if pool is _DEFAULT:
            pool = thread_budget.default_pool()
        if pool is not None and pool.num_threads == 0:
            pool = None
        try:
            return _Step(self, ctx, feeds, deadline, trace, pool).run()
        finally:
            if self.plan.step_scoped:
                end_step(ctx)


class _Step:
    """One step of one partition; all its state is touched only by the driver thread."""

    def __init__(self, executor: Executor, ctx, feeds, deadline, trace, pool):
        self.executor = executor
        self.pool = pool
        self.plan = executor.plan
        self.ctx = ctx
        self.feeds = feeds
        self.deadline = deadline
        self.trace = trace
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.ready: deque = deque()
        self.outstanding = 0
        self.in_flight = 0
        self.error = None
        self.results = [None] * len(self.plan.fetches)
        self.frames: dict = {}
        self.root = None

    # -- driver ----------------------------------------------------------------------------

    def run(self):
        plan = self.plan
        root = _Frame(plan.root, "", None, 0, None)
        root.num_pending_inputs = 0
        root.iterations[0] = _Iteration(plan.root, self.ctx)
        self.root = root
        token = self.ctx.cancellation.register(lambda err: self.inbox.put(("cancel", err)))
        if token is None:
            raise self.ctx.cancellation.error
        try:
            for item in plan.root_ready:
                self._schedule(item, root, 0)
            self._loop()
        finally:
            self.ctx.cancellation.deregister(token)
        if self.error is not None:
            raise self.error
        return self.results

    def _loop(self) -> None:
        ready = self.ready
        pop = ready.popleft
        push = ready.append
        traced = self.trace is not None
        parallel = self.pool is not None
        root = self.root
        while True:
            while ready and self.error is None:
                item, frame, it = pop()
                if not item.fast or traced or (item.expensive and parallel and ready):
                    self._process(item, frame, it)
                    continue
                # The common case, inlined: an ordinary kernel whose consumers are in the same
                # iteration (no dead inputs, no frames to create).
                iteration = frame.iterations[it]
                if iteration.dead[item.local]:
                    self._process(item, frame, it)
                    continue
                base = item.slot_base
                inputs = iteration.inputs[base:base + item.n_inputs]
                try:
                    for k in item.deref:
                        inputs[k] = inputs[k].read()
                    if item.mode == CTX:
                        result = item.kernel(iteration.ctx, *inputs)
                    else:
                        result = item.kernel(*inputs)
                    single = item.n_outputs == 1
                    if not single:
                        result = _as_outputs(result, item.n_outputs)
                except Exception as err:  # noqa: BLE001 - every kernel failure is an OpError
                    self._abort(node_error(item.node, err))
                    self._node_done(item, frame, it)
                    continue
                if item.fetch_slots and frame is root:
                    for idx, position in item.fetch_slots:
                        self.results[position] = result if single else result[idx]
                pending = iteration.pending
                slots = iteration.inputs
                scheduled = 0
                for index, dst, slot, local, is_merge in item.flat_edges:
                    value = result if single else result[index]
                    if is_merge:
                        count = pending[local]
                        if count & 1:
                            slots[slot] = value
                            pending[local] = count - 1
                        fire = count == 1
                    else:
                        slots[slot] = value
                        count = pending[local] - 1
                        pending[local] = count
                        fire = count == 0
                    if fire:
                        scheduled += 1
                        push((dst, frame, it))
                for dst, local, is_merge in item.flat_controls:
                    count = pending[local] - (2 if is_merge else 1)
                    pending[local] = count
                    if count == 0 or (is_merge and count == 1 and
                                      iteration.dead[local] == dst.n_data):
                        scheduled += 1
                        push((dst, frame, it))
                # Each scheduled node adds one outstanding op; this one finishes (-1).
                self.outstanding += scheduled - 1
                remaining = iteration.outstanding_ops + scheduled - 1
                iteration.outstanding_ops = remaining
                if remaining == 0 and frame is not root:
                    self._cleanup(frame, it)
            if self.error is not None:
                self._drop_ready()
                if self.in_flight == 0:
                    return
            elif self.outstanding == 0:
                return
            self._wait_inbox()

    def _wait_inbox(self) -> None:
        timeout = None
        if self.deadline is not None:
            timeout = self.deadline - time.monotonic()
            if timeout <= 0:
                self._abort(_deadline_error(self.ctx))
                timeout = 5.0
        try:
            message = self.inbox.get(timeout=timeout)
        except queue.Empty:
            if self.error is None:
                self._abort(_deadline_error(self.ctx))
                return
            # NOTE: a kernel ignored cancellation for 5 s; give up on it rather than hang.
            self.in_flight = 0
            return
        kind = message[0]
        if kind == "cancel":
            self._abort(message[1])
        elif kind == "done":
            _, item, frame, it, outputs, error, is_dead = message
            self.in_flight -= 1
            if error is not None:
                self._abort(node_error(item.node, error))
                self._node_done(item, frame, it)
            elif self.error is None:
                self._finish(item, frame, it, outputs, is_dead)
            else:
                self._node_done(item, frame, it)

    def _drop_ready(self) -> None:
        while self.ready:
            item, frame, it = self.ready.popleft()
            self._node_done(item, frame, it)

    def _abort(self, error) -> None:
        if self.error is None:
            self.error = error
            self.ctx.cancellation.start_cancel(error)
            if self.ctx.rendezvous is not None:
                self.ctx.rendezvous.abort(error)

    # -- running one node ------------------------------------------------------------------

    def _schedule(self, item, frame, it) -> None:
        frame.iterations[it].outstanding_ops += 1
        self.outstanding += 1
        self.ready.append((item, frame, it))

    def _process(self, item, frame, it) -> None:
        iteration = frame.iterations[it]
        kind = item.kind
        base = item.slot_base
        inputs = iteration.inputs[base:base + item.n_inputs]
        if kind == MERGE:
            self._run_merge(item, frame, it, inputs, iteration)
            return
        # A ControlTrigger fires when its inputs are done, dead or alive.
        is_dead = iteration.dead[item.local] > 0 and kind != TRIGGER
        if is_dead:
            if kind == SEND:
                try:
                    item.kernel(iteration.ctx, DEAD)
                except Exception as err:  # noqa: BLE001
                    self._abort(node_error(item.node, err))
                    self._node_done(item, frame, it)
                    return
            self._finish(item, frame, it, (DEAD,) * item.n_outputs, True)
            return
        if kind == ARG:
            self._finish(item, frame, it, (self.feeds[item.arg_index],), False)
            return
        if kind == NOOP:
            self._finish(item, frame, it, (), False)
            return
        try:
            for k in item.deref:
                inputs[k] = inputs[k].read()
            if kind == SWITCH:
                data, pred = inputs
                outputs = (DEAD, data) if bool(np.asarray(pred)) else (data, DEAD)
            elif kind in (ENTER, EXIT, NEXT):
                outputs = (inputs[0],)
            else:
                mode = item.mode
                ctx = iteration.ctx
                if mode == ASYNC:
                    self._start_async(item, frame, it, ctx, inputs)
                    return
                if self.trace is not None:
                    self._run_traced(item, frame, it, ctx, inputs)
                    return
                if item.expensive and self.pool is not None and self.ready and \
                        self._offload(item, frame, it, ctx, inputs):
                    return
                if mode == CTX:
                    result = item.kernel(ctx, *inputs)
                else:
                    result = item.kernel(*inputs)
                outputs = _as_outputs(result, item.n_outputs)
        except Exception as err:  # noqa: BLE001 - every kernel failure becomes an OpError
            self._abort(node_error(item.node, err))
            self._node_done(item, frame, it)
            return
        self._finish(item, frame, it, outputs, False)

    def _run_merge(self, item, frame, it, inputs, iteration) -> None:
        for index, value in enumerate(inputs):
            if value is not None and value is not DEAD:
                if index in item.deref:
                    try:
                        value = value.read()
                    except Exception as err:  # noqa: BLE001
                        self._abort(node_error(item.node, err))
                        self._node_done(item, frame, it)
                        return
                self._finish(item, frame, it, (value, np.int32(index)), False)
                return
        self._finish(item, frame, it, (DEAD, DEAD), True)

    def _run_traced(self, item, frame, it, ctx, inputs) -> None:
        start = time.time_ns()
        try:
            if item.mode == CTX:
                result = item.kernel(ctx, *inputs)
            else:
                result = item.kernel(*inputs)
            outputs = _as_outputs(result, item.n_outputs)
        except Exception as err:  # noqa: BLE001
            self._abort(node_error(item.node, err))
            self._node_done(item, frame, it)
            return
        self.trace.record(item.node, start, time.time_ns(), outputs)
        self._finish(item, frame, it, outputs, False)

    def _offload(self, item, frame, it, ctx, inputs) -> bool:
        inbox = self.inbox

        def work():
            try:
                if item.mode == CTX:
                    result = item.kernel(ctx, *inputs)
                else:
                    result = item.kernel(*inputs)
                inbox.put(("done", item, frame, it, _as_outputs(result, item.n_outputs), None,
                           False))
            except Exception as err:  # noqa: BLE001
                inbox.put(("done", item, frame, it, None, err, False))

        if not self.pool.try_run(work):
            return False
        self.in_flight += 1
        return True

    def _start_async(self, item, frame, it, ctx, inputs) -> None:
        inbox = self.inbox
        self.in_flight += 1
        called = []
        start = time.time_ns() if self.trace is not None else 0
        trace = self.trace

        def done(outputs=None, error=None, is_dead=False):
            if called:
                return
            called.append(True)
            if error is None:
                outputs = (DEAD,) * item.n_outputs if is_dead else \
                    _as_outputs(outputs, item.n_outputs)
                if trace is not None:
                    trace.record(item.node, start, time.time_ns(), outputs)
            inbox.put(("done", item, frame, it, outputs, error, is_dead))

        try:
            item.kernel(ctx, *inputs, done=done)
        except Exception as err:  # noqa: BLE001
            done(error=err)

    # -- propagation -----------------------------------------------------------------------

    def _finish(self, item, frame, it, outputs, is_dead) -> None:
        kind = item.kind
        # An Exit's value lives in the parent frame: fetchable when that is the root.
        if item.fetch_slots and (frame.parent if kind == EXIT else frame) is self.root \
                and not (kind == EXIT and is_dead):
            for idx, position in item.fetch_slots:
                self.results[position] = outputs[idx]
        if kind == ENTER:
            child = self._child_frame(item, frame, it)
            if item.is_constant:
                child.inv_values.append((item, outputs, is_dead))
                for k in range(child.iteration_count + 1):
                    if k in child.iterations:
                        self._activate(item, child, k, outputs, is_dead)
            else:
                self._activate(item, child, 0, outputs, is_dead)
            child.num_pending_inputs -= 1
            if child.num_pending_inputs == 0 and 0 in child.iterations and \
                    child.iterations[0].outstanding_ops == 0:
                self._cleanup(child, 0)
        elif kind == EXIT:
            if is_dead:
                if it == frame.iteration_count:
                    frame.dead_exits.append(item)
            else:
                self._activate(item, frame.parent, frame.parent_iter, outputs, False)
        elif kind == NEXT:
            if not is_dead:
                if it == frame.iteration_count and \
                        frame.num_outstanding_iterations >= frame.max_parallel:
                    frame.next_iter_roots.append((item, outputs))
                else:
                    if it == frame.iteration_count:
                        self._increment_iteration(frame)
                    self._activate(item, frame, it + 1, outputs, False)
        else:
            self._activate(item, frame, it, outputs, is_dead)
        self._node_done(item, frame, it)

    def _activate(self, item, frame, it, outputs, is_dead) -> None:
        iteration = frame.iterations[it]
        pending = iteration.pending
        dead = iteration.dead
        slots = iteration.inputs
        push = self.ready.append
        scheduled = 0
        for index, dst, slot, local, is_merge in item.flat_edges:
            value = outputs[index]
            if is_merge:
                if value is DEAD:
                    dead[local] += 1
                    fire = pending[local] == 1 and dead[local] == dst.n_data
                else:
                    count = pending[local]
                    if count & 1:
                        slots[slot] = value
                        pending[local] = count - 1
                    fire = count == 1
            else:
                slots[slot] = value
                if value is DEAD:
                    dead[local] += 1
                count = pending[local] - 1
                pending[local] = count
                fire = count == 0
            if fire:
                scheduled += 1
                push((dst, frame, it))
        for dst, local, is_merge in item.flat_controls:
            if is_merge:
                count = pending[local] - 2
                pending[local] = count
                fire = count == 0 or (count == 1 and dead[local] == dst.n_data)
            else:
                if is_dead:
                    dead[local] += 1
                count = pending[local] - 1
                pending[local] = count
                fire = count == 0
            if fire:
                scheduled += 1
                push((dst, frame, it))
        if scheduled:
            iteration.outstanding_ops += scheduled
            self.outstanding += scheduled

    def _node_done(self, item, frame, it) -> None:
        self.outstanding -= 1
        iteration = frame.iterations[it]
        iteration.outstanding_ops -= 1
        if iteration.outstanding_ops == 0 and frame is not self.root:
            self._cleanup(frame, it)

    # -- frames ----------------------------------------------------------------------------

    def _child_frame(self, enter_item, frame, it) -> _Frame:
        key = (enter_item.frame_name, id(frame), it)
        child = self.frames.get(key)
        if child is None:
            template = self.plan.frames[enter_item.frame_name]
            path = f"{frame.path};{it};{enter_item.frame_name}"
            child = _Frame(template, path, frame, it, key)
            child.max_parallel = max(1, enter_item.parallel_iterations)
            child.iterations[0] = _Iteration(template, self.ctx, first=True,
                                             frame_id=frame_id_of(path), number=0)
            self.frames[key] = child
            frame.iterations[it].outstanding_frames += 1
        return child

    def _increment_iteration(self, frame) -> None:
        frame.iteration_count += 1
        n = frame.iteration_count
        frame.iterations[n] = _Iteration(frame.template, self.ctx, frame_id=frame.frame_id,
                                         number=n)
        frame.num_outstanding_iterations += 1
        frame.dead_exits = []
        roots, frame.next_iter_roots = frame.next_iter_roots, []
        for item, outputs in roots:
            self._activate(item, frame, n, outputs, False)
        for item, outputs, is_dead in frame.inv_values:
            self._activate(item, frame, n, outputs, is_dead)

    def _iteration_done(self, frame, it) -> bool:
        iteration = frame.iterations.get(it)
        if iteration is None or iteration.outstanding_ops or iteration.outstanding_frames:
            return False
        if it == 0:
            return frame.num_pending_inputs == 0
        return (it - 1) not in frame.iterations

    def _cleanup(self, frame, it) -> None:
        current = it
        while current <= frame.iteration_count and self._iteration_done(frame, current):
            del frame.iterations[current]
            frame.num_outstanding_iterations -= 1
            current += 1
            if frame.next_iter_roots:
                self._increment_iteration(frame)
        if frame.num_pending_inputs == 0 and frame.num_outstanding_iterations == 0:
            self._delete_frame(frame)

    def _delete_frame(self, frame) -> None:
        parent = frame.parent
        parent_iter = frame.parent_iter
        self.frames.pop(frame.key, None)
        parent_iteration = parent.iterations[parent_iter]
        for item in frame.dead_exits:
            self._activate(item, parent, parent_iter, (DEAD,) * item.n_outputs, True)
        parent_iteration.outstanding_frames -= 1
        if parent is not self.root and parent_iteration.outstanding_ops == 0:
            self._cleanup(parent, parent_iter)


def _as_outputs(result, n_outputs: int) -> tuple:
    if n_outputs == 1:
        return (result,)
    if n_outputs == 0:
        return ()
    return tuple(result)


def _deadline_error(ctx):
    return errors.DeadlineExceededError(
        None, None, "Timed out waiting for the step to finish (RunOptions.timeout_in_ms / "
        "ConfigProto.operation_timeout_in_ms); blocked ops were cancelled.")


__all__ = ["Executor", "shared_pool", "plan_mod"]
