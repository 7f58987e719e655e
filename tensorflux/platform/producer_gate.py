"""Input producers yield the interpreter to a running training step.

Queue-runner threads (input preprocessing: one `session.run` per example, mostly Python) and the
training thread share one GIL. Every time the training step calls a kernel that releases the GIL
(a NumPy or BLAS call), a runnable producer takes it, and the training thread waits up to a
switch interval (5 ms) to get it back: a convoy that costs far more wall time than the producer's
own work (the CIFAR-10 tutorial, stop 21: 568 -> 348 ms a step with the producers paused).

So a producer waits before its next example while a *foreground* step (a `session.run` from a
thread that is not a producer) is running, unless a consumer is blocked on a queue (a dequeue
that could not complete: the producers must run then, or the step never ends), and never
longer than `MAX_WAIT_SECS` per example (a safety cap: progress without either signal).
Values are unchanged: the same examples are produced in the same order by each producer; only
when they are produced moves. `TFX_PRODUCER_YIELD=0` (or `set_enabled(False)`) turns it off.
"""

from __future__ import annotations

import os
import threading
import time

MAX_WAIT_SECS = 0.25

_cond = threading.Condition(threading.Lock())
_local = threading.local()
# [foreground session.runs in progress, consumers blocked on a queue]
_state = [0, 0]
_enabled = [os.environ.get("TFX_PRODUCER_YIELD", "1") != "0"]


def set_enabled(enabled: bool) -> bool:
    """Turns the yielding on or off; returns the previous setting."""
    old = _enabled[0]
    _enabled[0] = bool(enabled)
    if not enabled:
        with _cond:
            _cond.notify_all()
    return old


def enabled() -> bool:
    """Whether producers yield to foreground steps."""
    return _enabled[0]


def mark_producer() -> None:
    """Marks the calling thread as an input producer (its runs are not foreground)."""
    _local.producer = True


def is_producer() -> bool:
    """Whether the calling thread is an input producer."""
    return getattr(_local, "producer", False)


def foreground_enter() -> bool:
    """Counts a session.run starting on this thread; returns whether it is foreground."""
    if getattr(_local, "producer", False):
        return False
    with _cond:
        _state[0] += 1
    return True


def foreground_exit() -> None:
    """Ends a foreground run counted by `foreground_enter`."""
    with _cond:
        _state[0] -= 1
        if _state[0] == 0:
            _cond.notify_all()


def consumer_blocked() -> None:
    """A dequeue is waiting for elements: producers must run."""
    with _cond:
        _state[1] += 1
        _cond.notify_all()


def consumer_unblocked() -> None:
    """A dequeue counted by `consumer_blocked` completed (or was cancelled)."""
    with _cond:
        _state[1] -= 1


def unblocking(done):
    """`done` wrapped to call `consumer_unblocked` once before it."""
    called = []

    def wrapped(*args, **kwargs):
        if not called:
            called.append(True)
            consumer_unblocked()
        return done(*args, **kwargs)

    return wrapped


def wait_turn() -> float:
    """Called by a producer before its next example: waits while a foreground step runs and
    no consumer is blocked (at most `MAX_WAIT_SECS`). Returns the seconds waited."""
    if not _enabled[0] or _state[0] == 0 or _state[1] > 0:
        return 0.0
    start = time.monotonic()
    deadline = start + MAX_WAIT_SECS
    with _cond:
        while _enabled[0] and _state[0] > 0 and _state[1] == 0:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            _cond.wait(left)
    return time.monotonic() - start
