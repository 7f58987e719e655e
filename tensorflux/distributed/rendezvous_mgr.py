"""Per-step rendezvous of a worker task, with remote receives pulled over RecvTensor.

Contract: `send` stores the value locally and never blocks. `recv_async` on a key whose
source device is on this task waits locally; otherwise it pulls the tensor from the source
task's worker service (a streaming RecvTensor call on a pool thread) and checks that the
sender's incarnation matches the key (a restarted task's stale transfers are refused).

Pushed keys (`expect_pushes`, set by the master of this task before the step starts; see
`push_plan`): a receive of one waits locally for the master to `send` the value it got with
the sender's RunGraph answer; `pull_instead(key)` (the answer did not carry it) turns a
waiting or later receive of the key back into a pull. An abort fails them like any receive.

Prefetched keys (`prefetch`, by the worker when a step starts): every remote key a partition
without control flow receives is known when the graph is registered, so the step asks each
source task for all of its keys at once (one RecvTensors call, which streams each tensor as
soon as it is sent) and the receives wait locally, as for pushed keys.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from tensorflux.distributed.rpc.tensor_codec import name_transfer_error
from tensorflux.framework import errors
from tensorflux.runtime.rendezvous import LocalRendezvous, create_key, parse_key


def task_of(device_name: str) -> str:
    """'/job:w/replica:0/task:1/device:CPU:0' -> '/job:w/replica:0/task:1'."""
    head, _, _ = device_name.partition("/device:")
    return head


class RemoteRendezvous(LocalRendezvous):
    """The rendezvous of one step on one task."""

    make_key = staticmethod(create_key)

    def __init__(self, step_id: int, task: str, worker_clients, pool):
        super().__init__()
        self.step_id = step_id
        self.task = task
        self._clients = worker_clients
        self._pool = pool
        self._calls: list = []
        self._calls_lock = threading.Lock()
        self.created = time.monotonic()
        self.finished = False
        self._pushed: frozenset | set = frozenset()

    def expect_pushes(self, keys) -> None:
        """Receives of `keys` wait for a local `send` (by the master) instead of pulling."""
        with self._lock:
            self._pushed = set(self._pushed) | set(keys)

    def expects_any(self, keys) -> bool:
        """Whether any of `keys` is pushed by the master (`expect_pushes`)."""
        pushed = self._pushed
        return bool(pushed) and any(key in pushed for key in keys)

    def prefetch(self, source_task: str, keys, readers=None, timeout=None) -> None:
        """Starts receiving `keys` (sent by `source_task`) in one streaming call, before any
        receive asks for them: each lands in this rendezvous as it arrives, and a receive of
        it waits locally. Keys the master pushes (`expect_pushes`) are left out. A failed
        transfer (or a stale sender incarnation) aborts the step, as a failed receive does.

        With `readers` (a list), the transfer is not read on a pool thread: the function
        that reads it (returning once it is over) is appended for the caller to run, and
        `timeout` (seconds, or None) bounds the call (`receive_first`)."""
        with self._lock:
            if self._error is not None:
                return
            keys = [key for key in keys if key not in self._pushed]
            if not keys:
                return
            self._pushed = set(self._pushed) | set(keys)
        try:
            client = self._clients(source_task)
        except Exception as err:  # noqa: BLE001 - a task we cannot even name a client for
            self.abort(errors.UnavailableError(None, None, f"No route to task {source_task}: "
                                               f"{err}"))
            return

        def arrived(index, value, is_dead, sender_incarnation):
            key = keys[index]
            incarnation = int(key.split(";", 2)[1], 16)
            if sender_incarnation and incarnation and sender_incarnation != incarnation:
                self.abort(errors.AbortedError(
                    None, None, f"Stale transfer refused: {source_task} restarted "
                    f"(incarnation {sender_incarnation:x}, expected {incarnation:x}) while "
                    f"receiving {key}"))
                return
            self.send(key, value, is_dead)

        def failed(error):
            if not isinstance(error, errors.OpError):
                error = errors.UnavailableError(
                    None, None, f"Receiving {len(keys)} tensors from task {source_task} "
                    f"failed: {error}")
            self.abort(name_transfer_error(error, keys, source_task))

        if readers is None:
            handle = client.recv_tensors_async(self.step_id, keys, arrived, failed)
        else:
            handle = client.recv_tensors_async(self.step_id, keys, arrived, failed,
                                               readers.append, timeout)
        with self._calls_lock:
            if self._error is None:
                self._calls.append(handle)
                return
        handle.cancel()

    def take_received(self, keys):
        """The values of `keys` (all received: `prefetch` readers ran), taken out of the
        rendezvous; None (and they stay) if any is dead.

        Raises:
            OpError: the step's failure (a failed transfer aborted it), or InternalError if
                a key is missing.
        """
        with self._lock:
            if self._error is not None:
                raise self._error
            values = self._values
            items = [values.get(key) for key in keys]
            for key, item in zip(keys, items):
                if item is None:
                    raise errors.InternalError(None, None, f"{key} was not received")
                if item[1]:
                    return None
            for key in keys:
                del values[key]
        return [item[0] for item in items]

    def pull_instead(self, key: str) -> None:
        """`key` will not be pushed: a receive waiting for it (or a later one) pulls it."""
        with self._lock:
            if key not in self._pushed:
                return
            self._pushed.discard(key)
            waiter = self._waiters.pop(key, None)
        if waiter is not None:
            self.recv_async(key, waiter)

    def take_small(self, key: str, limit: int):
        """(value, is_dead) of a sent `key` no larger than `limit` bytes, taken out of the
        rendezvous; None (and the value stays) when it is absent, larger or not an array."""
        with self._lock:
            item = self._values.get(key)
            if item is None:
                return None
            value, is_dead = item
            if not is_dead and (type(value) is not np.ndarray or (
                    value.dtype != object and value.nbytes > limit)):
                return None
            del self._values[key]
            return item

    def recv_async(self, key: str, callback) -> None:
        src_device, incarnation, _, _, _ = parse_key(key)
        source_task = task_of(src_device)
        if source_task == self.task:
            super().recv_async(key, callback)
            return
        if self._pushed and key in self._pushed:
            with self._lock:
                pushed = key in self._pushed
                error = self._error
                if pushed and error is None:
                    item = self._values.pop(key, None)
                    if item is None:
                        if key in self._waiters:
                            raise errors.AbortedError(None, None, f"Duplicated recv: {key}")
                        self._waiters[key] = callback
                        return
            if pushed:  # delivered already, or the step failed
                if error is not None:
                    callback(error, None, False)
                else:
                    callback(None, item[0], item[1])
                return
        if self._error is not None:
            callback(self._error, None, False)
            return
        try:
            client = self._clients(source_task)
        except Exception as err:  # noqa: BLE001 - a task we cannot even name a client for
            callback(errors.UnavailableError(None, None, f"No route to task {source_task}: "
                                             f"{err}"), None, False)
            return

        def arrived(error, value, is_dead, sender_incarnation):
            if error is None and sender_incarnation and incarnation and \
                    sender_incarnation != incarnation:
                error = errors.AbortedError(
                    None, None, f"Stale transfer refused: {source_task} restarted "
                    f"(incarnation {sender_incarnation:x}, expected {incarnation:x}) while "
                    f"receiving {key}")
            if error is not None and not isinstance(error, errors.OpError):
                error = errors.UnavailableError(
                    None, None, f"Receiving '{key}' from task {source_task} failed: {error}")
            callback(error if error is None else name_transfer_error(error, [key], source_task),
                     value, is_dead)

        handle = client.recv_tensor_async(self.step_id, key, arrived)
        with self._calls_lock:
            if self._error is None:
                self._calls.append(handle)
                return
        handle.cancel()

    def recv_local_async(self, key: str, callback) -> None:
        """A receive served to another task: waits for this task's own send."""
        super().recv_async(key, callback)

    def abort(self, error) -> None:
        super().abort(error)
        with self._calls_lock:
            calls, self._calls = self._calls, []
        for call in calls:
            call.cancel()


class RendezvousMgr:
    """The step_id -> RemoteRendezvous table of one worker task."""

    def __init__(self, task: str, worker_clients, pool, linger_secs: float = 60.0):
        self._task = task
        self._clients = worker_clients
        self._pool = pool
        self._lock = threading.Lock()
        self._steps: dict = {}
        self._linger = linger_secs

    def find_or_create(self, step_id: int) -> RemoteRendezvous:
        with self._lock:
            found = self._steps.get(step_id)
            if found is None:
                found = RemoteRendezvous(step_id, self._task, self._clients, self._pool)
                self._steps[step_id] = found
            self._gc_locked()
            return found

    def step_finished(self, step_id: int) -> None:
        """Drops the step's table once nothing in it awaits a receiver."""
        with self._lock:
            found = self._steps.get(step_id)
            if found is None:
                return
            found.finished = True
            found.finished_at = time.monotonic()
            if not found._values and not found._waiters:
                del self._steps[step_id]

    def cleanup(self, step_id: int, error=None) -> None:
        with self._lock:
            found = self._steps.pop(step_id, None)
        if found is not None:
            found.abort(error or errors.CancelledError(None, None, f"Step {step_id} cleaned up"))

    def abort_all(self, error) -> None:
        with self._lock:
            steps, self._steps = list(self._steps.values()), {}
        for step in steps:
            step.abort(error)

    def _gc_locked(self) -> None:
        now = time.monotonic()
        stale = [s for s, r in self._steps.items()
                 if (r.finished and (not r._values or now - r.finished_at > self._linger))
                 or (not r.finished and now - r.created > 24 * 3600)]
        for step_id in stale:
            del self._steps[step_id]
