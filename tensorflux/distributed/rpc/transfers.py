"""The pieces of a tensor transfer: reusable threads that read transfers, one pending
transfer, the pending tensors of a batched transfer, the step's encoded feeds, and the
allocator setting that keeps transfer buffers from being returned to the kernel each time.
"""

from __future__ import annotations

import queue
import threading

from tensorflux.distributed.rpc.tensor_codec import encode_tensor
from tensorflux.framework import errors
from tensorflux.platform import tf_logging as logging
from tensorflux.protos import tensor_pb2

_TUNED = []


def tune_allocator() -> None:
    """Keeps glibc from handing transfer buffers back to the kernel after every message.

    gRPC allocates and frees megabytes of buffers per large transfer; by default glibc trims
    them (madvise) and serves big blocks with fresh mmaps, so every transfer pays page faults
    and the kernel zeroing pages, which cost more CPU than the transfer itself. A server
    process keeps freed memory for reuse instead (as TensorFlow's allocators do): the trim
    threshold is raised to 256 MB and the mmap threshold fixed at 32 MB (the largest value
    glibc's own adaptive threshold reaches). Explicit MALLOC_* environment settings win;
    other C libraries are left alone.
    """
    import ctypes
    import os
    import platform

    if _TUNED or platform.libc_ver()[0] != "glibc":
        return
    _TUNED.append(True)
    if any(k in os.environ for k in ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_")):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    m_trim_threshold, m_mmap_threshold = -1, -3
    mallopt(m_trim_threshold, 256 << 20)
    mallopt(m_mmap_threshold, 32 << 20)


class ElasticPool:
    """Runs blocking callables on reusable daemon threads; a call never waits for a free one.

    Transfers may block for as long as their sender takes, so a bounded pool could deadlock;
    this one starts a thread when none is idle and retires threads idle for `idle_secs`.
    """

    def __init__(self, name: str, idle_secs: float = 30.0):
        self._name = name
        self._idle_secs = idle_secs
        self._lock = threading.Lock()
        self._idle = 0
        self._queue: queue.SimpleQueue = queue.SimpleQueue()

    def submit(self, fn, *args) -> None:
        with self._lock:
            spawn = self._idle == 0
            if not spawn:
                self._idle -= 1
        if spawn:
            threading.Thread(target=self._loop, args=((fn, args),), daemon=True,
                             name=self._name).start()
        else:
            self._queue.put((fn, args))

    def _loop(self, item) -> None:
        while True:
            fn, args = item
            try:
                fn(*args)
            except BaseException as err:  # noqa: BLE001 - a pool thread must survive
                logging.error(f"{self._name}: {type(err).__name__}: {err}")
            del fn, args, item
            with self._lock:
                self._idle += 1
            while True:
                try:
                    item = self._queue.get(timeout=self._idle_secs)
                    break
                except queue.Empty:
                    with self._lock:
                        # idle == 0 means every waiting thread (this one included) has been
                        # promised an item that is on its way: keep waiting for it.
                        if self._idle > 0:
                            self._idle -= 1
                            return


PULLS = ElasticPool("tfx-recv")


class Handle:
    """A pending transfer: calls `done(error, value, is_dead, incarnation)` exactly once."""

    __slots__ = ("_lock", "_finished", "_cancel", "_done")

    def __init__(self, done):
        self._lock = threading.Lock()
        self._finished = False
        self._cancel = None
        self._done = done

    def set(self, outcome) -> None:
        with self._lock:
            if self._finished:
                return
            self._finished = True
            # Nothing of the step (its executor, the received value) outlives the transfer.
            done, self._done = self._done, None
            cancel, self._cancel = self._cancel, None
        done(*outcome)
        return cancel

    def cancel(self) -> None:
        cancel = self.set((errors.CancelledError(None, None, "transfer cancelled"), None,
                           False, 0))
        if cancel is not None:
            cancel()


class Streams:
    """The pending tensors of a `recv_tensors_async`: each delivered once, or one failure."""

    __slots__ = ("_lock", "_left", "_arrived", "_failed", "handles", "call", "_over")

    def __init__(self, count: int, arrived, failed):
        self._lock = threading.Lock()
        self._left = count
        self._arrived = arrived
        self._failed = failed
        self.handles: list = []  # per-key transfers (one RecvTensor each), or
        self.call = None  # the RecvTensors call
        self._over = None  # an Event set once everything arrived or it failed (`wait`)

    def deliver(self, index, value, is_dead, incarnation) -> None:
        with self._lock:
            arrived = self._arrived
            if arrived is None:
                return
            self._left -= 1
            last = self._left == 0
            if last:
                self._arrived = self._failed = None
        arrived(index, value, is_dead, incarnation)
        if last and self._over is not None:
            self._over.set()

    def fail(self, error) -> bool:
        """Reports `error` unless everything arrived or a failure was reported already."""
        with self._lock:
            failed = self._failed
            self._arrived = self._failed = None
        if failed is None:
            return False
        failed(error)
        if self._over is not None:
            self._over.set()
        for handle in self.handles:
            handle.cancel()
        return True

    def waiter(self, timeout):
        """A function that waits (at most `timeout` seconds, None: no bound) until every
        tensor arrived or the transfer failed; past `timeout` it fails the transfer with
        DeadlineExceededError."""
        self._over = threading.Event()
        with self._lock:
            if self._arrived is None:
                self._over.set()

        def wait():
            if not self._over.wait(timeout):
                self.fail(errors.DeadlineExceededError(
                    None, None, f"Timed out receiving {len(self.handles)} tensors"))

        return wait

    def cancel(self) -> None:
        if self.fail(errors.CancelledError(None, None, "transfer cancelled")) and \
                self.call is not None:
            self.call.cancel()


# The `values` entry of a RunGraph answer holding the sends it returned (`recv_key`):
# {rendezvous key: (value, is_dead), or None when the receiver must pull it}.


PUSHED = "pushed"
PUSH_MARKS = frozenset("=!?")


class StepFeeds:
    """The fed values of one step by feed index; each is encoded at most once, however many
    remote tasks it is sent to."""

    def __init__(self, values):
        self.values = values
        self._protos: dict = {}

    def proto(self, index: int):
        proto = self._protos.get(index)
        if proto is None:
            proto = self._protos[index] = tensor_pb2.TensorProto()
            encode_tensor(self.values[index], proto)
        return proto
