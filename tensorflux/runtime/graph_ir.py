"""The runtime's view of a graph: plain `Node`s that pipelines copy and rewrite.

The client graph is read once per signature into Nodes; prune, rewrites, placement and
partitioning then work on Nodes (adding `_Send`/`_Recv`), never on the user's Graph. A Node's
`inputs` are `(Node, output_index)` pairs; `control_inputs` are Nodes.
"""

from __future__ import annotations

from tensorflux.framework import errors, function
from tensorflux.framework.graph import Graph
from tensorflux.framework.graph_validation import _split_input, validate_graph_def
from tensorflux.framework.op_builder import _output_types
from tensorflux.framework.op_def import get_op_def


class Node:
    """One node of a runtime graph."""

    __slots__ = ("name", "op", "op_def", "attrs", "inputs", "control_inputs", "device",
                 "assigned_device", "location", "output_dtypes", "source_op", "input_dtypes")

    def __init__(self, name: str, op: str, attrs: dict, inputs: list, control_inputs: list,
                 device: str = "", output_dtypes=None, input_dtypes=None, location=None,
                 source_op=None, op_def=None):
        self.name = name
        self.op = op
        self.op_def = op_def or get_op_def(op)
        self.attrs = attrs
        self.inputs = inputs
        self.control_inputs = control_inputs
        self.device = device
        self.assigned_device = ""
        self.location = location
        self.output_dtypes = output_dtypes or []
        self.input_dtypes = input_dtypes or []
        self.source_op = source_op

    def __repr__(self) -> str:
        return f"Node({self.name!r}, {self.op})"

    def describe(self) -> str:
        """A stable one-line dump: name = op(inputs) @device {attrs}."""
        ins = [f"{n.name}:{i}" if i else n.name for n, i in self.inputs]
        ins += [f"^{n.name}" for n in self.control_inputs]
        attrs = ", ".join(f"{k}={_short(v)}" for k, v in sorted(self.attrs.items())
                          if not k.startswith("_") or k == "_class")
        device = self.assigned_device or self.device
        return f"{self.name} = {self.op}({', '.join(ins)}) @{device or '?'} {{{attrs}}}"

    def where(self) -> str:
        if self.location:
            return f"{self.location[0]}:{self.location[1]}"
        return "<unknown>"


def _short(value) -> str:
    text = repr(value)
    return text if len(text) < 40 else text[:37] + "..."


def nodes_from_ops(ops, fed: dict | None = None) -> dict:
    """Builds Nodes for `ops` (Operations); `fed` maps fed Tensors to the Nodes replacing them."""
    fed = fed or {}
    by_op = {}
    for op in ops:
        by_op[op] = Node(op._name, op._type, op._attrs, [], [], op._device,
                         [t._dtype for t in op._outputs], [t._dtype for t in op._inputs],
                         op._location, op, op._op_def)
    for op, node in by_op.items():
        node.inputs = [(fed[t], 0) if t in fed else (by_op[t._op], t._value_index)
                       for t in op._inputs]
        node.control_inputs = [by_op[c] for c in op._control_inputs if c in by_op]
    return by_op


def dump(nodes) -> str:
    """Deterministic text of a node list, sorted by name."""
    return "\n".join(n.describe() for n in sorted(nodes, key=lambda n: n.name))


def nodes_from_graph_def(graph_def, limits=None) -> list:
    """Builds Nodes from a GraphDef (devices become assigned devices).

    The GraphDef may come from a socket (`WorkerService.RegisterGraph`): it is validated
    first (`graph_validation.validate_graph_def` with `complete=True`: registered ops, attr
    kinds and bounds, arity, input dtypes, no cycle outside while loops).

    Raises:
        InvalidArgumentError: a malformed node, named.
        NotFoundError: an unregistered op.
    """

    checked = validate_graph_def(graph_def, limits, complete=True)
    nodes: dict = {}
    for node_def in graph_def.node:
        op_def, attrs = checked[node_def.name]
        node = Node(node_def.name, node_def.op, attrs, [], [], node_def.device,
                    _output_types(op_def, attrs), op_def=op_def)
        node.assigned_device = node_def.device
        nodes[node_def.name] = node
    for node_def in graph_def.node:
        node = nodes[node_def.name]
        for text in node_def.input:
            name, index = _split_input(text)
            if index is None:
                node.control_inputs.append(nodes[name])
            else:
                node.inputs.append((nodes[name], index))
        node.input_dtypes = [src.output_dtypes[i] for src, i in node.inputs]
    if graph_def.library.function:
        _resolve_functions(graph_def.library, nodes.values())
    return list(nodes.values())


def _resolve_functions(library, nodes) -> None:
    """Func attrs (names) -> the library's functions, imported into a private graph."""
    holder = Graph()
    try:
        function.import_library(holder, library)
        for node in nodes:
            for key, spec in node.op_def.attrs.items():
                if spec.kind in ("func", "list(func)") and key in node.attrs:
                    value = node.attrs[key]
                    node.attrs[key] = tuple(function.resolve(holder, v) for v in value) \
                        if isinstance(value, tuple) else function.resolve(holder, value)
    except ValueError as err:
        raise errors.InvalidArgumentError(None, None, f"GraphDef library: {err}") from None
