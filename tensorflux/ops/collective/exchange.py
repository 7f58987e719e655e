"""Where collective kernels meet: the executor of a task, found by device name.

Contract of an executor's `run(device, group_key, group_size, instance_key, value, combine,
done, cancellation)`:
- `value` is this member's ndarray, or None (a broadcast receiver contributes nothing);
- the n-th run of `(group_key, instance_key)` on a device meets the n-th run on every other
  member of the group (every member runs the same steps, as TF's synchronous training does);
- `combine(values)` (values in rank order, None for members that gave none) returns the
  result or raises an OpError; it runs once, on the group's first member, and every member
  gets the result in a buffer of its own (a member may assign it to a variable);
- `done(error, result)` is called exactly once; a failure of any member (or of the transport)
  fails every member, and the step's cancellation fails a pending run.

A distributed server registers its task's executor (`register_executor`, in
`distributed/collective_transport.py`); devices of a task with no registered executor (a
local `Session`) meet in this process (`LocalExecutor`). Ranks are the member devices in
sorted order (job name, then numeric replica, task, device index), as TF ranks them.
"""

from __future__ import annotations

import re
import threading

from tensorflux.framework import errors

__all__ = ["register_executor", "unregister_executor", "executor_for", "device_rank_key",
           "LocalExecutor", "LOCAL"]

_EXECUTORS: dict = {}
_LOCK = threading.Lock()
_DEVICE = re.compile(r"^/job:([^/]+)/replica:(\d+)/task:(\d+)/device:([^:]+):(\d+)$")


def task_of(device: str) -> str:
    """'/job:w/replica:0/task:1/device:CPU:0' -> '/job:w/replica:0/task:1'."""
    return device.partition("/device:")[0]


def device_rank_key(device: str) -> tuple:
    """The order of group members: job, replica, task, device type, device index."""
    match = _DEVICE.match(device)
    if match is None:
        return (device, 0, 0, "", 0)
    job, replica, task, kind, index = match.groups()
    return (job, int(replica), int(task), kind, int(index))


def register_executor(task: str, executor) -> None:
    """Collectives on `task`'s devices go through `executor` (a server's transport)."""
    with _LOCK:
        _EXECUTORS[task] = executor


def unregister_executor(task: str, executor) -> None:
    """Undoes `register_executor` (if `executor` is still the task's)."""
    with _LOCK:
        if _EXECUTORS.get(task) is executor:
            del _EXECUTORS[task]


def executor_for(device: str):
    """The executor of `device`'s task: its server's, else the in-process LOCAL one."""
    return _EXECUTORS.get(task_of(device), LOCAL)


class Once:
    """Calls `done(error, result)` at most once; later calls are ignored."""

    __slots__ = ("_done", "_lock", "_called", "token", "cancellation")

    def __init__(self, done, cancellation=None):
        self._done = done
        self._lock = threading.Lock()
        self._called = False
        self.cancellation = cancellation
        self.token = None

    @property
    def finished(self) -> bool:
        return self._called

    def __call__(self, error, result=None) -> None:
        with self._lock:
            if self._called:
                return
            self._called = True
        if self.token is not None and self.cancellation is not None:
            self.cancellation.deregister(self.token)
        self._done(error, result)


class _Meeting:
    """One collective instance in this process: contributions by device."""

    def __init__(self, group_size: int):
        self.group_size = group_size
        self.values: dict = {}
        self.waiters: dict = {}
        self.combine = None
        self.arrived = 0
        self.error = None  # a member was cancelled: the others fail as they arrive


class LocalExecutor:
    """Members that are devices of this process meet here (no transport)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._counts: dict = {}
        self._meetings: dict = {}
        self._groups: dict = {}  # group_key -> the devices of its first complete instance

    def run(self, device, group_key, group_size, instance_key, value, combine, done,
            cancellation=None) -> None:
        once = Once(done, cancellation)
        members = self._groups.get(group_key)
        if members is not None and device not in members:
            once(errors.InternalError(
                None, None, f"Collective group {group_key} has the devices "
                f"{sorted(members, key=device_rank_key)}; {device} cannot join it (a group key "
                f"names one set of devices)"))
            return
        with self._lock:
            count_key = (group_key, instance_key, device)
            seq = self._counts.get(count_key, 0)
            self._counts[count_key] = seq + 1
            key = (group_key, instance_key, seq)
            meeting = self._meetings.get(key)
            if meeting is None:
                meeting = self._meetings[key] = _Meeting(group_size)
            failed = None
            if meeting.group_size != group_size:
                meeting = None
            else:
                meeting.arrived += 1
                if meeting.arrived == group_size:
                    del self._meetings[key]
                failed = meeting.error
                if failed is None:
                    meeting.values[device] = value
                    meeting.waiters[device] = once
                    if meeting.combine is None:
                        meeting.combine = combine
                complete = failed is None and meeting.arrived == group_size
        if failed is not None:
            once(failed)
            return
        if meeting is None:
            once(errors.InternalError(
                None, None, f"Collective group {group_key} (instance {instance_key}) was "
                f"joined with group_size {group_size}, but another member declared a "
                f"different group_size"))
            return
        if not complete:
            if cancellation is not None:
                def cancelled(error, meeting=meeting):
                    with self._lock:
                        if meeting.error is None:
                            meeting.error = error
                        waiters = list(meeting.waiters.values())
                        meeting.waiters.clear()
                        meeting.values.clear()
                    for waiter in waiters:
                        waiter(error)

                once.token = cancellation.register(cancelled)
                if once.token is None:
                    cancelled(cancellation.error)
            return
        devices = sorted(meeting.values, key=device_rank_key)
        self._groups.setdefault(group_key, frozenset(devices))
        try:
            result = meeting.combine([meeting.values[d] for d in devices])
        except Exception as err:  # noqa: BLE001 - every member gets the failure
            for d in devices:
                meeting.waiters[d](err)
            return
        for index, d in enumerate(devices):
            meeting.waiters[d](None, result if index == 0 else result.copy())


LOCAL = LocalExecutor()
