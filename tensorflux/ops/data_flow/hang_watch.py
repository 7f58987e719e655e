"""Detects the most common TF1 hang: a dequeue that nothing will ever satisfy.

A dequeue blocked for `hang_warning_secs()` seconds is checked: if no producer (a queue runner
thread, see `add_producer`) is registered for its queue in its session, and no other step of
that session is running (steps blocked in dequeues themselves do not count: they cannot
enqueue), a warning naming the queue and suggesting `tf.train.start_queue_runners` is logged on
the "tensorflow" logger. A waiter still blocked is checked again every period, and warned
about at most once.

One daemon thread serves every queue of the process; it holds no lock of a queue while it
checks, and no executor thread is involved.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
import weakref

from tensorflux.platform import tf_logging

_DEFAULT_SECS = 5.0
_settings = {"secs": _DEFAULT_SECS}
_lock = threading.Condition()
_heap: list = []
_seq = itertools.count()
_thread: list = []
# session backend -> {queue node name: number of live producers}
_producers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# session backend -> {id(waiter): waiter} of dequeues being watched
_blocked: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def set_hang_warning_secs(secs: float | None) -> None:
    """Sets how long a dequeue may block before the check (None or <= 0 disables it)."""
    _settings["secs"] = float(secs) if secs else 0.0


def hang_warning_secs() -> float:
    return _settings["secs"]


def add_producer(session, queue_name: str) -> None:
    """Records a thread that will enqueue to `queue_name` in `session` (a session backend)."""
    if session is None:
        return
    with _lock:
        table = _producers.setdefault(session, {})
        table[queue_name] = table.get(queue_name, 0) + 1


def remove_producer(session, queue_name: str) -> None:
    if session is None:
        return
    with _lock:
        table = _producers.get(session)
        if table and table.get(queue_name):
            table[queue_name] -= 1


def producer_count(session, queue_name: str) -> int:
    with _lock:
        return _producers.get(session, {}).get(queue_name, 0)


def watch(queue, waiter, node_name: str) -> None:
    """Starts watching a blocked dequeue of `queue` (called by the queue, under its lock)."""
    secs = _settings["secs"]
    session = waiter.session
    if secs <= 0 or session is None or not hasattr(session, "_active"):
        return
    with _lock:
        blocked = _blocked.setdefault(session, {})
        blocked[id(waiter)] = waiter
        heapq.heappush(_heap, (time.monotonic() + secs, next(_seq), queue, waiter, node_name))
        if not _thread or not _thread[0].is_alive():
            thread = threading.Thread(target=_serve, name="tfx-queue-hang-watch", daemon=True)
            _thread[:] = [thread]
            thread.start()
        _lock.notify()


def _serve() -> None:
    while True:
        with _lock:
            while not _heap or _heap[0][0] > time.monotonic():
                _lock.wait(None if not _heap else max(0.0, _heap[0][0] - time.monotonic()))
            _, _, queue, waiter, node_name = heapq.heappop(_heap)
        try:
            _check(queue, waiter, node_name)
        except Exception as err:  # noqa: BLE001 - a diagnostic must never kill the watcher
            tf_logging.debug("queue hang check failed: %s", err)


def _check(queue, waiter, node_name: str) -> None:
    session = waiter.session
    with _lock:
        blocked = _blocked.get(session, {})
        for key in [k for k, w in blocked.items() if not _is_waiting(w)]:
            del blocked[key]
        if not _is_waiting(waiter):
            return
        waiting_steps = {w.cancellation for w in blocked.values()}
        producers = _producers.get(session, {}).get(queue.display_name, 0)
    with session._active_lock:
        active = set(session._active)
    others = active - waiting_steps - {waiter.cancellation}
    if producers or others:
        secs = _settings["secs"]
        if secs > 0:
            with _lock:
                heapq.heappush(_heap, (time.monotonic() + secs, next(_seq), queue, waiter,
                                       node_name))
                _lock.notify()
        return
    with _lock:
        _blocked.get(session, {}).pop(id(waiter), None)
    via = f" by '{node_name}'" if node_name else ""
    tf_logging.warning(
        "A dequeue%s from %s '%s' has been blocked for %.1f s and nothing can ever enqueue to "
        "it: no queue runner thread is running for this queue and no other step is running in "
        "this session, so the step will hang. Did you forget to call "
        "tf.train.start_queue_runners(sess=sess) (and to add a QueueRunner for this queue)?",
        via, queue.kind, queue.display_name, _settings["secs"])


def _is_waiting(waiter) -> bool:
    return not waiter.finished


__all__ = ["set_hang_warning_secs", "hang_warning_secs", "add_producer", "remove_producer",
           "producer_count", "watch"]
