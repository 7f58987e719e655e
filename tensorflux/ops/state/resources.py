"""Graph resources and their initialization (TF1 `tensorflow/python/ops/resources`).

A resource here is anything with an initializing op: a `create` op (TF's resource-handle
convention), else an `initializer` op (variables, resource variables). The RESOURCES and
LOCAL_RESOURCES collections list the graph's shared and local ones.
"""
from __future__ import annotations

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.ops.control_flow import primitives as control_flow_ops


def shared_resources() -> list:
    """The graph's RESOURCES collection."""
    return graph_mod.get_default_graph().get_collection(GraphKeys.RESOURCES)


def local_resources() -> list:
    """The graph's LOCAL_RESOURCES collection."""
    return graph_mod.get_default_graph().get_collection(GraphKeys.LOCAL_RESOURCES)


def _create_op(resource):
    for attr in ("create", "initializer"):
        op = getattr(resource, attr, None)
        if op is not None:
            return op
    raise TypeError(f"initialize_resources: {resource!r} has neither a 'create' nor an "
                    f"'initializer' op")


def initialize_resources(resource_list, name="init"):
    """One op running the initializing op of every resource in `resource_list`.

    Args:
        resource_list: resources (e.g. ResourceVariables); an empty list gives a no-op.
        name: the op's name.

    Returns:
        An Operation.

    Raises:
        TypeError: an element has no initializing op.
    """
    ops = [_create_op(r) for r in resource_list]
    if not ops:
        return control_flow_ops.no_op(name=name)
    return control_flow_ops.group(*ops, name=name)


__all__ = ["initialize_resources", "local_resources", "shared_resources"]
