"""Pruning: the ops a step needs for its fetches and targets, given its feeds.

A pure function of the graph: feeding a tensor cuts its producer off (unless something else
needs that producer); control inputs are followed; NextIteration back edges are ordinary inputs
here, so a needed loop is kept whole.
"""

from __future__ import annotations

from tensorflux.framework import errors
from tensorflux.framework.op_def import get_op_def
from tensorflux.runtime.graph_ir import Node, nodes_from_ops


def prune_ops(fetch_tensors, target_ops, fed) -> list:
    """Returns the Operations needed, in creation order."""
    needed = set()
    stack = [t.op for t in fetch_tensors if t not in fed] + list(target_ops)
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        for tensor in op._inputs:
            if tensor not in fed:
                stack.append(tensor.op)
        stack.extend(c for c in op._control_inputs if not _fed_placeholder(c, fed))
    return sorted(needed, key=lambda op: op._id)


def _fed_placeholder(op, fed) -> bool:
    """A control input on a fed Placeholder waits for the feed, which is there when the step
    starts (TF moves such edges onto the feed): the Placeholder itself never runs."""
    return op._type in ("Placeholder", "PlaceholderV2") and op._outputs[0] in fed


def build_step_graph(graph, feeds, fetches, targets):
    """Prunes `graph` and returns (nodes, fetch_points, arg_nodes).

    `feeds` are Tensors (in feed order), `fetches` Tensors, `targets` Operations. Each fed
    tensor becomes an `_Arg` node whose value is the feed; `fetch_points` are (Node, index).

    Raises:
        InvalidArgumentError: a Placeholder the step needs is not fed (names it).
    """
    fed = set(feeds)
    ops = prune_ops(fetches, targets, fed)
    arg_def = get_op_def("_Arg")
    args = {}
    for index, tensor in enumerate(feeds):
        args[tensor] = Node(f"_arg_{tensor.op.name}_{tensor.value_index}_{index}", "_Arg",
                            {"T": tensor.dtype.base_dtype, "index": index}, [], [],
                            tensor.op.device, [tensor.dtype.base_dtype], [],
                            tensor.op._location, None, arg_def)
    for op in ops:
        if op._type in ("Placeholder", "PlaceholderV2"):
            shape = op._attrs.get("shape")
            shape_text = "" if shape is None or shape.ndims is None else \
                f" and shape {shape.as_list()}".replace("None", "?")
            raise errors.InvalidArgumentError(
                None, op, f"You must feed a value for placeholder tensor '{op.name}' with dtype "
                f"{op._attrs['dtype'].name}{shape_text}\n\t [[node {op.name} (defined at "
                f"{op.location})]]")
    by_op = nodes_from_ops(ops, args)
    nodes = list(by_op.values()) + list(args.values())
    fetch_points = [(args[t], 0) if t in args else (by_op[t.op], t.value_index)
                    for t in fetches]
    target_nodes = [by_op[op] for op in targets]
    return nodes, fetch_points, target_nodes
