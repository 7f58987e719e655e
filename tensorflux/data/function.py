"""User functions of `tf.data` transformations, traced once into a private graph.

Contract: `TracedFunction(fn, element_types, element_shapes, element_template, ...)` calls `fn`
exactly once, at dataset construction, on placeholders standing for one element, inside a
private `Graph` that inherits the outer graph's random seed. Tensors `fn` uses from another graph
are captured by value when they are constants (folded with `constant_value`); any other tensor
of an enclosing graph (a placeholder, a lookup table's resource) becomes a dataset capture: an
initializable iterator's input, evaluated (fed) when the iterator is initialized, while a
one-shot iterator refuses it. Per element, `run(ctx, flat_values)` executes the graph
with a cached callable of a private Session (planned once per session). A function with
stateful ops (random ops) gets a fresh session per iterator initialization, kept in
`ctx.state`: its random sequence advances from element to element and restarts when the
iterator is initialized again, as in TF. A failure inside the function is re-raised as the same
`tf.errors` class, naming the function and (through the inner error) the failing op.
"""

from __future__ import annotations

import threading

import numpy as np

from tensorflux.data import structure
from tensorflux.framework import errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.ops.array import constant, placeholder
from tensorflux.runtime.session import Session


class FunctionGraph(graph_mod.Graph):
    """A private graph for one tf.data function.

    Captured constants are copied in by value. A tensor of the *enclosing function's* graph
    (e.g. the key of a `group_by_window` reduce function, used in a nested `map`) becomes a
    placeholder here, fed with the value the enclosing function computed (`external`).
    """

    def __init__(self, outer, what: str):
        super().__init__()
        self.outer_graph = outer
        self.what = what
        self.seed = outer.seed
        self._captures: dict = {}
        self.external: dict = {}

    def _capture_tensor(self, tensor: Tensor) -> Tensor:
        found = self._captures.get(tensor)
        if found is not None:
            return found

        value = constant_value(tensor)
        name = f"captured_{tensor.op.name.replace('/', '_')}"
        if value is not None:
            with self.control_dependencies(None):
                copied = constant(value, dtype=tensor.dtype.base_dtype, name=name)
        elif tensor.graph is self.outer_graph or isinstance(self.outer_graph, FunctionGraph):
            # A tensor of the enclosing graph (a placeholder, a lookup table's resource, a
            # value of an enclosing function): a placeholder here, fed the value the dataset
            # captured when its iterator is initialized. A tensor from further out is first
            # captured by the enclosing function (which raises if it cannot reach it).
            via = tensor if tensor.graph is self.outer_graph \
                else self.outer_graph._capture_tensor(tensor)
            with self.as_default(), self.control_dependencies(None):  # maybe not the default
                copied = placeholder(tensor.dtype.base_dtype, tensor.shape, name=name)
            self.external[via] = copied
        else:
            raise ValueError(
                f"The function passed to {self.what} uses tensor '{tensor.name}' ({tensor.op.type})"
                " from a graph that does not enclose the dataset's.")
        self._captures[tensor] = copied
        return copied


def _output_tensor(graph: FunctionGraph, value) -> Tensor:
    if isinstance(value, Tensor):
        return value if value.graph is graph else graph._capture_tensor(value)
    return convert_to_tensor(value)


class TracedFunction:
    """`fn` traced once on one element (see the module docstring).

    Attributes:
        graph: the private FunctionGraph.
        result: what `fn` returned, with list results turned into tuples.
        output_template / output_types / output_shapes: for tensor-structured results.
    """

    def __init__(self, fn, types, shapes, template, what: str, tensor_result: bool = True):
        if not callable(fn):
            raise TypeError(f"{what} expects a callable, got {fn!r}")
        outer = graph_mod.get_default_graph()
        self.what = what
        self.name = getattr(fn, "__name__", type(fn).__name__)
        self.graph = FunctionGraph(outer, what)

        with self.graph.as_default():
            self.inputs = [placeholder(dtype, shape, name=f"arg{i}")
                           for i, (dtype, shape) in enumerate(zip(types, shapes))]
            if hasattr(template, "make_args"):  # a window: its structure of datasets
                args = template.make_args(self.inputs[0])
            else:
                args = structure.pack_element(template, self.inputs)
            if type(args) is tuple:
                result = fn(*args)
            else:
                result = fn(args)
            if isinstance(result, list):
                result = tuple(result)
            self.result = result
            if tensor_result:
                try:
                    converted = structure.map_structure(
                        lambda leaf: _output_tensor(self.graph, leaf),
                        structure.sparse_as_nodes(result, what))
                except (TypeError, ValueError) as err:
                    raise TypeError(f"The function passed to {what} must return tensors or "
                                    f"values convertible to tensors: {err}") from None
                self.output_template = converted
                self.outputs = structure.flatten(converted)
                self.output_types, self.output_shapes = structure.element_specs(converted)
        self.captures = list(self.graph.external)  # tensors of the enclosing function
        # A function with stateful ops (random ops) starts afresh at each iterator
        # initialization, as in TF; a stateless one shares one session for all of them.
        self.stateful = any(op.op_def.is_stateful and op.type != "Placeholder"
                            for op in self.graph.get_operations())
        self._lock = threading.Lock()
        self._shared: dict = {}

    def fetch(self, fetches: list):
        """Plans `fetches` (tensors of the private graph) once per session; returns
        `run(ctx, flat_values)` where `ctx.state` holds the per-initialization session."""
        outer = list(self.graph.external)
        feeds = self.inputs + [self.graph.external[t] for t in outer]
        fed = {t: i for i, t in enumerate(feeds)}
        if all(t in fed for t in fetches):  # nothing to compute: a pass-through
            positions = [fed[t] for t in fetches]
            return lambda ctx, values: [(list(values) + [ctx.values[t] for t in outer])[p]
                                        for p in positions]
        fetches = list(fetches)
        key = object()  # this fetch list's callable, in a shared or per-initialization table

        def run(ctx, values):
            sessions = ctx.state.setdefault("sessions", {}) if self.stateful else self._shared
            entry = sessions.get(key)
            if entry is None:
                with self._lock:
                    entry = sessions.get(key)
                    if entry is None:
                        session = Session(graph=self.graph)
                        entry = sessions[key] = (
                            session, session.make_callable(fetches, feeds))
            try:
                return entry[1](*values, *[ctx.values[t] for t in outer])
            except errors.OpError as err:
                raise type(err)(None, None, f"{err.message}\n\t [[in the function "
                                f"'{self.name}' passed to {self.what}]]") from err

        return run

    def runner(self):
        """`run(ctx, flat_values) -> tuple of ndarrays` for the traced outputs."""
        run = self.fetch(self.outputs)
        types, shapes = self.output_types, self.output_shapes
        where = f"the function '{self.name}' passed to {self.what}"

        def call(ctx, values):
            # Arrays come from kernels that honour the static types; 0-d results arrive as
            # NumPy scalars or bytes and are converted (and checked) here.
            return tuple(value if type(value) is np.ndarray else
                         structure.check_value(value, dtype, shape, where)
                         for value, dtype, shape in zip(run(ctx, values), types, shapes))

        return call


def as_bool(value) -> bool:
    return bool(np.asarray(value))


__all__: list = []
