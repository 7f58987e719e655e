"""Iterators over datasets: stateful resource ops in the graph (TF1 `tf.data.Iterator`).

`IteratorV2` (and `OneShotIterator`) output a handle to an `IteratorResource` living in the
device's resource manager, one per session (or shared by `shared_name`). `MakeIterator` takes
the tensors the dataset captures as inputs, so running an initializer with a `feed_dict`
starts a new pass over the dataset with those values; running it again restarts it.
`IteratorGetNext` returns the next element, `OutOfRangeError` at the end and
`FailedPreconditionError` before initialization. The dataset object itself stays in Python:
the ops refer to it by `dataset_id` (the graph keeps it alive).
"""

from __future__ import annotations

import itertools
import threading
import weakref

import numpy as np

from tensorflux.data import structure
from tensorflux.data.dataset_ops import Dataset, ElementError, RunContext, start
from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.runtime.resource_mgr import DEFAULT_CONTAINER

_IDS = itertools.count()
_DATASETS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_TYPES = ["output_types: list(type) >= 1", "output_shapes: list(shape) >= 1"]
_SHARED = ["container: string = ''", "shared_name: string = ''"]
GLOBAL_ITERATORS = "iterators"  # TF's collection of iterator resource handles (for saving)


class _Registered:
    """A dataset referred to by an op attr, with its one-shot capture values (if any)."""

    def __init__(self, dataset, constants=None):
        self.dataset = dataset
        self.constants = constants


def _register(dataset, constants=None):
    entry = _Registered(dataset, constants)
    key = next(_IDS)
    _DATASETS[key] = entry
    return key, entry


def _lookup(dataset_id: int) -> _Registered:
    entry = _DATASETS.get(dataset_id)
    if entry is None:
        raise errors.NotFoundError(None, None, f"No tf.data dataset with id {dataset_id} in this "
                                   "process (graphs holding datasets cannot move between "
                                   "processes)")
    return entry


class IteratorResource:
    """One iterator's position in a dataset. Contract: `get_next` calls are serialized."""

    def __init__(self, name: str, types, shapes, container: str = ""):
        self.name = name
        self.container = container or DEFAULT_CONTAINER
        self.types = tuple(types)
        self.shapes = tuple(shapes)
        self._lock = threading.Lock()  # serializes get_next
        self._guard = threading.Lock()  # guards the fields below; never held across next()
        self._elements = None
        self._ctx = None
        self._busy = False  # a get_next is inside next(elements)
        self._retired = []  # pipelines replaced during that get_next: it releases them
        self._closed = False
        self.dataset = None  # the dataset and captured values of the last initialization
        self.values = None
        self.produced = 0  # elements produced since then (what a saved state skips)

    def initialize(self, dataset: Dataset, values: dict, seeds=(), skip: int = 0) -> None:
        """Starts the pipeline over. Never waits for a get_next in progress: that call ends
        on the old pipeline and releases it. `seeds` replays the random seeds of a saved
        state and `skip` drops its first elements (see `iterator_state`)."""
        ctx = RunContext(values, {"replay_seeds": list(seeds)} if seeds else None)
        elements = start(dataset, ctx)
        produced = 0
        try:
            for _ in range(skip):
                next(elements)
                produced += 1
        except StopIteration:
            pass
        except BaseException:
            _release(elements, ctx)
            raise
        with self._guard:
            old = self._elements, self._ctx
            self._elements, self._ctx = elements, ctx
            self.dataset, self.values, self.produced = dataset, values, produced
            if self._closed:  # initialized after its session closed: drop at once
                self._elements = self._ctx = None
                old = (elements, ctx)
            elif self._busy:
                self._retired.append(old)
                old = (None, None)
        _release(*old)

    def get_next(self):
        with self._lock:
            with self._guard:
                elements = self._elements
                if elements is None:
                    raise self._unavailable()
                self._busy = True
            try:
                element = next(elements)
                self.produced += 1
            except StopIteration:
                raise errors.OutOfRangeError(None, None, "End of sequence") from None
            finally:
                with self._guard:
                    self._busy = False
                    retired, self._retired = self._retired, []
                    if self._closed:  # closed while we waited: release the pipeline here
                        retired.append((self._elements, self._ctx))
                        self._elements = self._ctx = None
                for old in retired:
                    _release(*old)
        if type(element) is ElementError:
            raise element.error
        return element[0] if len(element) == 1 else tuple(element)

    def state(self):
        """(dataset, captured values, elements produced, seeds drawn) of the current pass.

        Raises:
            FailedPreconditionError: the iterator is not initialized (or closed).
        """
        with self._lock:
            with self._guard:
                if self._elements is None:
                    raise self._unavailable()
                drawn = list(self._ctx.state.get("drawn_seeds", ()))
                return self.dataset, self.values, self.produced, drawn

    def _unavailable(self):
        if self._closed:
            return errors.CancelledError(None, None, f"Iterator {self.name!r} was closed with "
                                         "its session or container.")
        return errors.FailedPreconditionError(
            None, None, "GetNext() failed because the iterator has not been "
            "initialized. Ensure that you have run the initializer operation for this "
            "iterator before getting the next element.")

    def close_resource(self) -> None:
        """Releases the pipeline (its threads, open files). Never waits for a get_next in
        progress (a map function or generator may block for long): that call releases it
        when its element arrives."""
        with self._guard:
            self._closed = True
            if self._busy:
                return
            old = self._elements, self._ctx
            self._elements = self._ctx = None
        _release(*old)


def _release(elements, ctx) -> None:
    if elements is not None:
        elements.close()
    if ctx is not None:
        ctx.close()


def _handle_shape(*args, **_):
    return TensorShape([])


IteratorV2 = define_op("IteratorV2", outputs=["handle: resource"],
                       attrs=["shared_name: string", "container: string"] + _TYPES,
                       stateful=True, differentiable=False)
OneShotIterator = define_op("OneShotIterator", outputs=["handle: resource"],
                            attrs=["dataset_id: int"] + _TYPES + _SHARED,
                            stateful=True, differentiable=False)
MakeIterator = define_op("MakeIterator", inputs=["iterator: resource", "captured: Tcaptured"],
                         attrs=["Tcaptured: list(type) >= 0 = []", "dataset_id: int"],
                         stateful=True, differentiable=False)
IteratorGetNext = define_op("IteratorGetNext", inputs=["iterator: resource"],
                            outputs=["components: output_types"], attrs=_TYPES,
                            stateful=True, differentiable=False)
IteratorToStringHandle = define_op("IteratorToStringHandle", inputs=["resource_handle: resource"],
                                   outputs=["string_handle: string"], stateful=True,
                                   differentiable=False)
IteratorFromStringHandleV2 = define_op(
    "IteratorFromStringHandleV2", inputs=["string_handle: string"],
    outputs=["resource_handle: resource"],
    attrs=["output_types: list(type) >= 0 = []", "output_shapes: list(shape) >= 0 = []"],
    stateful=True, differentiable=False)
DatasetToSingleElement = define_op(
    "DatasetToSingleElement", inputs=["captured: Tcaptured"], outputs=["components: output_types"],
    attrs=["Tcaptured: list(type) >= 0 = []", "dataset_id: int"] + _TYPES, stateful=True,
    differentiable=False)
IteratorV2.shape_fn(_handle_shape)
IteratorToStringHandle.shape_fn(_handle_shape)
OneShotIterator.shape_fn(_handle_shape)


@MakeIterator.shape_fn
def _make_iterator_shape(iterator, *captured):
    return []


@IteratorFromStringHandleV2.shape_fn
def _from_string_handle_shape(string_handle):
    string_handle.with_rank(0)
    return TensorShape([])


@IteratorGetNext.shape_fn
def _get_next_shape(iterator, *, output_shapes):
    return [[as_shape(s) for s in output_shapes]]


@DatasetToSingleElement.shape_fn
def _single_element_shape(captured, *, output_shapes):
    return [[as_shape(s) for s in output_shapes]]


def _check_iterator(found, name, types):
    if not isinstance(found, IteratorResource) or found.types != tuple(types):
        raise errors.InvalidArgumentError(None, None, f"Resource '{name}' is not an iterator "
                                          f"producing {[d.name for d in types]}")
    return found


def _resource(ctx, container, name, types, shapes):
    found = ctx.resource_mgr.lookup_or_create(
        container, name, lambda: IteratorResource(name, types, shapes))
    return _check_iterator(found, name, types)


@IteratorV2.kernel(ctx=True, factory=True)
def _iterator_factory(shared_name, container, output_types, output_shapes, node_name):
    name = shared_name or f"_{next(_IDS)}_{node_name}"

    def kernel(ctx):
        return _resource(ctx, container, name, output_types, output_shapes)

    return kernel


@OneShotIterator.kernel(ctx=True, factory=True)
def _one_shot_factory(dataset_id, output_types, output_shapes, container, shared_name,
                      node_name):
    name = shared_name or f"_{next(_IDS)}_{node_name}"
    entry = _lookup(dataset_id)

    def kernel(ctx):
        def make():
            resource = IteratorResource(name, output_types, output_shapes, container)
            resource.initialize(entry.dataset, dict(entry.constants))
            return resource

        return ctx.resource_mgr.lookup_or_create(container, name, make)

    return kernel


@MakeIterator.kernel(ctx=True, factory=True)
def _make_iterator_factory(dataset_id):
    entry = _lookup(dataset_id)
    captures = entry.dataset._all_captures()

    def kernel(ctx, iterator, *values):
        iterator.initialize(entry.dataset, dict(zip(captures, values)))

    return kernel


@IteratorToStringHandle.kernel
def _to_string_handle_kernel(resource_handle):
    out = np.empty((), dtype=object)
    out[()] = f"{resource_handle.container}/{resource_handle.name}".encode()
    return out


@IteratorFromStringHandleV2.kernel(ctx=True)
def _from_string_handle_kernel(ctx, string_handle, *, output_types):
    text = np.asarray(string_handle).item()
    text = text.decode() if isinstance(text, bytes) else str(text)
    container, _, name = text.partition("/")
    if not name:
        raise errors.InvalidArgumentError(None, None, f"Not an iterator string handle: {text!r}")
    found = ctx.resource_mgr.lookup(container, name)
    return _check_iterator(found, name, output_types)


@DatasetToSingleElement.kernel(factory=True)
def _single_element_factory(dataset_id):
    entry = _lookup(dataset_id)
    captures = entry.dataset._all_captures()

    def kernel(*values):
        ctx = RunContext(dict(zip(captures, values)))
        elements = start(entry.dataset, ctx)
        try:
            element = next(elements, None)
            if element is None:
                raise errors.InvalidArgumentError(None, None, "Dataset was empty.")
            if next(elements, None) is not None:
                raise errors.InvalidArgumentError(None, None,
                                                  "Dataset had more than one element.")
        finally:
            _release(elements, ctx)
        if type(element) is ElementError:
            raise element.error
        return element[0] if len(element) == 1 else tuple(element)

    return kernel


@IteratorGetNext.kernel(ctx=True)
def _get_next_kernel(ctx, iterator):
    return iterator.get_next()


# -- the Python API ------------------------------------------------------------------------


class Iterator:
    """An iterator over datasets of one element structure (TF1 `tf.data.Iterator`).

    Example:
        >>> it = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
        >>> x, y = it.get_next()
        >>> sess.run(it.make_initializer(train))
    """

    def __init__(self, handle: Tensor, initializer, types, shapes, template):
        self._handle = handle
        self._initializer = initializer
        self._types = list(types)
        self._shapes = list(shapes)
        self._template = template

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None, output_classes=None):
        """An iterator not bound to a dataset; `make_initializer(dataset)` binds one.
        `output_classes` marks sparse components (`tf.SparseTensor`)."""
        types = [dtypes.as_dtype(t) for t in structure.flatten(output_types)]
        if output_shapes is None:
            shapes = [TensorShape(None)] * len(types)
        else:
            shapes = structure.as_shapes(output_shapes, output_types,
                                         "Iterator.from_structure(): output_shapes")
        template = output_types
        if output_classes is not None:
            types, shapes, template = structure.with_sparse_classes(
                output_types, types, shapes, output_classes,
                "Iterator.from_structure(): output_classes")
        return Iterator._new(types, shapes, template, shared_name)

    @staticmethod
    def _new(types, shapes, template, shared_name=None):
        handle = IteratorV2(shared_name=shared_name or "", container="", output_types=types,
                            output_shapes=shapes, name="Iterator")
        handle.graph.add_to_collection(GLOBAL_ITERATORS, handle)
        return Iterator(handle, None, types, shapes, template)

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None,
                           output_classes=None):
        """An iterator that reads from whichever iterator `string_handle` (a fed scalar string,
        from another iterator's `string_handle()`) names at each step. `output_classes`
        marks sparse components (`tf.SparseTensor`)."""
        types = [dtypes.as_dtype(t) for t in structure.flatten(output_types)]
        if output_shapes is None:
            shapes = [TensorShape(None)] * len(types)
        else:
            shapes = structure.as_shapes(output_shapes, output_types,
                                         "Iterator.from_string_handle(): output_shapes")
        template = output_types
        if output_classes is not None:
            types, shapes, template = structure.with_sparse_classes(
                output_types, types, shapes, output_classes,
                "Iterator.from_string_handle(): output_classes")
        handle = IteratorFromStringHandleV2(string_handle, output_types=types,
                                            output_shapes=shapes)
        return Iterator(handle, None, types, shapes, template)

    def string_handle(self, name=None) -> Tensor:
        """A scalar string naming this iterator's resource, to feed `from_string_handle`."""
        return IteratorToStringHandle(self._handle, name=name)

    @property
    def initializer(self):
        """The op that (re)starts this iterator on its dataset."""
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer

    def make_initializer(self, dataset: Dataset, name=None):
        """An op that starts this iterator on `dataset` (same types, compatible shapes)."""
        if not isinstance(dataset, Dataset):
            raise TypeError(f"make_initializer() expects a Dataset, got {dataset!r}")
        if dataset._types != self._types or not structure.same_nesting(dataset._template,
                                                                        self._template):
            raise TypeError(f"Expected output types {self.output_types} but got dataset with "
                            f"output types {dataset.output_types}.")
        if not all(mine.is_compatible_with(theirs)
                   for mine, theirs in zip(self._shapes, dataset._shapes)):
            raise TypeError(f"Expected output shapes compatible with {self.output_shapes} but "
                            f"got dataset with output shapes {dataset.output_shapes}.")
        captures = _same_graph_captures(dataset)
        dataset_id, entry = _register(dataset)
        op = MakeIterator(self._handle, captures, dataset_id=dataset_id,
                          name=name or "MakeIterator")
        op._tfx_dataset_entry = entry  # the graph keeps the dataset alive for the kernel
        if self._handle.op.type == "IteratorV2":  # the dataset a saved state restores on:
            # with several initializers, the one that last ran in the session (id -1)
            first = not hasattr(self._handle.op, "_tfx_dataset_id")
            self._handle.op._tfx_dataset_id = dataset_id if first else -1
            self._handle.op._tfx_dataset_entry = entry if first else None
        return op

    def get_next(self, name=None):
        """The next element: a nested structure of tensors; OutOfRangeError at the end."""
        outputs = IteratorGetNext(self._handle, output_types=self._types,
                                  output_shapes=self._shapes, name=name or "IteratorGetNext")
        flat = [outputs] if isinstance(outputs, Tensor) else list(outputs)
        return structure.pack_element(self._template, flat)

    @property
    def output_types(self):
        return structure.pack_types(self._template, self._types)

    @property
    def output_shapes(self):
        return structure.pack_shapes(self._template, self._shapes)

    @property
    def output_classes(self):
        return structure.pack_classes(self._template, len(self._types))


def make_initializable_iterator(dataset: Dataset, shared_name=None) -> Iterator:
    """An iterator over `dataset` whose `initializer` must run first (and may run again,
    with new feeds for the placeholders the dataset uses)."""
    iterator = Iterator._new(dataset._types, dataset._shapes, dataset._template, shared_name)
    iterator._initializer = iterator.make_initializer(dataset)
    return iterator


def make_one_shot_iterator(dataset: Dataset) -> Iterator:
    """An iterator that initializes itself on first use; the dataset may only capture
    constants (use `make_initializable_iterator` for placeholders)."""
    if not isinstance(dataset, Dataset):
        raise TypeError(f"make_one_shot_iterator() expects a Dataset, got {dataset!r}")
    constants = {}
    for tensor in dataset._all_captures():
        value = constant_value(tensor)
        if value is None:
            raise ValueError(f"Failed to capture tensor '{tensor.name}' ({tensor.op.type}) in a "
                             "one-shot iterator: only constants can be captured; use "
                             "make_initializable_iterator() for placeholders and variables.")
        constants[tensor] = value
    dataset_id, entry = _register(dataset, constants)
    handle = OneShotIterator(dataset_id=dataset_id, output_types=dataset._types,
                             output_shapes=dataset._shapes, name="OneShotIterator")
    handle.op._tfx_dataset_entry = entry
    handle.op._tfx_dataset_id = dataset_id
    handle.graph.add_to_collection(GLOBAL_ITERATORS, handle)
    return Iterator(handle, None, dataset._types, dataset._shapes, dataset._template)


def get_single_element(dataset: Dataset):
    """The only element of `dataset` as a nested structure of tensors, computed at each run
    (InvalidArgumentError when the dataset is empty or has more than one element).

    Example:
        >>> features = tf.data.experimental.get_single_element(ds.batch(1000))
    """
    if not isinstance(dataset, Dataset):
        raise TypeError(f"get_single_element() expects a Dataset, got {dataset!r}")
    captures = _same_graph_captures(dataset)
    dataset_id, entry = _register(dataset)
    outputs = DatasetToSingleElement(captures, dataset_id=dataset_id,
                                     output_types=dataset._types,
                                     output_shapes=dataset._shapes)
    flat = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    flat[0].op._tfx_dataset_entry = entry
    return structure.pack_element(dataset._template, flat)


def _same_graph_captures(dataset: Dataset) -> list:
    graph = graph_mod.get_default_graph()
    captures = dataset._all_captures()
    for tensor in captures:
        if tensor.graph is not graph:
            raise ValueError(f"The dataset uses tensor '{tensor.name}' of another graph; "
                             "build the dataset in the graph that uses it.")
    return captures


def get_output_types(dataset_or_iterator):
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator):
    return dataset_or_iterator.output_classes


__all__ = ["Iterator", "make_initializable_iterator", "make_one_shot_iterator",
           "get_output_types", "get_output_shapes", "get_output_classes"]
