"""Thread pools of a gRPC server: blocking RPCs never starve heartbeats or control calls.

A RunGraph blocked in a dequeue, or a RecvTensor waiting for its sender, holds the thread that
serves it until the step ends: with a fixed pool of N threads, N blocked calls made a task
unreachable (heartbeats timed out, so the master declared it dead). Two lanes instead:

- `ElasticExecutor`, the server's default pool: a thread is started whenever no idle one can
  take a call, up to a high cap (`MAX_SERVING_THREADS`), and threads idle for a while retire.
  Blocked calls cost one parked thread each (a few tens of KB of resident memory), never a
  refused or queued call.
- `control_lane()`: a small separate pool for the calls that must stay prompt whatever the
  rest of the server is doing (GetStatus, Abort, CleanupGraph, ...). gRPC runs a method on
  the pool named by its handler's `experimental_thread_pool` (see `lane_for`).
"""

from __future__ import annotations

import collections
import threading
from concurrent import futures

from tensorflux.platform import tf_logging as logging

MAX_SERVING_THREADS = 4096
IDLE_SECS = 30.0
CONTROL_THREADS = 8
# Worker methods that never block: served on the control lane.
CONTROL_METHODS = frozenset({
    "GetStatus", "Abort", "CleanupGraph", "CleanupAll", "DeregisterGraph", "Logging",
    "Tracing", "Shutdown", "CreateWorkerSession", "DeleteWorkerSession"})

_CONTROL_LOCK = threading.Lock()
_CONTROL = []


class ElasticExecutor(futures.Executor):
    """Runs each submitted call at once on an idle thread or a new one (up to `max_threads`;
    beyond that calls wait for a thread to finish)."""

    def __init__(self, name: str, max_threads: int = MAX_SERVING_THREADS,
                 idle_secs: float = IDLE_SECS):
        self._name = name
        self._max = max_threads
        self._idle_secs = idle_secs
        self._cv = threading.Condition(threading.Lock())
        self._items: collections.deque = collections.deque()
        self._idle = 0
        self._threads = 0
        self._shutdown = False

    @property
    def threads(self) -> int:
        """Threads alive now (busy or idle)."""
        return self._threads

    def submit(self, fn, /, *args, **kwargs):
        future = futures.Future()
        spawn = False
        with self._cv:
            if self._shutdown:
                raise RuntimeError(f"{self._name}: cannot schedule new calls after shutdown")
            self._items.append((future, fn, args, kwargs))
            if self._idle >= len(self._items):
                self._cv.notify()
            elif self._threads < self._max:
                self._threads += 1
                spawn = True
        if spawn:
            threading.Thread(target=self._loop, daemon=True, name=self._name).start()
        return future

    def shutdown(self, wait=True, *, cancel_futures=False):
        with self._cv:
            self._shutdown = True
            if cancel_futures:
                while self._items:
                    self._items.popleft()[0].cancel()
            self._cv.notify_all()

    def _loop(self) -> None:
        while True:
            with self._cv:
                while not self._items:
                    if self._shutdown:
                        self._threads -= 1
                        return
                    self._idle += 1
                    woken = self._cv.wait(self._idle_secs)
                    self._idle -= 1
                    if not woken and not self._items:
                        self._threads -= 1
                        return
                future, fn, args, kwargs = self._items.popleft()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args, **kwargs)
            except BaseException as err:  # noqa: BLE001 - handed to the future's owner
                future.set_exception(err)
                if not isinstance(err, Exception):
                    logging.error(f"{self._name}: {type(err).__name__}: {err}")
            else:
                future.set_result(result)
            del future, fn, args, kwargs


def control_lane() -> futures.ThreadPoolExecutor:
    """The process's small pool for control RPCs (shared by its servers)."""
    with _CONTROL_LOCK:
        if not _CONTROL:
            _CONTROL.append(futures.ThreadPoolExecutor(
                max_workers=CONTROL_THREADS, thread_name_prefix="tfx-grpc-control"))
        return _CONTROL[0]


def lane_for(method_name: str, behaviour):
    """`behaviour`, marked to run on the control lane when `method_name` is a control RPC
    (gRPC reads the function's `experimental_thread_pool`)."""
    if method_name not in CONTROL_METHODS:
        return behaviour

    def control(request, context):
        return behaviour(request, context)

    control.experimental_thread_pool = control_lane()
    return control
