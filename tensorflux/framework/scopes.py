"""TF1's module-level scope functions over the default graph."""

from __future__ import annotations

import contextlib

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor import Operation, Tensor

__all__ = ["name_scope", "control_dependencies", "device", "colocate_with", "container",
           "get_name_scope", "op_scope", "init_scope"]


def _graph_of(values):
    for value in values or ():
        graph = getattr(value, "graph", None)
        if graph is not None and isinstance(value, (Tensor, Operation)) or hasattr(
                value, "_as_graph_element"):
            return graph
    return graph_mod.get_default_graph()


class name_scope:  # noqa: N801 - TF1 name
    """`with tf.name_scope(name, default_name=None, values=None) as scope:` -> "name/"."""

    def __init__(self, name, default_name=None, values=None):
        if name is None and default_name is None and values is not None:
            raise ValueError("At least one of name and default_name must be provided.")
        self._name = default_name if name is None else name
        self._values = values
        self._ctx = None

    @property
    def name(self):
        return self._name

    def __enter__(self) -> str:
        graph = _graph_of(self._values) if self._values else graph_mod.get_default_graph()
        self._graph_ctx = graph.as_default() if graph is not graph_mod.get_default_graph() \
            else None
        if self._graph_ctx is not None:
            self._graph_ctx.__enter__()
        self._ctx = graph.name_scope(self._name)
        return self._ctx.__enter__()

    def __exit__(self, *exc):
        result = self._ctx.__exit__(*exc)
        if self._graph_ctx is not None:
            self._graph_ctx.__exit__(*exc)
        return result


def op_scope(values, name, default_name=None):
    return name_scope(name, default_name, values)


def op_name_scope(name, default):
    """The name scope an op wrapper opens on the default graph: `name`, or `default` when
    `name` is None or empty (`with op_name_scope(name, "Softmax") as scope:` -> "Softmax/")."""
    return graph_mod.get_default_graph().name_scope(name or default)


def get_name_scope() -> str:
    return graph_mod.get_default_graph().get_name_scope()


def control_dependencies(control_inputs):
    """Ops created in the scope run after `control_inputs`."""
    return graph_mod.get_default_graph().control_dependencies(control_inputs)


def device(device_name_or_function):
    """Places ops created in the scope on a device (string, DeviceSpec or function)."""
    return graph_mod.get_default_graph().device(device_name_or_function)


def colocate_with(op, ignore_existing: bool = False):
    return graph_mod.get_default_graph().colocate_with(op, ignore_existing)


def container(container_name: str):
    """Creates stateful ops (variables, queues) in the named resource container."""
    return graph_mod.get_default_graph().container(container_name)


@contextlib.contextmanager
def init_scope():
    """Clears control dependencies and control-flow context (TF1 `tf.init_scope`)."""
    graph = graph_mod.get_default_graph()
    saved_context = graph._control_flow_context
    graph._control_flow_context = None
    try:
        with graph.control_dependencies(None):
            yield
    finally:
        graph._control_flow_context = saved_context
