"""Barriers (TF 1.x `data_flow_ops.Barrier`): a keyed table of incomplete elements.

Contract: each element has a string key and one value per component. `insert_many(i, keys,
values)` sets component `i` of the keyed elements (creating them); an element whose components
are all set becomes ready. `take_many(n)` waits, without holding a thread, until `n` elements
are ready and returns them oldest first, as (indices, keys, values per component); an element's
index is its insertion index: -2**63 for the first `insert_many` that created elements, then one
more for each later one. After `close()` new keys are refused but incomplete elements may still
be completed; `close(cancel_pending_enqueues=True)` drops them and refuses every insert. A take
the closed barrier cannot satisfy fails with OutOfRangeError; with `allow_small_batch` a closed
barrier hands out what is ready.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections import deque

import numpy as np

from tensorflux.framework import dtypes as dtypes_mod
from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.ops.data_flow.queues import _as_shape_list, _as_type_list
from tensorflux.platform import producer_gate

__all__ = ["Barrier"]

_FIRST_INDEX = -(2 ** 63)


class BarrierResource:
    """The state of one barrier (see the module docstring)."""

    def __init__(self, name: str, component_types, shapes):
        self.name = name
        self.types = [dtypes_mod.as_dtype(t).base_dtype for t in component_types]
        self.shapes = [as_shape(s) for s in shapes] if shapes else None
        self._lock = threading.Lock()
        self._incomplete: dict = {}  # key -> [index, values per component (None: unset)]
        self._ready: list = []  # heap of (index, seq, key, values)
        self._seq = itertools.count()
        self._next_index = _FIRST_INDEX
        self._closed = False
        self._cancelled = False
        self._takers: deque = deque()

    def describe(self) -> str:
        return f"Barrier '{self.name}'"

    def check_compatible(self, component_types, shapes) -> None:
        types = [dtypes_mod.as_dtype(t).base_dtype for t in component_types]
        if types != self.types:
            raise errors.InvalidArgumentError(
                None, None, f"Shared barrier '{self.name}' has component types "
                f"{[t.name for t in self.types]} but requested component types were "
                f"{[t.name for t in types]}")
        mine = [s.as_list() for s in self.shapes] if self.shapes else []
        theirs = [as_shape(s).as_list() for s in shapes] if shapes else []
        if mine != theirs:
            raise errors.InvalidArgumentError(
                None, None, f"Shared barrier '{self.name}' has component shapes {mine} but "
                f"requested component shapes were {theirs}")

    # -- sizes ----------------------------------------------------------------------------

    def ready_size(self) -> int:
        with self._lock:
            return len(self._ready)

    def incomplete_size(self) -> int:
        with self._lock:
            return len(self._incomplete)

    # -- insert ---------------------------------------------------------------------------

    def _check_values(self, component: int, keys, values):
        if not 0 <= component < len(self.types):
            raise errors.InvalidArgumentError(
                None, None, f"{self.describe()}: component index {component} is not in "
                f"[0, {len(self.types)})")
        if values.dtype != np.dtype(self.types[component].as_numpy_dtype) and \
                values.dtype != np.object_:
            raise errors.InvalidArgumentError(
                None, None, f"{self.describe()}: component {component} has type "
                f"{self.types[component].name}, got values of type {values.dtype}")
        if keys.ndim != 1 or values.ndim == 0 or values.shape[0] != keys.shape[0]:
            raise errors.InvalidArgumentError(
                None, None, f"{self.describe()}: keys must be a vector with one key per row of "
                f"values, got keys of shape {list(keys.shape)} and values of shape "
                f"{list(values.shape)}")
        element = values.shape[1:]
        if keys.size and int(np.prod(element)) == 0:
            raise errors.InvalidArgumentError(
                None, None, f"{self.describe()}: Tensors with no elements are not supported "
                f"(component {component} has shape {list(element)})")
        if self.shapes and not self.shapes[component].is_compatible_with(element):
            raise errors.InvalidArgumentError(
                None, None, f"{self.describe()}: shape mismatch in component {component}: "
                f"expected {self.shapes[component].as_list()}, got {list(element)}")

    def insert_many(self, component: int, keys, values) -> None:
        keys = np.asarray(keys, dtype=object).reshape(-1) if np.ndim(keys) else \
            np.asarray(keys, dtype=object).reshape(1)
        values = np.asarray(values)
        self._check_values(component, keys, values)
        served = []
        with self._lock:
            if self._cancelled or (self._closed and any(
                    k not in self._incomplete for k in keys.tolist())):
                raise errors.CancelledError(None, None, f"{self.describe()} is closed")
            for key in keys.tolist():
                entry = self._incomplete.get(key)
                if entry is not None and entry[1][component] is not None:
                    raise errors.InvalidArgumentError(
                        None, None, f"{self.describe()}: key {key!r} already has a value for "
                        f"component {component}")
            created = False
            for key, row in zip(keys.tolist(), values):
                entry = self._incomplete.get(key)
                if entry is None:
                    entry = [self._next_index, [None] * len(self.types)]
                    self._incomplete[key] = entry
                    created = True
                entry[1][component] = row
                if all(v is not None for v in entry[1]):
                    del self._incomplete[key]
                    heapq.heappush(self._ready, (entry[0], next(self._seq), key, entry[1]))
            if created:
                self._next_index += 1
            self._serve(served)
        _finish(served)

    # -- take -----------------------------------------------------------------------------

    def take_many(self, ctx, num: int, allow_small_batch: bool, done) -> None:
        taker = [num, allow_small_batch, done, ctx.cancellation, None]
        served = []
        with self._lock:
            self._takers.append(taker)
            self._serve(served)
            if taker[2] is not None:
                token = ctx.cancellation.register(lambda error: self._cancel(taker))
                if token is None:
                    self._takers.remove(taker)
                    served.append((taker[2], None, _take_cancelled()))
                    taker[2] = None
                else:
                    taker[4] = token
                    # a blocked take lets input producers run (set before any serve)
                    producer_gate.consumer_blocked()
                    taker[2] = producer_gate.unblocking(taker[2])
        _finish(served)

    def _serve(self, served: list) -> None:
        """Hands ready elements to waiting takers in arrival order (under the lock)."""
        while self._takers:
            num, small, done, cancellation, token = self._takers[0]
            ready = len(self._ready)
            if ready >= num:
                count = num
            elif self._closed and small and ready > 0:
                count = ready
            elif self._closed and (small or ready + self._pending() < num):
                total = ready + self._pending()
                result = errors.OutOfRangeError(
                    None, None, f"{self.describe()} is closed and has insufficient elements "
                    f"(requested {num}, total size {total})")
                count = None
            else:
                return
            self._takers.popleft()
            if token is not None and not cancellation.deregister(token):
                continue  # its cancellation is under way and reports
            if count is None:
                served.append((done, None, result))
            else:
                served.append((done, self._pop(count), None))

    def _pending(self) -> int:
        return 0 if self._cancelled else len(self._incomplete)

    def _pop(self, count: int) -> tuple:
        taken = [heapq.heappop(self._ready) for _ in range(count)]
        indices = np.array([t[0] for t in taken], dtype=np.int64)
        keys = np.empty(count, dtype=object)
        keys[:] = [t[2] for t in taken]
        values = []
        for c, dtype in enumerate(self.types):
            rows = [t[3][c] for t in taken]
            if rows:
                values.append(np.stack(rows))
            else:
                shape = self.shapes[c].as_list() if self.shapes and \
                    self.shapes[c].is_fully_defined() else [0]
                values.append(np.zeros([0] + shape, dtype=dtype.as_numpy_dtype))
        return (indices, keys, *values)

    def _cancel(self, taker) -> None:
        with self._lock:
            if taker[2] is None:
                return
            done, taker[2] = taker[2], None
            if taker in self._takers:
                self._takers.remove(taker)
        done(error=_take_cancelled())

    def close(self, cancel_pending_enqueues: bool) -> None:
        served = []
        with self._lock:
            self._closed = True
            if cancel_pending_enqueues:
                self._cancelled = True
                self._incomplete.clear()
            self._serve(served)
        _finish(served)


def _take_cancelled():
    return errors.CancelledError(None, None, "TakeMany operation was cancelled")


def _finish(served: list) -> None:
    for done, result, error in served:
        if error is not None:
            done(error=error)
        else:
            done(result)


# -- ops ------------------------------------------------------------------------------------

BarrierOp = define_op(
    "Barrier", outputs=["handle: Ref(string)"],
    attrs=["component_types: list(type) >= 1", "shapes: list(shape) >= 0 = []",
           "capacity: int = -1", "container: string = ''", "shared_name: string = ''"],
    stateful=True, differentiable=False)
BarrierInsertMany = define_op(
    "BarrierInsertMany", inputs=["handle: Ref(string)", "keys: string", "values: T"],
    attrs=["T: type", "component_index: int"], stateful=True, differentiable=False)
BarrierTakeMany = define_op(
    "BarrierTakeMany", inputs=["handle: Ref(string)", "num_elements: int32"],
    outputs=["indices: int64", "keys: string", "values: component_types"],
    attrs=["component_types: list(type) >= 1", "allow_small_batch: bool = False",
           "wait_for_incomplete: bool = False", "timeout_ms: int = -1"],
    stateful=True, differentiable=False)
BarrierClose = define_op(
    "BarrierClose", inputs=["handle: Ref(string)"],
    attrs=["cancel_pending_enqueues: bool = False"], stateful=True, differentiable=False)
BarrierReadySize = define_op("BarrierReadySize", inputs=["handle: Ref(string)"],
                             outputs=["size: int32"], stateful=True, differentiable=False)
BarrierIncompleteSize = define_op("BarrierIncompleteSize", inputs=["handle: Ref(string)"],
                                  outputs=["size: int32"], stateful=True, differentiable=False)

BarrierOp.shape_fn(lambda **_: TensorShape([2]))
BarrierInsertMany.shape_fn(lambda handle, keys, values: [])
BarrierClose.shape_fn(lambda handle: [])
BarrierReadySize.shape_fn(lambda handle: TensorShape([]))
BarrierIncompleteSize.shape_fn(lambda handle: TensorShape([]))


@BarrierTakeMany.shape_fn
def _take_shape(handle, num_elements, *, component_types):
    return [TensorShape([None]), TensorShape([None]),
            [TensorShape(None)] * len(component_types)]


@BarrierOp.kernel(ctx=True, factory=True)
def _barrier_factory(component_types, shapes, capacity, container, shared_name, node_name):
    name = shared_name or node_name
    verified: list = []

    def kernel(ctx):
        barrier = ctx.resource_mgr.lookup_or_create(
            container, name, lambda: BarrierResource(name, component_types, list(shapes)))
        if not verified or verified[0] is not barrier:
            barrier.check_compatible(component_types, list(shapes))
            verified[:] = [barrier]
        return barrier

    return kernel


@BarrierInsertMany.kernel(ctx=True)
def _insert_many_kernel(ctx, handle, keys, values, *, component_index):
    handle.insert_many(component_index, keys, values)


@BarrierTakeMany.kernel(asynchronous=True)
def _take_many_kernel(ctx, handle, num_elements, done, *, allow_small_batch):
    handle.take_many(ctx, int(num_elements), allow_small_batch, done)


@BarrierClose.kernel(ctx=True)
def _close_kernel(ctx, handle, *, cancel_pending_enqueues):
    handle.close(cancel_pending_enqueues)


@BarrierReadySize.kernel(ctx=True)
def _ready_size_kernel(ctx, handle):
    return np.int32(handle.ready_size())


@BarrierIncompleteSize.kernel(ctx=True)
def _incomplete_size_kernel(ctx, handle):
    return np.int32(handle.incomplete_size())


# -- the Python class -----------------------------------------------------------------------

def _shape_text(shape: TensorShape) -> str:
    dims = ["None" if d is None else str(d) for d in shape.as_list()]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


class Barrier:
    """TF 1.x's barrier: elements keyed by strings, ready once every component is inserted.

    Args:
        types: a dtype or a list of dtypes, one per component.
        shapes: optional fully defined shapes, one per component (no empty shapes).
        shared_name: shares the barrier among sessions by this name.
        name: the op name.

    Raises:
        ValueError: a shape has no elements, or shapes and types differ in number.

    Example:
        >>> b = Barrier((tf.float32, tf.int64), shapes=((), (2,)))
        >>> ins_a = b.insert_many(0, keys, firsts)
        >>> ins_b = b.insert_many(1, keys, seconds)
        >>> indices, keys_out, (a, b_vals) = b.take_many(4)
    """

    def __init__(self, types, shapes=None, shared_name=None, name="barrier"):
        self._types = _as_type_list(types)
        if shapes is not None:
            shapes = _as_shape_list(shapes, self._types)
            self._shapes = [TensorShape(s) for s in shapes]
            for i, shape in enumerate(self._shapes):
                if shape.num_elements() == 0:
                    raise ValueError(f"Empty tensors are not supported, but received shape "
                                     f"'{_shape_text(shape)}' at index {i}")
        else:
            self._shapes = [TensorShape(None) for _ in self._types]
        self._barrier_ref = BarrierOp(component_types=self._types, shapes=shapes or [],
                                      shared_name=shared_name or "", name=name)
        self._name = self._barrier_ref.op.name.split("/")[-1]

    @property
    def barrier_ref(self):
        """The barrier's handle tensor."""
        return self._barrier_ref

    @property
    def name(self) -> str:
        return self._barrier_ref.op.name

    def insert_many(self, component_index, keys, values, name=None):
        """Sets component `component_index` of the elements `keys` to the rows of `values`."""
        values = convert_to_tensor(values, dtype=self._types[component_index])
        return BarrierInsertMany(self._barrier_ref, convert_to_tensor(keys, dtypes_mod.string),
                                 values, component_index=component_index,
                                 name=name or f"{self._name}_BarrierInsertMany")

    def take_many(self, num_elements, allow_small_batch=False, timeout=None, name=None):
        """Takes `num_elements` ready elements (fewer from a closed barrier with
        `allow_small_batch`); returns (indices, keys, [values per component])."""
        outputs = BarrierTakeMany(self._barrier_ref, num_elements,
                                  component_types=self._types,
                                  allow_small_batch=allow_small_batch,
                                  timeout_ms=-1 if timeout is None else int(timeout),
                                  name=name or f"{self._name}_BarrierTakeMany")
        indices, keys, values = outputs[0], outputs[1], list(outputs[2])
        count = None if allow_small_batch else constant_value(indices.op.inputs[1])
        batch = TensorShape([None if count is None else int(count)])
        indices.set_shape(batch)
        keys.set_shape(batch)
        for value, shape in zip(values, self._shapes):
            value.set_shape(batch.concatenate(shape))
        return indices, keys, values

    def close(self, cancel_pending_enqueues=False, name=None):
        """Closes the barrier: new keys are refused (every insert, with
        `cancel_pending_enqueues`, which also drops the incomplete elements)."""
        return BarrierClose(self._barrier_ref, cancel_pending_enqueues=cancel_pending_enqueues,
                            name=name or f"{self._name}_BarrierClose")

    def ready_size(self, name=None):
        """The number of complete elements (int32 scalar)."""
        return BarrierReadySize(self._barrier_ref, name=name or f"{self._name}_BarrierReadySize")

    def incomplete_size(self, name=None):
        """The number of incomplete elements (int32 scalar)."""
        return BarrierIncompleteSize(self._barrier_ref,
                                     name=name or f"{self._name}_BarrierIncompleteSize")
