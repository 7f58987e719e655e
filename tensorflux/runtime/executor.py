"""The dataflow executor: runs a partition's kernels over the step core's bookkeeping.

Contract: one `Executor` per (signature, partition), reusable and safe for concurrent steps; all
bookkeeping of a step happens in that step's driver thread, so it needs no lock. Kernels run inline
in the driver, or on an idle worker of the step's inter-op pool (`thread_budget`) when they are
expensive and other work is ready; asynchronous kernels and pool kernels report back through the
step's inbox, except an asynchronous kernel whose value was ready (it called `done` before
returning): that one completes in the driver, without the inbox. Const nodes are not run at all:
the plan binds their values (`Plan._fold_constants`). The first error cancels the step (every
partition of it, through the shared cancellation manager and rendezvous) and is raised once nothing
of the step is still running.

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
from tensorflux.runtime.step import DEAD, node_error
from tensorflux.runtime.step_core import StepCore

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


class _Step(StepCore):
    """One step of one partition: the step core's bookkeeping plus the driver that runs kernels.

    All its state is touched only by the driver thread; the hot loop below inlines the core's
    propagation for ordinary kernels (see `StepCore._activate` for the general case).
    """

    def __init__(self, executor: Executor, ctx, feeds, deadline, trace, pool):
        super().__init__(executor.plan, ctx)
        self.executor = executor
        self.pool = pool
        self.feeds = feeds
        self.deadline = deadline
        self.trace = trace
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.in_flight = 0
        # Asynchronous kernels that called `done` before returning, in the order they ran:
        # completed when the ready queue drains, as an inbox message would have been.
        self.completed: deque = deque()
        self.error = None
        self._outside_cancel = False  # the error is a cancellation from outside the step
        self._timed_out = False  # the error is the step's deadline: name the op it cancels

    # -- driver ----------------------------------------------------------------------------

    def run(self):
        token = self.ctx.cancellation.register(lambda err: self.inbox.put(("cancel", err)))
        if token is None:
            raise self.ctx.cancellation.error
        try:
            if self.trace is not None:
                # Folded Consts run at plan time; a traced step still lists them.
                now = time.time_ns()
                for item in self.plan.folded_roots:
                    self.trace.record(item.node, now, now, (item.const_value,))
            self.start()
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
        deadline = self.deadline
        budget = _DEADLINE_CHECK_EVERY
        while True:
            while ready and self.error is None:
                if deadline is not None:
                    # A step that never waits (a long while_loop) still honours its deadline.
                    budget -= 1
                    if not budget:
                        budget = _DEADLINE_CHECK_EVERY
                        if time.monotonic() > deadline:
                            self._abort(_deadline_error(self.ctx))
                            break
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
                for value, dst, slot, local in item.flat_consts:
                    slots[slot] = value
                    count = pending[local] - 1
                    pending[local] = count
                    if count == 0:
                        scheduled += 1
                        push((dst, frame, it))
                # Each scheduled node adds one outstanding op; this one finishes (-1).
                self.outstanding += scheduled - 1
                remaining = iteration.outstanding_ops + scheduled - 1
                iteration.outstanding_ops = remaining
                if remaining == 0 and frame is not root:
                    self._cleanup(frame, it)
            if self.error is not None:
                self.drop_ready()
                if self.in_flight == 0:
                    return
            elif self.outstanding == 0:
                return
            if self.completed and self.inbox.empty():
                # Messages from other threads (a cancellation) still go first.
                self._complete(*self.completed.popleft())
                continue
            self._wait_inbox()

    def _wait_inbox(self) -> None:
        timeout = None
        if self.deadline is not None:
            timeout = self.deadline - time.monotonic()
            if timeout <= 0:
                if self.error is None:
                    self._timed_out = True
                    self._abort(_deadline_error(self.ctx))
                timeout = 5.0
        try:
            message = self.inbox.get(timeout=timeout)
        except queue.Empty:
            if self.error is None:
                self._timed_out = True
                self._abort(_deadline_error(self.ctx))
                return
            # NOTE: a kernel ignored cancellation for 5 s; give up on it rather than hang.
            self.in_flight = 0
            return
        kind = message[0]
        if kind == "cancel":
            if self.error is None:
                self._outside_cancel = True
            self._abort(message[1])
        elif kind == "done":
            _, item, frame, it, outputs, error, is_dead = message
            self._complete(item, frame, it, outputs, error, is_dead)

    def _complete(self, item, frame, it, outputs, error, is_dead) -> None:
        """An asynchronous or offloaded kernel has finished (one of `in_flight`)."""
        self.in_flight -= 1
        if error is not None:
            if self._outside_cancel:
                # As TF: a step cancelled from outside (Session.close) reports what its
                # blocked kernel says ("Dequeue operation was cancelled").
                self._outside_cancel = False
                self.error = node_error(item.node, error)
            elif self._timed_out:
                # As the deadline cancels the op the step was waiting for, the error names it.
                self._timed_out = False
                self.error = node_error(item.node, errors.DeadlineExceededError(
                    None, None, self.error.message))
            self._abort(node_error(item.node, error))
            self._node_done(item, frame, it)
        elif self.error is None:
            self._finish(item, frame, it, outputs, is_dead)
        else:
            self._node_done(item, frame, it)

    def _abort(self, error) -> None:
        if self.error is None:
            self.error = error
            self.ctx.cancellation.start_cancel(error)
            if self.ctx.rendezvous is not None:
                self.ctx.rendezvous.abort(error)

    # -- running one node ------------------------------------------------------------------

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
            if kind == SWITCH:
                err = _switch_error(inputs, err)
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
        end = time.time_ns()
        self.trace.record(item.node, start, end, outputs)
        for const in item.folded_consts:
            self.trace.record(const.node, end, end, (const.const_value,))
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
        """Starts an asynchronous kernel. When it calls `done` before returning (its value
        was ready), the completion stays in the driver (`completed`, no inbox round trip); a
        later `done` (from another thread) reports through the inbox. Whichever of `done` and
        the kernel's return takes the token first decides (dict.pop is atomic), so the
        completion is handled exactly once.
        """
        inbox = self.inbox
        self.in_flight += 1
        called = []
        box = []
        token = {0: True}
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
            box.append((outputs, error, is_dead))
            if token.pop(0, None) is None:
                # The kernel has returned already: the driver waits on its inbox.
                inbox.put(("done", item, frame, it, outputs, error, is_dead))

        try:
            item.kernel(ctx, *inputs, done=done)
        except Exception as err:  # noqa: BLE001
            done(error=err)
        if token.pop(0, None) is None:
            outputs, error, is_dead = box[0]
            self.completed.append((item, frame, it, outputs, error, is_dead))

_DEADLINE_CHECK_EVERY = 1024  # nodes run between deadline checks in the driver loop


def _as_outputs(result, n_outputs: int) -> tuple:
    if n_outputs == 1:
        return (result,)
    if n_outputs == 0:
        return ()
    return tuple(result)


def _switch_error(inputs, err):
    """TF's message for a predicate that is not a scalar (fed at run time)."""
    shape = np.shape(inputs[1]) if len(inputs) == 2 else ()
    if shape != ():
        return errors.InvalidArgumentError(
            None, None, f"The second input must be a scalar, but it has shape {list(shape)}")
    return err


def _deadline_error(ctx):
    return errors.DeadlineExceededError(
        None, None, "Timed out waiting for the step to finish (RunOptions.timeout_in_ms / "
        "ConfigProto.operation_timeout_in_ms); blocked ops were cancelled.")


__all__ = ["Executor", "shared_pool", "plan_mod"]
