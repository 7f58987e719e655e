"""One step of a master session over its tasks: the RunGraph fan-out, failures, heartbeats.

Contract: `run_step` starts every task's RunGraph (remote ones as gRPC futures; in-process ones
on the fan-out pool, except the last, which runs in the caller's thread) and returns
`{fetch index: ndarray}` once all have finished. The first failure aborts the step on every
task at once (their blocked receives and dequeues are cancelled); the error raised is the
root cause rather than the cancellations it caused, and names its task. A step that runs
longer than `HEARTBEAT_SECS` is watched by its master's `Watchdog`, which asks the step's
remote tasks for their status: a dead or hung task fails the step with UnavailableError, a
restarted one (new incarnation) with AbortedError. Short steps pay nothing for the watch.
"""

from __future__ import annotations

import threading
import time

from tensorflux.distributed import status as status_mod
from tensorflux.distributed.rpc.tensor_codec import encode_tensor
from tensorflux.framework import errors
from tensorflux.platform import tf_logging as logging
from tensorflux.protos import tensor_pb2, worker_pb2

HEARTBEAT_SECS = 1.0
ABORT_GRACE_SECS = 5.0

_FANOUT_LOCK = threading.Lock()
_FANOUT = []


def fanout_pool():
    """Threads that run in-process partitions and aborts (apart from the executors' pool)."""
    from concurrent.futures import ThreadPoolExecutor

    with _FANOUT_LOCK:
        if not _FANOUT:
            _FANOUT.append(ThreadPoolExecutor(max_workers=64, thread_name_prefix="tfx-master"))
        return _FANOUT[0]


class StepRun:
    """The state of one running step: finished tasks, fetched values, failures."""

    def __init__(self, plans, step_id: int, incarnations: dict, on_failure):
        self.plans = plans
        self.step_id = step_id
        self.incarnations = incarnations
        self.started = self.checked = time.monotonic()
        self.done = threading.Event()
        self.values: dict = {}
        self.failures: list = []
        self.futures: list = []
        self._remaining = len(plans)
        self._running = {plan.task for plan in plans}
        self._lock = threading.Lock()
        self._on_failure = on_failure

    def finish(self, plan, error, values) -> None:
        """A task's RunGraph is over (`values` is {fetch index: ndarray} when it succeeded)."""
        with self._lock:
            self._remaining -= 1
            self._running.discard(plan.task)
            if error is None:
                self.values.update(values)
                if self._remaining == 0:
                    self.done.set()
                return
        self.fail(plan.task, error)

    def fail(self, task: str, error) -> None:
        with self._lock:
            self.failures.append((task, error))
            if not isinstance(error, errors.CancelledError):
                self._running.discard(task)  # dead or hung: its RunGraph may never return
            first = len(self.failures) == 1
        self.done.set()
        if first:
            self._on_failure(error)

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


def _as_op_error(err, task: str):
    if isinstance(err, errors.OpError):
        return err
    error = errors.InternalError(None, None, f"{type(err).__name__} on task {task}: {err}")
    error._tfx_task = task
    return error


def _run_local(step: StepRun, plan, request, feeds) -> None:
    values = None
    try:
        response, values = plan.client.run_graph_local(request, feeds)
        error = status_mod.from_status(response.status)
    except Exception as err:  # noqa: BLE001 - reported as the task's failure
        error = _as_op_error(err, plan.task)
    step.finish(plan, error, values)


def run_step(session_handle: str, plans, feeds: list, step_id: int, timeout, watchdog,
             incarnations: dict, abort) -> dict:
    """Runs one step on every task of `plans` (see the module docstring).

    Args:
        session_handle: the master session's handle.
        plans: the per-task plans (`task`, `client`, `handle`, `feed_indices`).
        feeds: the fed ndarrays, by feed index.
        step_id: this step's id.
        timeout: RunGraph deadline in seconds, or None.
        watchdog: the master's Watchdog.
        incarnations: {task: {device name: incarnation}} when the step was planned.
        abort: `abort(plans, step_id, error)` tells every task to abort the step.

    Returns:
        {fetch index: ndarray}.

    Raises:
        OpError: the root failure, naming its task.
    """
    step = StepRun(plans, step_id, incarnations,
                   lambda error: fanout_pool().submit(abort, plans, step_id, error))
    encoded: dict = {}
    local = []
    for plan in plans:
        request = worker_pb2.RunGraphRequest(session_handle=session_handle,
                                             graph_handle=plan.handle, step_id=step_id)
        if plan.client.in_process:
            local.append((plan, request, {i: feeds[i] for i in plan.feed_indices}))
            continue
        for index in plan.feed_indices:
            proto = encoded.get(index)
            if proto is None:
                proto = encoded[index] = tensor_pb2.TensorProto()
                encode_tensor(feeds[index], proto)
            request.send.add(name=str(index)).tensor.CopyFrom(proto)
        try:
            step.futures.append(plan.client.run_graph_async(
                request, timeout,
                lambda error, values, plan=plan: step.finish(plan, error, values)))
        except Exception as err:  # noqa: BLE001 - e.g. a client closed by Server.stop()
            step.finish(plan, _as_op_error(err, plan.task), None)
    watched = len(local) < len(plans)
    if watched:
        watchdog.watch(step)
    try:
        for item in local[:-1]:
            fanout_pool().submit(_run_local, step, *item)
        if local:
            _run_local(step, *local[-1])
        step.done.wait()
    finally:
        if watched:
            watchdog.unwatch(step)
    if not step.failures:
        return step.values
    deadline = time.monotonic() + ABORT_GRACE_SECS
    while step.settling() and time.monotonic() < deadline:
        time.sleep(0.005)
    for future in step.futures:
        future.cancel()
    raise step.root_failure()[1]


class Watchdog:
    """Checks the remote tasks of steps running longer than HEARTBEAT_SECS (one thread per
    master, started on first use, waking a few times a second).

    `watch` and `unwatch` are single dict operations (atomic under the GIL), so a step pays
    no lock or wake-up for being watched.
    """

    def __init__(self):
        self._steps: dict = {}
        self._lock = threading.Lock()
        self._thread = None
        self._closed = threading.Event()

    def watch(self, step: StepRun) -> None:
        self._steps[id(step)] = step
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._loop, daemon=True,
                                                    name="tfx-heartbeat")
                    self._thread.start()

    def unwatch(self, step: StepRun) -> None:
        self._steps.pop(id(step), None)

    def close(self) -> None:
        self._closed.set()

    def _loop(self) -> None:
        while not self._closed.wait(HEARTBEAT_SECS / 4):
            now = time.monotonic()
            due = [s for s in list(self._steps.values())
                   if now - s.checked >= HEARTBEAT_SECS and not s.done.is_set()]
            if due:
                try:
                    self._check(due)
                except Exception as err:  # noqa: BLE001 - the watch must go on
                    logging.error(f"Heartbeat check failed: {type(err).__name__}: {err}")
                for step in due:
                    step.checked = time.monotonic()

    @staticmethod
    def _check(steps) -> None:
        """One GetStatus per distinct remote task of the due steps, all at once."""
        clients = {}
        for step in steps:
            for plan in step.plans:
                if not plan.client.in_process:
                    clients.setdefault(plan.task, plan.client)
        results: dict = {}
        finished = threading.Semaphore(0)

        def record(task, error, response):
            results[task] = (error, response)
            finished.release()

        for task, client in clients.items():
            client.call_async("get_status", worker_pb2.GetStatusRequest(),
                              max(2.0, 2 * HEARTBEAT_SECS),
                              lambda error, response, task=task: record(task, error, response))
        for _ in clients:
            finished.acquire(timeout=max(2.0, 2 * HEARTBEAT_SECS) + 1.0)
        for step in steps:
            for plan in step.plans:
                if plan.task not in clients:
                    continue
                error, response = results.get(plan.task, (errors.DeadlineExceededError(
                    None, None, "no answer to GetStatus"), None))
                failure = _health_failure(plan.task, error, response,
                                          step.incarnations.get(plan.task, {}))
                if failure is not None:
                    step.fail(plan.task, failure)
                    break


def _health_failure(task: str, error, response, known: dict):
    if error is not None:
        failure = errors.UnavailableError(
            None, None, f"Task {task} failed during the step (no heartbeat): {error.message}")
    else:
        changed = [a.name for a in response.device_attributes
                   if a.name in known and known[a.name] != a.incarnation]
        if not changed:
            return None
        failure = errors.AbortedError(
            None, None, f"Task {task} restarted during the step (new incarnation of "
            f"{changed[0]}); the step was aborted.")
        failure._tfx_root = True
    failure._tfx_task = task
    return failure
