"""`tf.graph_util` and `tf.train.write_graph`: GraphDef surgery and files.

- `extract_sub_graph(graph_def, dest_nodes)`: the nodes `dest_nodes` need (data and control
  inputs, transitively), in their original order.
- `convert_variables_to_constants(sess, graph_def, output_node_names, ...)`: the subgraph for
  the outputs with every variable replaced by a `Const` holding its current value in `sess`
  (resource variables: their `ReadVariableOp`s become `Identity`s of the constant).
- `remove_training_nodes(graph_def, protected_nodes)`: drops `CheckNumerics` and splices out
  `Identity` nodes, except protected ones, colocation targets, and Identities that have or
  are control inputs.
- `must_run_on_cpu(node, pin_variables_on_cpu)`: TF's hint for ops kept on the host.
- `write_graph(graph_or_graph_def, logdir, name, as_text=True)`: text (protobuf text format)
  or binary, written to a temporary file and renamed.
"""

from __future__ import annotations

import logging

from tensorflux.framework import dtypes
from tensorflux.framework.tensor_util import make_tensor_proto
from tensorflux.protos import graph_pb2, node_def_pb2

__all__ = ["convert_variables_to_constants", "extract_sub_graph", "remove_training_nodes",
           "must_run_on_cpu", "tensor_shape_from_node_def_name"]

# TF1's logger name, which `tf.logging` configures (framework sits below platform).
_logger = logging.getLogger("tensorflow")

_VARIABLE_OPS = frozenset({"Variable", "VariableV2", "VarHandleOp", "AutoReloadVariable"})


def _node_name(text: str) -> str:
    """'^a' and 'a:1' -> 'a'."""
    text = text[1:] if text.startswith("^") else text
    name, sep, index = text.rpartition(":")
    return name if sep and index.isdigit() else text


def _check_graph_def(graph_def):
    if not isinstance(graph_def, graph_pb2.GraphDef):
        raise TypeError(f"graph_def must be a graph_pb2.GraphDef proto, got {type(graph_def)}.")


def _new_graph_def(like, nodes):
    out = graph_pb2.GraphDef()
    out.versions.CopyFrom(like.versions)
    out.library.CopyFrom(like.library)
    out.node.extend(nodes)
    return out


def extract_sub_graph(graph_def, dest_nodes):
    """The part of `graph_def` that `dest_nodes` (node names) depend on.

    Returns:
        A new GraphDef with the needed nodes in their original order.

    Raises:
        TypeError: `graph_def` is not a GraphDef or `dest_nodes` is a single string.
        AssertionError: a destination node is not in the graph (as in TF).

    Example:
        >>> small = tf.graph_util.extract_sub_graph(graph_def, ["loss"])
    """
    _check_graph_def(graph_def)
    if isinstance(dest_nodes, str):
        raise TypeError("dest_nodes must be an iterable of strings.")
    by_name = {node.name: node for node in graph_def.node}
    wanted = [_node_name(d) for d in dest_nodes]
    for name in wanted:
        assert name in by_name, f"{name} is not in graph"
    keep = set()
    stack = list(wanted)
    while stack:
        name = stack.pop()
        if name in keep:
            continue
        keep.add(name)
        node = by_name.get(name)
        if node is None:
            raise ValueError(f"Node '{name}' is an input of the extracted graph but is not in "
                             "graph_def.")
        stack.extend(_node_name(text) for text in node.input)
    return _new_graph_def(graph_def, [n for n in graph_def.node if n.name in keep])


def convert_variables_to_constants(sess, input_graph_def, output_node_names,
                                   variable_names_whitelist=None,
                                   variable_names_blacklist=None):
    """Freezes variables: the subgraph for `output_node_names` with variables as constants.

    Args:
        sess: a session whose variables hold the values to freeze.
        input_graph_def: the GraphDef (usually `sess.graph.as_graph_def()`).
        output_node_names: names of the nodes the frozen graph must compute.
        variable_names_whitelist: convert only these variables (names), when given.
        variable_names_blacklist: never convert these.

    Returns:
        The frozen GraphDef.

    Example:
        >>> frozen = tf.graph_util.convert_variables_to_constants(
        ...     sess, sess.graph.as_graph_def(), ["logits"])
    """

    graph_def = extract_sub_graph(input_graph_def, output_node_names)
    allowed = set(variable_names_whitelist) if variable_names_whitelist is not None else None
    denied = set(variable_names_blacklist or ())
    readers: dict = {}
    for node in graph_def.node:
        if node.op == "ReadVariableOp" and node.input:
            readers.setdefault(_node_name(node.input[0]), node.name)
    to_fetch: dict = {}
    for node in graph_def.node:
        if node.op not in _VARIABLE_OPS or node.name in denied:
            continue
        if allowed is not None and node.name not in allowed:
            continue
        if node.op == "VarHandleOp":
            if node.name in readers:
                to_fetch[node.name] = f"{readers[node.name]}:0"
        else:
            to_fetch[node.name] = f"{node.name}:0"
    names = list(to_fetch)
    values = dict(zip(names, sess.run([to_fetch[n] for n in names]))) if names else {}
    nodes = []
    for node in graph_def.node:
        out = node_def_pb2.NodeDef()
        if node.name in values:
            dtype = dtypes.as_dtype(node.attr["dtype"].type)
            out.name = node.name
            out.op = "Const"
            out.attr["dtype"].type = dtype.as_datatype_enum
            out.attr["value"].tensor.CopyFrom(make_tensor_proto(values[node.name], dtype))
            if node.device:
                out.device = node.device
        elif node.op == "ReadVariableOp" and _node_name(node.input[0]) in values:
            out.name = node.name
            out.op = "Identity"
            out.input.extend(node.input)
            out.attr["T"].type = node.attr["dtype"].type
            if node.device:
                out.device = node.device
        else:
            out.CopyFrom(node)
        nodes.append(out)
    _logger.info("Froze %d variables.", len(values))
    _logger.info("Converted %d variables to const ops.", len(values))
    return _new_graph_def(graph_def, nodes)


def remove_training_nodes(input_graph, protected_nodes=None):
    """Drops CheckNumerics and bypasses Identity nodes that inference does not need.

    Returns:
        A new GraphDef (versions and library are not copied, as in TF).
    """

    protected = set(protected_nodes or ())
    dropped = {n.name for n in input_graph.node if n.op == "CheckNumerics"
               and n.name not in protected}
    # A dropped CheckNumerics passes its input through.
    through = {n.name: n.input[0] for n in input_graph.node if n.name in dropped and n.input}
    kept = []
    for node in input_graph.node:
        if node.name in dropped:
            continue
        copy = node_def_pb2.NodeDef()
        copy.CopyFrom(node)
        del copy.input[:]
        for text in node.input:
            name = _node_name(text)
            while name in through:
                source = through[name]
                text = f"^{_node_name(source)}" if text.startswith("^") else source
                name = _node_name(text)
            if name in dropped:
                continue
            copy.input.append(text)
        kept.append(copy)
    control_sources = set()
    with_controls = set()
    colocated = set()
    for node in kept:
        for text in node.input:
            if text.startswith("^"):
                control_sources.add(text[1:])
                with_controls.add(node.name)
        if "_class" in node.attr:
            for entry in node.attr["_class"].list.s:
                entry = entry.decode()
                if entry.startswith("loc:@"):
                    colocated.add(entry[5:])
    splice = {}
    for node in kept:
        if node.op == "Identity" and node.name not in protected and node.input and \
                node.name not in colocated and node.name not in with_controls and \
                node.name not in control_sources:
            splice[node.name] = node.input[0]
    result = []
    for node in kept:
        if node.name in splice:
            continue
        inputs = []
        for text in node.input:
            control = text.startswith("^")
            name, index = _split(text)
            while name in splice:
                text = splice[name]
                name, inner = _split(text)
                index = inner if index == 0 else index
            inputs.append(f"^{name}" if control else (name if index == 0 else f"{name}:{index}"))
        del node.input[:]
        node.input.extend(inputs)
        result.append(node)
    output = graph_pb2.GraphDef()
    output.node.extend(result)
    return output


def _split(text: str):
    text = text[1:] if text.startswith("^") else text
    name, sep, index = text.rpartition(":")
    if sep and index.isdigit():
        return name, int(index)
    return text, 0


def must_run_on_cpu(node, pin_variables_on_cpu: bool = False) -> bool:
    """True for ops TF keeps on the host: int32/string constants, int32 DynamicStitch and
    Cast from int32, and variables when `pin_variables_on_cpu`."""
    node_def = node.node_def if hasattr(node, "node_def") else node
    op = node_def.op
    if pin_variables_on_cpu and op in _VARIABLE_OPS:
        return True
    if op == "Const":
        return node_def.attr["dtype"].type in (dtypes.string.as_datatype_enum,
                                               dtypes.int32.as_datatype_enum)
    if op in ("DynamicStitch", "ParallelDynamicStitch"):
        return node_def.attr["T"].type == dtypes.int32.as_datatype_enum
    if op == "Cast":
        return node_def.attr["SrcT"].type == dtypes.int32.as_datatype_enum
    return False


def tensor_shape_from_node_def_name(graph, input_name: str):
    """The static shape of tensor `input_name` ("op" means "op:0") in `graph`."""
    if ":" not in input_name:
        input_name = f"{input_name}:0"
    return graph.get_tensor_by_name(input_name).get_shape()
