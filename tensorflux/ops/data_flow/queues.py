"""Queues: FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue, PriorityQueue (TF1 `tf.*Queue`).

The queue ops use TensorFlow's resource-handle (V2) signatures: `FIFOQueueV2` & co. output a
handle (dtype `resource`) whose value is the queue resource of `queue_resource.py`, created in
the device's resource manager under `(container, shared_name)`, or a private name when
`shared_name` is empty; `QueueEnqueueV2`, `QueueDequeueV2`, ... take that handle. Enqueues and
dequeues are asynchronous kernels, so a blocked one holds no executor thread; they are
cancelled by the step's deadline (`RunOptions.timeout_in_ms`), by a failure elsewhere in the
step, and by `Session.close`.

Component dtypes and shapes are checked when the op is built (TypeError / ValueError naming the
queue) and again when it runs (InvalidArgumentError).
"""

from __future__ import annotations

import itertools
import zlib

import numpy as np

from tensorflux.framework import dtypes as dtypes_mod
from tensorflux.framework import errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import Dimension, TensorShape, as_shape
from tensorflux.ops.array import concat_split, gather_scatter
from tensorflux.ops.data_flow.queue_resource import (
    PaddingFIFOQueueResource,
    PriorityQueueResource,
    QueueResource,
    RandomShuffleQueueResource,
)
from tensorflux.ops.random import seed as random_seed

__all__ = ["QueueBase", "FIFOQueue", "PaddingFIFOQueue", "RandomShuffleQueue", "PriorityQueue"]

_QUEUE_ATTRS = ["component_types: list(type) >= 1", "shapes: list(shape) >= 0 = []",
                "capacity: int = -1", "container: string = ''", "shared_name: string = ''"]
_RESOURCE_IDS = itertools.count()


def _handle_shape(**_):
    return TensorShape([])


def _queue_op(name: str, attrs=_QUEUE_ATTRS):
    op = define_op(name, outputs=["handle: resource"], attrs=attrs, stateful=True,
                   differentiable=False)
    op.shape_fn(_handle_shape)
    return op


def _resource_kernel(make, container: str, shared_name: str, node_name: str, check):
    """The per-node kernel of a queue op: finds or creates its resource, checking a shared
    queue's attrs the first time it is met."""
    name = shared_name or f"_{next(_RESOURCE_IDS)}_{node_name}"
    verified: list = []

    def kernel(ctx):
        queue = ctx.resource_mgr.lookup_or_create(container, name, lambda: make(name))
        if not verified or verified[0] is not queue:
            check(queue)
            verified[:] = [queue]
        return queue

    return kernel


FIFOQueueV2 = _queue_op("FIFOQueueV2")
PaddingFIFOQueueV2 = _queue_op("PaddingFIFOQueueV2")
RandomShuffleQueueV2 = _queue_op("RandomShuffleQueueV2", _QUEUE_ATTRS + [
    "min_after_dequeue: int = 0", "seed: int = 0", "seed2: int = 0"])
PriorityQueueV2 = _queue_op("PriorityQueueV2", [
    "component_types: list(type) >= 0 = []", "shapes: list(shape) >= 0", "capacity: int = -1",
    "container: string = ''", "shared_name: string = ''"])


def _simple_queue_factory(resource_cls):
    def factory(component_types, shapes, capacity, container, shared_name, node_name):
        def make(name):
            return resource_cls(name, node_name, component_types, list(shapes), capacity)

        def check(queue):
            queue.check_compatible(component_types, list(shapes), capacity)

        return _resource_kernel(make, container, shared_name, node_name, check)

    return factory


FIFOQueueV2.kernel(ctx=True, factory=True)(_simple_queue_factory(QueueResource))
PaddingFIFOQueueV2.kernel(ctx=True, factory=True)(
    _simple_queue_factory(PaddingFIFOQueueResource))


def _failing_kernel(message: str):
    def kernel(ctx, *args):
        raise errors.InvalidArgumentError(None, None, message)

    return kernel


@RandomShuffleQueueV2.kernel(ctx=True, factory=True)
def _random_shuffle_queue_factory(component_types, shapes, capacity, min_after_dequeue, seed,
                                  seed2, container, shared_name, node_name):
    if min_after_dequeue >= capacity > 0:
        bad = (f"RandomShuffleQueue '{node_name}': min_after_dequeue {min_after_dequeue} must "
               f"be < capacity {capacity}")
        return _failing_kernel(bad)

    def make(name):
        return RandomShuffleQueueResource(name, node_name, component_types, list(shapes),
                                          capacity, min_after_dequeue, seed, seed2)

    def check(queue):
        queue.check_compatible(component_types, list(shapes), capacity)
        if queue.min_after_dequeue != min_after_dequeue:
            raise errors.InvalidArgumentError(
                None, None, f"Shared queue '{queue.name}' has min_after_dequeue "
                f"{queue.min_after_dequeue} but requested min_after_dequeue was "
                f"{min_after_dequeue}.")

    return _resource_kernel(make, container, shared_name, node_name, check)


@PriorityQueueV2.kernel(ctx=True, factory=True)
def _priority_queue_factory(component_types, shapes, capacity, container, shared_name,
                            node_name):
    types = (dtypes_mod.int64,) + tuple(component_types)
    full_shapes = [TensorShape([])] + list(shapes) if shapes else []

    def make(name):
        return PriorityQueueResource(name, node_name, types, full_shapes, capacity)

    def check(queue):
        queue.check_compatible(types, full_shapes, capacity)

    return _resource_kernel(make, container, shared_name, node_name, check)


# -- operations on a queue handle ----------------------------------------------------------

def _queue_input_op(name, inputs=(), outputs=(), attrs=()):
    return define_op(name, inputs=["handle: resource"] + list(inputs), outputs=list(outputs),
                     attrs=list(attrs), stateful=True, differentiable=False)


QueueEnqueueV2 = _queue_input_op("QueueEnqueueV2", ["components: Tcomponents"], [],
                                 ["Tcomponents: list(type) >= 1", "timeout_ms: int = -1"])
QueueEnqueueManyV2 = _queue_input_op("QueueEnqueueManyV2", ["components: Tcomponents"], [],
                                     ["Tcomponents: list(type) >= 1", "timeout_ms: int = -1"])
QueueDequeueV2 = _queue_input_op("QueueDequeueV2", [], ["components: component_types"],
                                 ["component_types: list(type) >= 1", "timeout_ms: int = -1"])
QueueDequeueManyV2 = _queue_input_op("QueueDequeueManyV2", ["n: int32"],
                                     ["components: component_types"],
                                     ["component_types: list(type) >= 1",
                                      "timeout_ms: int = -1"])
QueueDequeueUpToV2 = _queue_input_op("QueueDequeueUpToV2", ["n: int32"],
                                     ["components: component_types"],
                                     ["component_types: list(type) >= 1",
                                      "timeout_ms: int = -1"])
QueueCloseV2 = _queue_input_op("QueueCloseV2", attrs=["cancel_pending_enqueues: bool = False"])
QueueSizeV2 = _queue_input_op("QueueSizeV2", outputs=["size: int32"])
QueueIsClosedV2 = _queue_input_op("QueueIsClosedV2", outputs=["is_closed: bool"])


def _no_outputs(handle, *components):
    return []


def _scalar_shape(handle):
    return TensorShape([])


def _components_shape(handle, *, component_types):
    return [[TensorShape(None)] * len(component_types)]


def _components_many_shape(handle, n, *, component_types):
    if n is not None and int(n) < 0:
        raise ValueError(f"Input 'n' must be >= 0, but is {int(n)}")
    return [[TensorShape(None)] * len(component_types)]


def _components_up_to_shape(handle, n, *, component_types):
    return [[TensorShape(None)] * len(component_types)]  # TF checks `n` in the kernel only


QueueEnqueueV2.shape_fn(_no_outputs)
QueueEnqueueManyV2.shape_fn(_no_outputs)
QueueCloseV2.shape_fn(_no_outputs)
QueueSizeV2.shape_fn(_scalar_shape)
QueueIsClosedV2.shape_fn(_scalar_shape)
QueueDequeueV2.shape_fn(_components_shape)
QueueDequeueManyV2.shape_fn(value_inputs=("n",))(_components_many_shape)
QueueDequeueUpToV2.shape_fn(value_inputs=("n",))(_components_up_to_shape)


@QueueEnqueueV2.kernel(asynchronous=True)
def _enqueue_kernel(ctx, handle, *components, done):
    handle.enqueue(ctx, components, False, done)


@QueueEnqueueManyV2.kernel(asynchronous=True)
def _enqueue_many_kernel(ctx, handle, *components, done):
    handle.enqueue(ctx, components, True, done)


def _check_types(queue, component_types) -> None:
    if queue.dtypes != tuple(component_types):
        names = ", ".join(d.name for d in queue.dtypes)
        wanted = ", ".join(d.name for d in component_types)
        raise errors.InvalidArgumentError(
            None, None, f"Dequeue type mismatch: {queue.describe()} holds ({names}), the op "
            f"asks for ({wanted})")


def _dequeue_factory(many: bool, allow_less: bool):
    def factory(component_types, node_name):
        def kernel(ctx, handle, *n, done):
            _check_types(handle, component_types)
            count = int(n[0]) if n else 1
            if count < 0:
                op = "DequeueUpToOp" if allow_less else "DequeueManyOp"
                raise errors.InvalidArgumentError(
                    None, None, f"{op} requested {count} < 0 elements")
            handle.dequeue(ctx, count, many, allow_less, done, node_name)

        return kernel

    return factory


QueueDequeueV2.kernel(asynchronous=True, factory=True)(_dequeue_factory(False, False))
QueueDequeueManyV2.kernel(asynchronous=True, factory=True)(_dequeue_factory(True, False))
QueueDequeueUpToV2.kernel(asynchronous=True, factory=True)(_dequeue_factory(True, True))


@QueueCloseV2.kernel(ctx=True)
def _close_kernel(ctx, handle, *, cancel_pending_enqueues):
    handle.close(cancel_pending_enqueues)


@QueueSizeV2.kernel(ctx=True)
def _size_kernel(ctx, handle):
    return np.int32(handle.size())


@QueueIsClosedV2.kernel(ctx=True)
def _is_closed_kernel(ctx, handle):
    return np.bool_(handle.is_closed())


# -- the Python classes --------------------------------------------------------------------

def _as_type_list(dtypes) -> list:
    if isinstance(dtypes, (list, tuple)):
        return [dtypes_mod.as_dtype(d) for d in dtypes]
    return [dtypes_mod.as_dtype(dtypes)]


def _as_shape_list(shapes, dtypes, unknown_dim_allowed=False, unknown_rank_allowed=False):
    """Normalises `shapes` to one TensorShape per dtype (None when shapes is None)."""
    if unknown_dim_allowed and (
            not isinstance(shapes, (list, tuple)) or not shapes
            or any(s is None or isinstance(s, (int, Dimension)) for s in shapes)):
        # As TF: partial shapes (a PaddingFIFOQueue's) must come as a list of shapes.
        raise ValueError("When providing partial shapes, a list of shapes must be provided.")
    if shapes is None:
        return None
    if isinstance(shapes, TensorShape):
        shapes = [shapes]
    elif not isinstance(shapes, (list, tuple)):
        raise TypeError(f"shapes must be a list of shapes, got {shapes!r}")
    elif all(s is None or isinstance(s, (int, Dimension)) for s in shapes):
        shapes = [shapes]  # NOTE: as in TF, an empty list is one scalar shape, not none
    shapes = [as_shape(s) for s in shapes]
    if not unknown_dim_allowed and any(not s.is_fully_defined() for s in shapes):
        raise ValueError(f"All shapes must be fully defined: {shapes}")
    if not unknown_rank_allowed and any(s.rank is None for s in shapes):
        raise ValueError(f"All shapes must have a defined rank: {shapes}")
    if len(shapes) != len(dtypes):
        raise ValueError(f"shapes must have the same length as dtypes: {len(shapes)} shapes "
                         f"for {len(dtypes)} dtypes")
    return shapes


def _most_specific_common(a: TensorShape, b: TensorShape) -> TensorShape:
    """The dims two shapes agree on (unknown where they differ; unknown rank if ranks do)."""
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


class QueueBase:
    """Base class for queues: a `queue_ref` handle plus component dtypes, shapes and names.

    Enqueue and dequeue methods build ops; running them blocks (without holding an executor
    thread) while the queue is full or empty.

    Example:
        >>> q = tf.FIFOQueue(10, [tf.int32], shapes=[[]])
        >>> sess.run(q.enqueue_many([[1, 2, 3]]))
        >>> sess.run(q.dequeue_many(2))
        array([1, 2], dtype=int32)
    """

    def __init__(self, dtypes, shapes, names, queue_ref):
        self._dtypes = list(dtypes)
        self._shapes = list(shapes) if shapes is not None else \
            [TensorShape(None) for _ in self._dtypes]
        if names is not None:
            names = list(names)
            if len(names) != len(self._dtypes):
                raise ValueError("Queue names must have the same length as dtypes")
        self._names = names
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]  # op names prefix it (TF: base name)

    @staticmethod
    def from_list(index, queues):
        """A QueueBase on `queues[index]` (`index` may be a tensor), as TF's `from_list`.

        Raises:
            TypeError: `queues` is not a non-empty list of queues, or their dtypes or names
                differ.
        """
        if not queues or not isinstance(queues, list) or \
                not all(isinstance(q, QueueBase) for q in queues):
            raise TypeError("A list of queues expected")
        dtypes = queues[0].dtypes
        if not all(dtypes == q.dtypes for q in queues[1:]):
            raise TypeError("Queues do not have matching component dtypes.")
        names = queues[0].names
        if not all(names == q.names for q in queues[1:]):
            raise TypeError("Queues do not have matching component names.")
        shapes = []
        for per_component in zip(*[q.shapes for q in queues]):
            common = per_component[0]
            for other in per_component[1:]:
                common = _most_specific_common(common, other)
            shapes.append(common)
        refs = concat_split.stack([q.queue_ref for q in queues])
        return QueueBase(dtypes=dtypes, shapes=shapes, names=names,
                         queue_ref=gather_scatter.gather(refs, index))

    @property
    def queue_ref(self):
        return self._queue_ref

    @property
    def name(self) -> str:
        return self._queue_ref.op.name

    @property
    def dtypes(self) -> list:
        return self._dtypes

    @property
    def shapes(self) -> list:
        return self._shapes

    @property
    def names(self):
        return self._names

    def _describe(self) -> str:
        return f"{type(self).__name__} '{self.name}'"

    def _check_enqueue_dtypes(self, vals) -> list:
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError(f"{self._describe()} must have names to enqueue a dictionary")
            if sorted(self._names) != sorted(vals.keys()):
                raise ValueError(f"Keys in dictionary to enqueue do not match names of Queue. "
                                 f"Dictionary: {sorted(vals.keys())}, Queue: "
                                 f"{sorted(self._names)}")
            vals = [vals[k] for k in self._names]
        else:
            if self._names:
                raise ValueError(f"You must enqueue a dictionary in a Queue with names "
                                 f"({self._describe()})")
            if not isinstance(vals, (list, tuple)):
                vals = [vals]
        # NOTE: as TF, too few values build an op that the kernel refuses (run time); too many
        # fail here (TF drops the extra values silently).
        if len(vals) > len(self._dtypes):
            raise ValueError(f"{self._describe()} has {len(self._dtypes)} components, but "
                             f"{len(vals)} values were given to enqueue")
        tensors = []
        for i, (val, dtype) in enumerate(zip(vals, self._dtypes)):
            try:
                tensors.append(convert_to_tensor(val, dtype=dtype, name=f"component_{i}"))
            except (TypeError, ValueError) as err:
                raise type(err)(f"Enqueue to {self._describe()}: component {i} must be "
                                f"{dtype.name}: {err}") from None
        return tensors

    def _check_shapes(self, tensors, many: bool) -> None:
        batch = None
        for i, (tensor, shape) in enumerate(zip(tensors, self._shapes)):
            got = tensor.shape
            if many and got.rank is not None:
                if got.rank < 1:
                    raise ValueError(f"Shape {got} must have rank at least 1 (enqueue_many to "
                                     f"{self._describe()}, component {i})")
                first = got._dim_list[0]
                if batch is not None and first is not None and first != batch:
                    raise ValueError(f"enqueue_many to {self._describe()}: component {i} has "
                                     f"{first} elements, an earlier component has {batch}")
                batch = first if first is not None else batch
                got = got[1:]
            elif many:
                continue
            if not got.is_compatible_with(shape):
                raise ValueError(f"Enqueue to {self._describe()}: component {i} has shape "
                                 f"{got}, incompatible with the queue's shape {shape}")

    def _dequeue_return_value(self, tensors):
        if self._names:
            return dict(zip(self._names, tensors))
        if len(tensors) == 1:
            return tensors[0]
        return list(tensors)

    def enqueue(self, vals, name=None):
        """Enqueues one element (a tensor, a list/tuple of tensors, or a dict when named)."""
        graph = graph_mod.get_default_graph()
        with graph.name_scope(name or f"{self._name}_enqueue") as scope:
            tensors = self._check_enqueue_dtypes(vals)
            self._check_shapes(tensors, many=False)
            return QueueEnqueueV2(self._queue_ref, tensors, name=scope)

    def enqueue_many(self, vals, name=None):
        """Enqueues elements sliced from the 0th dimension of each component."""
        graph = graph_mod.get_default_graph()
        with graph.name_scope(name or f"{self._name}_EnqueueMany") as scope:
            tensors = self._check_enqueue_dtypes(vals)
            self._check_shapes(tensors, many=True)
            return QueueEnqueueManyV2(self._queue_ref, tensors, name=scope)

    def dequeue(self, name=None):
        """Dequeues one element; blocks while the queue is empty."""
        outputs = QueueDequeueV2(self._queue_ref, component_types=self._dtypes,
                                 name=name or f"{self._name}_Dequeue")
        for tensor, shape in zip(outputs, self._shapes):
            tensor.set_shape(shape)
        return self._dequeue_return_value(outputs)

    def _batched(self, op_def, n, name, known_batch: bool):
        outputs = op_def(self._queue_ref, n, component_types=self._dtypes, name=name)
        batch = None
        if known_batch:
            value = constant_value(outputs[0].op.inputs[1])
            batch = int(value) if value is not None else None
        for tensor, shape in zip(outputs, self._shapes):
            tensor.set_shape(TensorShape([batch]).concatenate(shape))
        return self._dequeue_return_value(outputs)

    def dequeue_many(self, n, name=None):
        """Dequeues and concatenates `n` elements; OutOfRangeError if the queue closes first."""
        return self._batched(QueueDequeueManyV2, n, name or f"{self._name}_DequeueMany", True)

    def dequeue_up_to(self, n, name=None):
        """Like dequeue_many, but after close returns the remaining (fewer than n) elements."""
        return self._batched(QueueDequeueUpToV2, n, name or f"{self._name}_DequeueUpTo", False)

    def close(self, cancel_pending_enqueues=False, name=None):
        """Closes the queue: later enqueues fail; pending ones are cancelled if asked."""
        return QueueCloseV2(self._queue_ref, cancel_pending_enqueues=cancel_pending_enqueues,
                            name=name or f"{self._name}_Close")

    def is_closed(self, name=None):
        return QueueIsClosedV2(self._queue_ref, name=name or f"{self._name}_IsClosed")

    def size(self, name=None):
        """The number of elements in the queue (an int32 scalar tensor)."""
        return QueueSizeV2(self._queue_ref, name=name or f"{self._name}_Size")


def _attr_shapes(shapes):
    return [] if shapes is None else shapes


class FIFOQueue(QueueBase):
    """A queue that dequeues elements in first-in first-out order."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes)
        ref = FIFOQueueV2(component_types=dtypes, shapes=_attr_shapes(shapes), capacity=capacity,
                          shared_name=shared_name or "", name=name)
        super().__init__(dtypes, shapes, names, ref)


class PaddingFIFOQueue(QueueBase):
    """A FIFO queue whose dequeue_many pads variable-size components with zeros."""

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None,
                 name="padding_fifo_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes, unknown_dim_allowed=True)
        if len(shapes) != len(dtypes):
            raise ValueError(f"Shapes must be provided for all components, but received "
                             f"{len(dtypes)} dtypes and {len(shapes)} shapes.")
        ref = PaddingFIFOQueueV2(component_types=dtypes, shapes=shapes, capacity=capacity,
                                 shared_name=shared_name or "", name=name)
        super().__init__(dtypes, shapes, names, ref)


class RandomShuffleQueue(QueueBase):
    """A queue that dequeues elements in random order, keeping `min_after_dequeue` elements
    buffered (until it is closed) so that the order mixes well."""

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None,
                 shared_name=None, name="random_shuffle_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes)
        seed1, seed2 = random_seed.get_seed(seed)
        if seed1 is None and seed2 is None:
            seed1, seed2 = 0, 0
        elif seed is None and shared_name:
            # Queues sharing a name must shuffle alike, whatever their op creation order.
            seed2 = zlib.crc32(shared_name.encode()) & 0x7FFFFFFF
        ref = RandomShuffleQueueV2(component_types=dtypes, shapes=_attr_shapes(shapes),
                                   capacity=capacity, min_after_dequeue=min_after_dequeue,
                                   seed=seed1, seed2=seed2, shared_name=shared_name or "",
                                   name=name)
        super().__init__(dtypes, shapes, names, ref)


class PriorityQueue(QueueBase):
    """A queue that dequeues the element with the smallest int64 priority first.

    Each element's first component is its scalar int64 priority, followed by `types`.
    """

    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None,
                 name="priority_queue"):
        types = _as_type_list(types)
        shapes = _as_shape_list(shapes, types)
        ref = PriorityQueueV2(component_types=types, shapes=_attr_shapes(shapes),
                              capacity=capacity, shared_name=shared_name or "", name=name)
        full_types = [dtypes_mod.int64] + types
        full_shapes = [TensorShape([])] + list(shapes) if shapes is not None else None
        super().__init__(full_types, full_shapes, names, ref)
