"""One step of a master session over its tasks: the RunGraph fan-out, failures, deadlines.

Contract: `run_step` starts every task's RunGraph (remote ones as gRPC futures; in-process ones
on the fan-out pool, except the last, which runs in the caller's thread) and returns
`{fetch index: ndarray}` once all have finished. The first failure aborts the step on every
task at once (`StepRun.fail`; the aborts go out in parallel, waiting for none); the error
raised is the root cause rather than the cancellations it caused, and names its task; it is
raised only once every task that still answers has ended its part of the step, so nothing of
a failed step keeps running (an orphaned dequeue would consume an element nobody receives).

Sends of a remote task to the master's task named in its plan's `push_keys` (`push_plan`)
come back with its RunGraph answer and are handed to the master task's rendezvous here, before
the task counts as finished; the receives of those keys wait for them instead of pulling. When
such a task's partition receives nothing and the step has no deadline, the step's own thread
waits for its answer before running the in-process partition that needs it, so the values
are there when that partition starts (no thread hand-off). Without a deadline, the answers of
remote tasks that push nothing back are waited for by the step's own thread too, once the
in-process partition has run (no pool thread per call). A failure of such a task cancels its call at
once; any other failure cancels it ABORT_GRACE_SECS later if it has not answered the abort
by then, as a settling step's other calls are.

`run_split_step` runs a step planned by `split_step` in three stages from the step's own
thread (the remote heads, the in-process partition, the remote bodies), each stage's answers
read by that thread; a failure in a stage ends the step without starting the next one.

A step has no deadline unless one is given (`RunOptions.timeout_in_ms`, else
`ConfigProto.operation_timeout_in_ms`): then every partition, local and remote, is cancelled
when it passes and the step fails with DeadlineExceededError. A step that runs longer than
`task_health.HEARTBEAT_SECS` is watched by its master's `TaskHealth`: a dead or hung task
fails it with UnavailableError, a restarted one (new incarnation) with AbortedError; a task
known dead fails a step that needs it before anything is sent.
"""

from __future__ import annotations

import threading
import time

from tensorflux.distributed.rpc.server_pools import ElasticExecutor
from tensorflux.distributed.rpc.transfers import PUSHED, StepFeeds
from tensorflux.distributed.split_step import SLOT_BASE
from tensorflux.framework import errors
from tensorflux.protos import worker_pb2

ABORT_GRACE_SECS = 5.0
# The gRPC deadline of a remote RunGraph exceeds the step's own by this much: the master's
# timer and the worker's own deadline (from the call) end the step first, with their error.
DEADLINE_GRACE_SECS = 1.0

_FANOUT_LOCK = threading.Lock()
_FANOUT = []


def fanout_pool():
    """Threads that run in-process partitions (apart from the executors' pool); a blocked
    partition never keeps another step's from starting."""

    with _FANOUT_LOCK:
        if not _FANOUT:
            _FANOUT.append(ElasticExecutor("tfx-master"))
        return _FANOUT[0]


class StepRun:
    """The state of one running step: finished tasks, fetched values, failures."""

    def __init__(self, plans, step_id: int, incarnations: dict, on_failure,
                 local_rendezvous=None):
        self.plans = plans
        # step id -> the rendezvous of the step on the master's task (for pushed sends).
        self.local_rendezvous = local_rendezvous
        self.step_id = step_id
        self.incarnations = incarnations
        self.started = self.checked = time.monotonic()
        self.done = threading.Event()
        self.values: dict = {}
        self.failures: list = []
        self.futures: list = []
        self._remaining = len(plans)
        # task -> its RunGraphs of the step not over yet (a split step has two per task).
        self._running: dict = {}
        for plan in plans:
            self._running[plan.task] = self._running.get(plan.task, 0) + 1
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # a RunGraph ended, or a failure
        self._on_failure = on_failure
        # task -> the RunGraph call the step's own thread waits for (cancelled if the task
        # fails, or ABORT_GRACE_SECS after another failure if it has not answered by then).
        self.waiting_here: dict = {}
        self._bounded = False

    def finish(self, plan, error, values) -> None:
        """A task's RunGraph is over (`values` is {fetch index: ndarray} when it succeeded)."""
        with self._lock:
            self._remaining -= 1
            left = self._running.get(plan.task, 0) - 1
            if left > 0:
                self._running[plan.task] = left
            else:
                self._running.pop(plan.task, None)
            if error is None:
                self.values.update(values)
                if self._remaining == 0:
                    self.done.set()
                self._changed.notify_all()
                return
        self.fail(plan.task, error)

    def never_started(self, plans) -> None:
        """`plans` will not run (an earlier stage of a split step failed)."""
        with self._lock:
            for plan in plans:
                left = self._running.get(plan.task, 0) - 1
                if left > 0:
                    self._running[plan.task] = left
                else:
                    self._running.pop(plan.task, None)

    def wait_finished(self, count: int) -> None:
        """Waits until `count` of the step's RunGraphs have ended, or the step failed."""
        total = len(self.plans)
        with self._lock:
            while total - self._remaining < count and not self.failures:
                self._changed.wait()

    def fail(self, task: str, error) -> None:
        with self._lock:
            self.failures.append((task, error))
            if not isinstance(error, errors.CancelledError):
                self._running.pop(task, None)  # dead or hung: its RunGraph may never return
            first = len(self.failures) == 1
            self._changed.notify_all()
        self.done.set()
        if first:
            self._on_failure(error)
        if self.waiting_here:
            call = self.waiting_here.get(task)
            if call is not None and not isinstance(error, errors.CancelledError):
                call.cancel()  # dead or hung: it may never answer
            self.bound_waiting()

    def bound_waiting(self) -> None:
        """After a failure: the calls this step's thread waits for are cancelled if they
        have not answered within ABORT_GRACE_SECS (once per step)."""
        with self._lock:
            if self._bounded or not self.failures:
                return
            self._bounded = True
        timer = threading.Timer(ABORT_GRACE_SECS, self._cancel_waiting)
        timer.daemon = True
        timer.start()

    def _cancel_waiting(self) -> None:
        for call in list(self.waiting_here.values()):
            call.cancel()

    def settling(self) -> bool:
        """Whether tasks that have not failed are still finishing (after the abort)."""
        with self._lock:
            return bool(self._running)

    def root_failure(self):
        """The cause: an error that is neither a cancellation nor an abort it provoked."""
        def rank(item):
            error = item[1]
            if isinstance(error, errors.CancelledError):
                return 2
            return 1 if isinstance(error, errors.AbortedError) and not \
                getattr(error, "_tfx_root", False) else 0

        return min(self.failures, key=rank)


def _naming_the_waited_op(step: StepRun, failure):
    """The step's deadline, naming the op a task's partition was blocked in (the one it
    cancelled), as a local step's deadline does."""
    if not isinstance(failure, errors.DeadlineExceededError) or "[[node" in failure.message:
        return failure
    for task, error in step.failures:
        if isinstance(error, errors.CancelledError) and "[[node" in error.message:
            start = error.message.index("[[node")
            end = error.message.find("]]", start)
            if end < 0:
                continue
            named = errors.DeadlineExceededError(
                None, None, f"{failure.message}\n\t {error.message[start:end + 2]} (waiting "
                f"on task {task or '?'})")
            named.__dict__.update({k: v for k, v in failure.__dict__.items()
                                   if k.startswith("_tfx")})
            return named
    return failure


def _as_op_error(err, task: str):
    if isinstance(err, errors.OpError):
        return err
    error = errors.InternalError(None, None, f"{type(err).__name__} on task {task}: {err}")
    error._tfx_task = task
    return error


def _start(step: StepRun, plan, session_handle, step_feeds, deadline, call_timeout, local,
           submit, wait):
    """Starts one task's RunGraph of the step; returns its call (or None)."""
    request = worker_pb2.RunGraphRequest(session_handle=session_handle,
                                         graph_handle=plan.handle, step_id=step.step_id)
    if plan.push_keys:
        request.recv_key.extend(plan.push_keys)
    try:
        future = plan.client.run_graph(
            request, step_feeds, plan.feed_indices, deadline, call_timeout,
            lambda error, values: _finished(step, plan, error, values, local), submit, wait)
    except Exception as err:  # noqa: BLE001 - e.g. a client closed by Server.stop()
        step.finish(plan, _as_op_error(err, plan.task), None)
        return None
    if future is not None:
        step.futures.append(future)
    return future


def _finished(step: StepRun, plan, error, values, local) -> None:
    """A task's RunGraph answer: its pushed sends go to the local rendezvous first."""
    if error is not None:
        step.finish(plan, _as_op_error(error, plan.task), None)
        return
    if plan.push_keys:
        pushed = values.pop(PUSHED, None) or {}
        for key in plan.push_keys:
            item = pushed.get(key)
            if item is None:  # not sent, or too large: pulled as usual
                local.pull_instead(key)
            else:
                local.send(key, item[0], item[1])
    step.finish(plan, None, values)


def run_step(step: StepRun, session_handle: str, feeds: list, timeout, health) -> dict:
    """Runs one step on every task of `step.plans` (see the module docstring).

    Args:
        step: the StepRun (plans, step id, incarnations, what to do on failure).
        session_handle: the master session's handle.
        feeds: the fed ndarrays, by feed index.
        timeout: the step's deadline in seconds from now, or None.
        health: the master's TaskHealth.

    Returns:
        {fetch index: ndarray}.

    Raises:
        OpError: the root failure, naming its task (DeadlineExceededError past `timeout`).
    """
    deadline = time.monotonic() + timeout if timeout else None
    plans = step.plans
    for plan in plans:  # a task known dead fails the step before anything is sent
        health.require(plan.task, plan.client)
    step_feeds = StepFeeds(feeds)
    call_timeout = None if timeout is None else timeout + DEADLINE_GRACE_SECS
    watched = any(plan.client.needs_health_checks for plan in plans)
    local = None
    for plan in plans:  # before anything runs: the receives of pushed keys wait for them
        if plan.push_keys:
            if local is None:
                local = step.local_rendezvous(step.step_id)
            local.expect_pushes(plan.push_keys)
    if watched:
        health.watch(step)
    try:
        # Every partition starts at once, except an in-process last one, which runs in this
        # thread after the answers this thread waits for itself (see the module docstring).
        last = plans[-1] if plans and not plans[-1].client.needs_health_checks else None
        answers = []
        later = []
        for plan in plans:
            if plan is last:
                continue
            remote = deadline is None and plan.client.needs_health_checks
            here = remote and plan.push_keys and not plan.receives
            # Not a task pushing values back: the in-process partition may wait for them.
            after = remote and not plan.push_keys and last is not None
            call = _start(step, plan, session_handle, step_feeds, deadline, call_timeout,
                          local, fanout_pool().submit,
                          answers.append if here else later.append if after else None)
            if (here or after) and call is not None:
                step.waiting_here[plan.task] = call
        if answers or later:
            step.bound_waiting()  # a failure while the calls started: bounded too
        for answer in answers:
            answer()
        if last is not None:
            _start(step, last, session_handle, step_feeds, deadline, call_timeout, local,
                   None, None)
        for answer in later:
            answer()
        if deadline is None:
            step.done.wait()
        elif not step.done.wait(max(0.0, deadline - time.monotonic())):
            step.fail("", errors.DeadlineExceededError(
                None, None, f"Timed out waiting for the step to finish ({timeout:.3g}s; "
                "RunOptions.timeout_in_ms / ConfigProto.operation_timeout_in_ms); it was "
                "cancelled on every task."))
    finally:
        if watched:
            health.unwatch(step)
    if not step.failures:
        return step.values
    raise _settled_failure(step, health)


def _settled_failure(step: StepRun, health):
    """The error a failed step raises, once its tasks that still answer have ended it."""
    grace = time.monotonic() + ABORT_GRACE_SECS
    while step.settling() and time.monotonic() < grace:
        time.sleep(0.002)
    for future in step.futures:
        future.cancel()
    failure = _naming_the_waited_op(step, step.root_failure()[1])
    if getattr(failure, "_tfx_unresponsive", False):
        # The connection's keepalive found the task hung: later steps fail at once.
        for plan in step.plans:
            if plan.task == failure._tfx_task:
                health.mark_dead(plan.task, plan.client, failure.message)
                break
    return failure


def run_split_step(step: StepRun, split, session_handle: str, feeds: list, health) -> dict:
    """Runs one step without a deadline as a `split_step.Split`: the remote heads, the
    master task's partition with their values, then the remote bodies with its values, every
    answer waited for by this thread (`step.plans` are the split's plans). Same arguments,
    result and errors as `run_step`."""
    for plan in step.plans:
        health.require(plan.task, plan.client)
    values = dict(enumerate(feeds))
    step_feeds = StepFeeds(values)
    health.watch(step)
    try:
        ended = 0
        stages = (split.heads, (split.local,), split.bodies)
        for position, stage in enumerate(stages):
            answers = []
            for plan in stage:
                remote = plan.client.needs_health_checks
                call = _start(step, plan, session_handle, step_feeds, None, None, None,
                              fanout_pool().submit if remote else None,
                              answers.append if remote else None)
                if remote and call is not None:
                    step.waiting_here[plan.task] = call
            if answers:
                step.bound_waiting()  # a failure while the calls started: bounded too
            for answer in answers:
                answer()
            ended += len(stage)
            step.wait_finished(ended)
            if step.failures:
                for later in stages[position + 1:]:
                    step.never_started(later)
                break
            # The values this stage returned for the next one become its feeds.
            moved = [index for index in step.values if index >= SLOT_BASE]
            for index in moved:
                values[index] = step.values.pop(index)
    finally:
        health.unwatch(step)
    if not step.failures:
        return step.values
    raise _settled_failure(step, health)
