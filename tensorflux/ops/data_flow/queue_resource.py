"""The queue resource: a thread-safe bounded buffer whose blocked callers are callbacks.

Contract:
- No thread is held while an enqueue or dequeue waits: a request that cannot complete becomes
  a *waiter* (its `done` callback plus what it still needs), registered with its step's
  cancellation manager; whoever later makes room or adds elements completes it.
- Exactly-once delivery: elements leave the queue only when handed to a live waiter, and that
  hand-over happens under the queue lock together with deregistering the waiter's
  cancellation. A dequeue asking for more elements than the queue can ever hold at once
  (`dequeue_many(n)` with `n > capacity`) stages them as they come, but staged elements go
  back to the front of the queue if the request is cancelled, times out or fails; nothing is
  lost or duplicated by a cancelled step.
- Requests are served in arrival order. A closed queue refuses new enqueues (CancelledError)
  and fails dequeues it can no longer satisfy (OutOfRangeError, elements stay);
  `dequeue_up_to` returns what is left instead.
- `close_resource()` (called when the resource's container is cleared, e.g. Session.close)
  cancels every waiter.

A dequeue still blocked after `hang_watch.hang_warning_secs()` (5 s by default) while nothing
could ever enqueue (no queue runner registered for the queue and no other step running in the
session) logs a warning that names the queue and suggests `tf.train.start_queue_runners` (see
`hang_watch.py`).
"""

from __future__ import annotations

import threading
from collections import deque

import numpy as np

from tensorflux.framework import errors
from tensorflux.ops.data_flow import hang_watch
from tensorflux.ops.data_flow.queue_store import (
    DenseStore,
    ListStore,
    chunk_as_batch,
    chunk_as_element,
    concat_chunks,
)
from tensorflux.platform import producer_gate


class _Waiter:
    __slots__ = ("n", "many", "allow_less", "batch", "pos", "done", "cancellation", "token",
                 "staged", "staged_count", "finished", "session")

    def __init__(self, done, cancellation, session):
        self.done = done
        self.cancellation = cancellation
        self.session = session
        self.token = None
        self.finished = False
        self.n = 0
        self.many = False
        self.allow_less = False
        self.batch = None
        self.pos = 0
        self.staged: list = []
        self.staged_count = 0


def _cancelled(what: str, cancellation):
    error = getattr(cancellation, "error", None)
    text = f"{what} operation was cancelled"
    if error is not None and getattr(error, "message", ""):
        text += f" ({type(error).__name__}: {error.message.splitlines()[0]})"
    return errors.CancelledError(None, None, text)


class QueueResource:
    """A FIFO queue resource; subclasses change the order elements leave in.

    Args:
        name: the resource name (shared_name, or "_<k>_<node name>").
        display_name: the queue op's node name, used in warnings.
        dtypes: component DTypes.
        shapes: component TensorShapes, or an empty list when unspecified.
        capacity: the bound on the number of elements (negative: none).
    """

    kind = "FIFOQueue"
    pads = False

    def __init__(self, name: str, display_name: str, dtypes, shapes, capacity: int):
        self.name = name
        self.display_name = display_name
        self.dtypes = tuple(dtypes)
        self.np_dtypes = tuple(d.as_numpy_dtype for d in self.dtypes)
        self.shapes = tuple(shapes) if shapes else (None,) * len(self.dtypes)
        self.capacity = int(capacity)
        self.closed = False
        self._lock = threading.Lock()
        self._enqueuers: deque = deque()
        self._dequeuers: deque = deque()
        fixed = all(s is not None and s.is_fully_defined() for s in self.shapes)
        self._store = DenseStore(self.np_dtypes, [s.as_list() for s in self.shapes]) \
            if fixed else ListStore()
        # What an element that needs no conversion or shape check looks like (one small
        # image per enqueue is the common case of input pipelines).
        self._exact = tuple((np.dtype(d), tuple(s.as_list()) if s is not None and
                             s.is_fully_defined() else None)
                            for d, s in zip(self.np_dtypes, self.shapes))

    # -- description and checks ------------------------------------------------------------

    def describe(self) -> str:
        return f"{self.kind} '{self.name}'"

    def check_compatible(self, dtypes, shapes, capacity, **extra) -> None:
        """Raises InvalidArgumentError when a shared queue is requested with other attrs."""
        def names(types):
            return ", ".join(d.name for d in types)

        if tuple(dtypes) != self.dtypes:
            raise errors.InvalidArgumentError(
                None, None, f"Shared queue '{self.name}' has component types "
                f"{names(self.dtypes)} but requested component types were {names(dtypes)}")
        if int(capacity) != self.capacity:
            raise errors.InvalidArgumentError(
                None, None, f"Shared queue '{self.name}' has capacity {self.capacity} but "
                f"requested capacity was {capacity}")
        mine = [None if s is None else s.as_list() for s in self.shapes]
        theirs = [None if s is None else s.as_list() for s in
                  (tuple(shapes) if shapes else (None,) * len(dtypes))]
        if mine != theirs:
            raise errors.InvalidArgumentError(
                None, None, f"Shared queue '{self.name}' has component shapes {mine} but "
                f"requested component shapes were {theirs}")

    def _validate(self, components, many: bool) -> tuple:
        if not many and len(components) == len(self._exact):
            for value, (dtype, shape) in zip(components, self._exact):
                if type(value) is not np.ndarray or value.dtype != dtype or value.shape != shape:
                    break
            else:  # arrays of the exact dtypes and (fully defined) shapes: nothing to check
                return tuple(components), 1
        if len(components) != len(self.dtypes):
            raise errors.InvalidArgumentError(
                None, None, f"Signature mismatch: {self.describe()} expects "
                f"{len(self.dtypes)} components, got {len(components)}")
        values = []
        count = None
        for i, (value, np_dtype, shape) in enumerate(zip(components, self.np_dtypes,
                                                         self.shapes)):
            value = np.asarray(value)
            if value.dtype != np_dtype:
                raise errors.InvalidArgumentError(
                    None, None, f"Type mismatch in tuple component {i}: {self.describe()} "
                    f"expects {self.dtypes[i].name}, got {value.dtype}")
            element_shape = value.shape
            if many:
                if value.ndim == 0:
                    raise errors.InvalidArgumentError(
                        None, None, f"{self.describe()}: EnqueueMany requires components of "
                        f"rank >= 1, got a scalar for component {i}")
                if count is None:
                    count = value.shape[0]
                elif value.shape[0] != count:
                    raise errors.InvalidArgumentError(
                        None, None, f"{self.describe()}: EnqueueMany requires the same batch "
                        f"size for every component; component 0 has {count}, component {i} "
                        f"has {value.shape[0]}")
                element_shape = value.shape[1:]
            if shape is not None and not shape.is_compatible_with(element_shape):
                # TF's wording: shapes as [2,3], with the batch size in front for EnqueueMany
                batch = [value.shape[0]] if many else []
                expected = batch + shape.as_list() if shape.rank is not None else "?"
                raise errors.InvalidArgumentError(
                    None, None, f"Shape mismatch in tuple component {i}. Expected "
                    f"{_tf_shape(expected)}, got {_tf_shape(list(value.shape))} "
                    f"({self.describe()})")
            values.append(value)
        return tuple(values), (count if many else 1)

    # -- kernels' entry points -------------------------------------------------------------

    def enqueue(self, ctx, components, many: bool, done) -> None:
        """Adds one element (or a batch when `many`); calls `done()` when all are in."""
        values, count = self._validate(components, many)
        if not self._store.dense and not many:
            values = tuple(np.array(v) for v in values)
        with self._lock:
            # Nobody queued before us and room for all: store now, without a waiter.
            fits = not self.closed and not self._enqueuers and (
                self.capacity < 0 or len(self._store) + count <= self.capacity)
            if fits:
                if many:
                    self._store.push(values, 0, count)
                else:
                    self._store.push_one(values)
                ready = self._flush() if self._dequeuers else []
        if fits:
            done(())
            _run(ready)
            return
        waiter = _Waiter(done, ctx.cancellation, ctx.session)
        waiter.many = many
        waiter.batch = values
        waiter.n = count
        with self._lock:
            if self.closed:
                error = errors.CancelledError(None, None, f"{self.describe()} is closed.")
                waiter = None
            else:
                self._enqueuers.append(waiter)
                ready = self._flush()
                if not waiter.finished:
                    self._register(waiter, is_enqueue=True, ready=ready)
        if waiter is None:
            done(error=error)
            return
        _run(ready)

    def dequeue(self, ctx, n: int, many: bool, allow_less: bool, done, node_name: str = "")\
            -> None:
        """Removes `n` elements and calls `done(outputs)` (batched when `many`)."""
        if n < 0:
            done(error=errors.InvalidArgumentError(
                None, None, f"{self.describe()}: requested a negative number of elements "
                f"({n})"))
            return
        if many and not self.pads and any(s is None for s in self.shapes):
            done(error=errors.InvalidArgumentError(
                None, None, f"{self.describe()}: DequeueMany and DequeueUpTo require the "
                "components to have specified shapes."))
            return
        if ctx.cancellation.is_cancelled:  # take nothing for a step that is already aborting
            done(error=_cancelled("Dequeue", ctx.cancellation))
            return
        waiter = _Waiter(done, ctx.cancellation, ctx.session)
        waiter.n = n
        waiter.many = many
        waiter.allow_less = allow_less
        with self._lock:
            self._dequeuers.append(waiter)
            ready = self._flush()
            if not waiter.finished:
                self._register(waiter, is_enqueue=False, ready=ready)
                if not waiter.finished:
                    hang_watch.watch(self, waiter, node_name)
                    # NOTE: set under the lock, before any claim can take `waiter.done`
                    producer_gate.consumer_blocked()
                    waiter.done = producer_gate.unblocking(waiter.done)
        _run(ready)

    def close(self, cancel_pending_enqueues: bool) -> None:
        with self._lock:
            self.closed = True
            ready = []
            if cancel_pending_enqueues:
                while self._enqueuers:
                    waiter = self._enqueuers.popleft()
                    self._claim(waiter, ready, error=_cancelled("Enqueue", None))
            ready.extend(self._flush())
        _run(ready)

    def size(self) -> int:
        return len(self._store)

    def is_closed(self) -> bool:
        return self.closed

    def close_resource(self) -> None:
        """Cancels every waiter (the resource's container is being cleared)."""
        ready = []
        with self._lock:
            self.closed = True
            for waiters, what in ((self._enqueuers, "Enqueue"), (self._dequeuers, "Dequeue")):
                while waiters:
                    waiter = waiters.popleft()
                    self._restore(waiter)
                    if waiter.token is not None:
                        waiter.cancellation.deregister(waiter.token)
                    ready.append((_finish(waiter), None, errors.CancelledError(
                        None, None, f"{what} operation was cancelled: {self.describe()} was "
                        "closed because its session was closed or its container reset.")))
        _run(ready)

    # -- ordering hooks (overridden by the shuffling and priority queues) ------------------

    def _available(self) -> int:
        return len(self._store)

    def _must_stage(self, waiter) -> bool:
        return self.capacity >= 0 and waiter.n > self.capacity - self._reserve()

    def _reserve(self) -> int:
        return 0

    def _take(self, n: int):
        return self._store.take_front(n)

    def _outputs(self, chunk, waiter):
        if not waiter.many:
            return chunk_as_element(chunk)
        return chunk_as_batch(chunk, self.np_dtypes, self.shapes, self.pads, self.describe())

    # -- the state machine (called with the lock held) -------------------------------------

    def _register(self, waiter, is_enqueue: bool, ready: list) -> None:
        token = waiter.cancellation.register(
            lambda error: self._on_cancel(waiter, is_enqueue, error))
        if token is None:
            (self._enqueuers if is_enqueue else self._dequeuers).remove(waiter)
            self._restore(waiter)
            ready.append((_finish(waiter), None,
                          _cancelled("Enqueue" if is_enqueue else "Dequeue",
                                     waiter.cancellation)))
            ready.extend(self._flush())
        else:
            waiter.token = token

    def _flush(self) -> list:
        """Moves elements between waiters and the store until nothing changes."""
        ready: list = []
        progress = True
        while progress:
            progress = False
            while self._enqueuers:
                waiter = self._enqueuers[0]
                room = waiter.n - waiter.pos
                if self.capacity >= 0:
                    room = min(room, self.capacity - len(self._store))
                if room > 0:
                    if waiter.many:
                        self._store.push(waiter.batch, waiter.pos, waiter.pos + room)
                    else:
                        self._store.push_one(waiter.batch)
                    waiter.pos += room
                    progress = True
                if waiter.pos < waiter.n:
                    break
                self._enqueuers.popleft()
                self._claim(waiter, ready)
            while self._dequeuers:
                waiter = self._dequeuers[0]
                need = waiter.n - waiter.staged_count
                available = self._available()
                # Take elements only when the request can be completed, or when it never could
                # be without staging (more than the queue can hold beyond its reserve).
                if need > 0 and available > 0 and (available >= need or self.closed
                                                   or self._must_stage(waiter)):
                    take = min(need, available)
                    waiter.staged.append(self._take(take))
                    waiter.staged_count += take
                    need -= take
                    progress = True
                if need > 0:
                    if not self.closed or self._enqueuers or len(self._store) > 0:
                        break
                    self._dequeuers.popleft()
                    if waiter.allow_less and waiter.staged_count > 0:
                        self._claim(waiter, ready)
                    else:
                        self._restore(waiter)
                        self._claim(waiter, ready, error=errors.OutOfRangeError(
                            None, None, f"{self.describe()} is closed and has insufficient "
                            f"elements (requested {waiter.n}, current size "
                            f"{len(self._store)})"))
                    progress = True
                    continue
                self._dequeuers.popleft()
                self._claim(waiter, ready)
        return ready

    def _claim(self, waiter, ready: list, error=None) -> None:
        """Completes a waiter removed from its list, unless its cancellation already began
        (then its cancellation callback reports, and puts staged elements back)."""
        if waiter.token is not None and not waiter.cancellation.deregister(waiter.token):
            return
        if error is None and waiter.batch is None:
            outputs = self._dequeue_result(waiter)
        else:
            outputs = None
        ready.append((_finish(waiter), outputs, error))

    def _dequeue_result(self, waiter):
        try:
            chunk = concat_chunks(waiter.staged) if waiter.staged else self._take(0)
            outputs = self._outputs(chunk, waiter)
        except errors.OpError as err:
            self._restore(waiter)
            return err
        return outputs[0] if len(outputs) == 1 else outputs

    def _restore(self, waiter) -> None:
        for chunk in reversed(waiter.staged):
            self._store.push_front(chunk)
        waiter.staged = []
        waiter.staged_count = 0

    def _on_cancel(self, waiter, is_enqueue: bool, error) -> None:
        with self._lock:
            if waiter.finished:
                return
            waiters = self._enqueuers if is_enqueue else self._dequeuers
            if waiter in waiters:
                waiters.remove(waiter)
            self._restore(waiter)
            done = _finish(waiter)
            ready = self._flush()
        done(error=_cancelled("Enqueue" if is_enqueue else "Dequeue", waiter.cancellation))
        _run(ready)


class PaddingFIFOQueueResource(QueueResource):
    """A FIFO queue whose dequeue_many pads each component to the batch's largest shape."""

    kind = "PaddingFIFOQueue"
    pads = True


class RandomShuffleQueueResource(QueueResource):
    """Dequeues uniformly random elements, keeping `min_after_dequeue` until closed."""

    kind = "RandomShuffleQueue"

    def __init__(self, name, display_name, dtypes, shapes, capacity, min_after_dequeue: int,
                 seed: int, seed2: int):
        super().__init__(name, display_name, dtypes, shapes, capacity)
        self.min_after_dequeue = int(min_after_dequeue)
        entropy = None if seed == 0 and seed2 == 0 else [int(seed) & 0xFFFFFFFFFFFFFFFF,
                                                          int(seed2) & 0xFFFFFFFFFFFFFFFF]
        self._rng = np.random.default_rng(entropy)

    def _available(self) -> int:
        size = len(self._store)
        return size if self.closed else max(0, size - self.min_after_dequeue)

    def _reserve(self) -> int:
        return 0 if self.closed else self.min_after_dequeue

    def _take(self, n: int):
        size = len(self._store)
        if n == 0 or size == 0:
            return self._store.take_front(0)
        return self._store.take_indices(self._rng.choice(size, n, replace=False))


class PriorityQueueResource(QueueResource):
    """Dequeues the element with the smallest int64 priority (component 0) first."""

    kind = "PriorityQueue"

    def _take(self, n: int):
        if n == 0:
            return self._store.take_front(0)
        priorities = self._store.column(0)
        order = np.argsort(priorities, kind="stable")[:n]
        chunk = self._store.take_indices(order)
        return chunk


def _tf_shape(dims) -> str:
    """A shape as TF's messages print it: [2,3] (? for an unknown rank)."""
    if isinstance(dims, str):
        return dims
    return "[" + ",".join("?" if d is None or d < 0 else str(d) for d in dims) + "]"


def _dims(shape) -> list:
    return [-1 if d is None else d for d in shape.as_list()] if shape.rank is not None else "?"


def _finish(waiter):
    """Marks a waiter finished and drops what it holds; returns its callback."""
    done = waiter.done
    waiter.finished = True
    waiter.done = None
    waiter.batch = None
    waiter.staged = []
    return done


def _run(ready: list) -> None:
    """Calls the completed waiters' callbacks (outside the queue lock)."""
    for done, outputs, error in ready:
        if error is None and isinstance(outputs, errors.OpError):
            error, outputs = outputs, None
        if error is not None:
            done(error=error)
        elif outputs is None:
            done(())
        else:
            done(outputs)
