"""Grouping ops: NoOp, group, tuple, with_dependencies (conditionals and loops come later)."""

from __future__ import annotations

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor import Operation, Tensor

__all__ = ["no_op", "group", "tuple", "with_dependencies"]

NoOp = define_op("NoOp", differentiable=False)


@NoOp.shape_fn
def _no_op_shape():
    return []


@NoOp.kernel
def _no_op_kernel():
    return None


def no_op(name=None):
    """An op that does nothing; useful as a control-dependency anchor."""
    return NoOp(name=name)


def _as_op(item):
    if isinstance(item, Operation):
        return item
    if isinstance(item, Tensor):
        return item.op
    if hasattr(item, "op"):
        return item.op
    raise TypeError(f"Expected a Tensor or Operation, got {item!r}")


def group(*inputs, **kwargs):
    """An op that runs after all `inputs` (TF1 `tf.group`)."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"Unknown keyword arguments: {', '.join(kwargs)}")
    flat = []
    for item in inputs:
        if isinstance(item, (list, tuple)) and not hasattr(item, "op"):
            flat.extend(item)
        elif isinstance(item, dict):
            flat.extend(item.values())
        elif item is not None:
            flat.append(item)
    ops = [_as_op(i) for i in flat]
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "group_deps") as scope:
        with graph.control_dependencies(ops):
            return NoOp(name=scope)


def tuple(tensors, name=None, control_inputs=None):  # noqa: A001 - TF1 name
    """Returns `tensors` gated so that none is available before all are computed."""
    from tensorflux.ops.array_ops import identity

    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "tuple") as scope:
        deps = [t for t in tensors if t is not None]
        gate = group(*deps, *(control_inputs or []))
        del scope
        result = []
        for t in tensors:
            if t is None:
                result.append(None)
                continue
            with graph.control_dependencies([gate]):
                result.append(identity(t))
        return result


def with_dependencies(dependencies, output_tensor, name=None):
    """Returns `output_tensor`'s value, produced only after `dependencies` ran."""
    from tensorflux.ops.array_ops import identity

    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "control_dependency") as scope:
        with graph.control_dependencies(dependencies):
            return identity(output_tensor, name=scope)
