"""`tf.contrib.util`: tensor protos and the ops a GraphDef uses (TF 1.15), e.g. the
`make_tensor_proto` TF Serving clients build requests with."""

from __future__ import annotations

from tensorflux.framework.tensor_util import constant_value, make_ndarray, make_tensor_proto
from tensorflux.train.meta_graph import op_list_for_types

__all__ = ["constant_value", "make_ndarray", "make_tensor_proto", "ops_used_by_graph_def",
           "stripped_op_list_for_graph"]


def ops_used_by_graph_def(graph_def) -> list:
    """The op types a `GraphDef` uses, its function library's bodies included (the functions
    themselves are not ops), sorted.
    """
    functions = {function.signature.name: function for function in graph_def.library.function}
    used, pending, seen = set(), [node.op for node in graph_def.node], set()
    while pending:
        op_type = pending.pop()
        if op_type in functions:
            if op_type not in seen:
                seen.add(op_type)
                pending.extend(node.op for node in functions[op_type].node_def)
        else:
            used.add(op_type)
    return sorted(used)


def stripped_op_list_for_graph(graph_def):
    """The `OpList` of the registered OpDefs the graph uses (the `stripped_op_list` of a
    MetaGraphDef).

    Raises:
        ValueError: the graph uses an op that is not registered.
    """
    used = ops_used_by_graph_def(graph_def)
    try:
        return op_list_for_types(used)
    except LookupError as e:
        raise ValueError(f"stripped_op_list_for_graph: {e}") from None
