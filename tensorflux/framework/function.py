"""Functions: body graphs traced from Python, the graph's function library, FunctionDef protos.

Contract: a `DefinedFunction` is an immutable body graph (`FuncGraph`) with ordered `inputs`
(placeholders of the arguments, then of the captured outer tensors), `outputs` and
`control_outputs` (the stateful ops that must run on every call). A graph's library
(`graph._functions`, name -> DefinedFunction) holds every function its ops call, nested ones
included, and is exported as the GraphDef's `library` (TF's FunctionDef format: body inputs
named `arg` or `node:output_arg:index`). Call ops carry the DefinedFunction itself as their
`func` attr value (exported by name); a GraphDef's library is turned back into DefinedFunctions
before its nodes are imported. This module builds graph only through the op registry.
"""

from __future__ import annotations

import functools
import itertools
import re

from tensorflux.framework import dtypes, nest
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph_import import import_graph_def
from tensorflux.framework.graph_io import _fill_node_def
from tensorflux.framework.graph_validation import decode_attr
from tensorflux.framework.op_def import get_op_def
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.protos import function_pb2, graph_pb2

_UIDS = itertools.count(1)
MAX_NESTING = 64  # function calls nested in a GraphDef's library (bounds the import recursion)
_ARG_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class FuncGraph(graph_mod.Graph):
    """The body graph of a function.

    Tensors of an enclosing graph used in the body are captured: a constant is copied in by
    value; any other tensor becomes one placeholder here (a ref tensor stays a ref, so assigns
    in the body reach the outer variable) and one extra input of every call, in `captures`
    order.
    """

    def __init__(self, name: str, outer_graph=None):
        super().__init__()
        self.name = name
        self.outer_graph = outer_graph
        if outer_graph is not None:
            self.seed = outer_graph.seed
            self._functions = outer_graph._functions
        self.inputs: list = []
        self.outputs: list = []
        self.captures: dict = {}
        self.capture_placeholders: list = []  # the inputs made by capturing, in order

    @property
    def building_function(self) -> bool:
        return True

    def _capture_tensor(self, tensor: Tensor) -> Tensor:
        found = self.captures.get(tensor)
        if found is not None:
            return found
        outer = tensor
        if isinstance(self.outer_graph, FuncGraph) and tensor.graph is not self.outer_graph:
            outer = self.outer_graph._capture_tensor(tensor)
        name = f"captured_{tensor.op.name.replace('/', '_')}"
        saved_scope, self._name_stack = self._name_stack, ""  # captures live at the top
        try:
            copied = self._capture_copy(outer, name)
        finally:
            self._name_stack = saved_scope
        if outer is not tensor:
            self.captures[tensor] = copied
        return copied

    def _capture_copy(self, outer, name):
        with self.control_dependencies(None):
            if outer.op.type == "Const" and not outer.dtype.is_ref_dtype:
                copied = get_op_def("Const")(value=outer.op._attrs["value"],
                                             dtype=outer.dtype, name=name)
            else:
                copied = get_op_def("Placeholder")(dtype=outer.dtype, shape=outer.shape,
                                                   name=name)
                self.captures[outer] = copied
                self.inputs.append(copied)
                self.capture_placeholders.append(copied)
        return copied


class DefinedFunction:
    """A traced or imported function body (see the module docstring)."""

    def __init__(self, graph: FuncGraph, name: str, control_outputs=None):
        self.name = name
        self.graph = graph
        self.inputs = list(graph.inputs)
        self.outputs = list(graph.outputs)
        made = {id(p) for p in graph.capture_placeholders}
        self.captured_inputs = [t for t, p in graph.captures.items()
                                if id(p) in made and t.graph is graph.outer_graph]
        self.input_types = [t.dtype for t in self.inputs]
        self.output_types = [t.dtype.base_dtype for t in self.outputs]
        self.output_shapes = [t.shape for t in self.outputs]
        ops = graph.get_operations()
        self.stateful = any(op.op_def.is_stateful for op in ops if op.type != "Placeholder")
        if control_outputs is None:
            control_outputs = [op for op in ops if op.op_def.is_stateful
                               and op.type not in ("Placeholder", "PlaceholderV2")]
        self.control_outputs = list(control_outputs)
        self.gradient = None  # the gradient DefinedFunction, built on first use
        self.retrace = None  # (graph, arg tensors) -> outputs, for traced Python functions
        self._proto = None

    def __repr__(self) -> str:
        return f"<function {self.name}>"

    @property
    def definition(self):
        """This function as a `FunctionDef` proto."""
        if self._proto is None:
            self._proto = _to_function_def(self)
        return self._proto


# -- the library ------------------------------------------------------------------------------


def add_function(graph, fn: DefinedFunction) -> None:
    """Adds `fn` to `graph`'s library (shared with the graphs it is nested in)."""
    existing = graph._functions.get(fn.name)
    if existing is not None and existing is not fn:
        raise ValueError(f"Function name '{fn.name}' is already in the graph's library.")
    graph._functions[fn.name] = fn


def resolve(graph, value):
    """A func attr value (a DefinedFunction or a library name) -> DefinedFunction.

    Raises:
        ValueError: the name is not in `graph`'s library.
    """
    if isinstance(value, DefinedFunction):
        return value
    name = getattr(value, "name", value)
    found = graph._functions.get(name)
    if found is None:
        raise ValueError(f"Function '{name}' is not in the graph's function library "
                         f"(library: {sorted(graph._functions)[:10]}).")
    return found


def library_proto(graph):
    """The `FunctionDefLibrary` of `graph`'s functions, by name."""

    library = function_pb2.FunctionDefLibrary()
    for name in sorted(graph._functions):
        library.function.add().CopyFrom(graph._functions[name].definition)
    return library


# -- tracing ----------------------------------------------------------------------------------


def unique_name(base: str) -> str:
    base = re.sub(r"[^A-Za-z0-9_]", "_", base or "function")
    return f"__inference_{base}_{next(_UIDS)}"


def trace(python_fn, args, kwargs, placeholders_for, name: str, outer_graph=None,
          captures=()):
    """Calls `python_fn` once inside a new FuncGraph; returns (DefinedFunction, structure).

    Args:
        python_fn: the Python callable.
        args, kwargs: its arguments; leaves for which `placeholders_for(leaf)` returns a
            `(dtype, shape)` become placeholders (the function's arguments), others are
            passed as they are.
        placeholders_for: leaf -> (dtype, shape) or None.
        name: the function's library name.
        outer_graph: the calling graph (default graph when None).
        captures: outer tensors to capture first, in this order (so sibling functions, such
            as the branches of an If, take the same inputs).

    Returns:
        The function and the structure of its results with tensors replaced by output
        positions (None when the function returned None).
    """
    outer = outer_graph or graph_mod.get_default_graph()
    graph = FuncGraph(name, outer)
    with graph.as_default():

        def new_input(i, spec):
            dtype, shape = spec
            graph.inputs.append(get_op_def("Placeholder")(dtype=dtype, shape=shape,
                                                          name=f"arg{i}"))
            return graph.inputs[-1]

        outputs, structure = _call(graph, python_fn, args, kwargs, placeholders_for, new_input,
                                   captures)
        graph.outputs.extend(outputs)
        _add_automatic_control_dependencies(graph)
    fn = DefinedFunction(graph, name)
    fn.retrace = functools.partial(_retrace, python_fn, args, kwargs, placeholders_for)
    return fn, structure


def _call(graph, python_fn, args, kwargs, placeholders_for, new_input, captures=()):
    """Calls `python_fn` in `graph` on new inputs; returns (output tensors, structure)."""
    flat = nest.flatten((args, kwargs))
    fed = []
    for i, leaf in enumerate(flat):
        spec = placeholders_for(leaf)
        fed.append(leaf if spec is None else new_input(i, spec))
    for tensor in captures:
        graph._capture_tensor(tensor)
    call_args, call_kwargs = nest.pack_sequence_as((args, kwargs), fed)
    result = python_fn(*call_args, **call_kwargs)
    if result is None:
        return [], None
    tensors, positions = [], []
    for leaf in nest.flatten(result):
        if leaf is None:
            positions.append(None)
            continue
        tensor = _in_graph(graph, leaf)
        if tensor.dtype.is_ref_dtype:
            tensor = get_op_def("Identity")(tensor)
        positions.append(len(tensors))
        tensors.append(tensor)
    return tensors, nest.pack_sequence_as(result, positions)


def _retrace(python_fn, args, kwargs, placeholders_for, graph, arg_tensors) -> list:
    """Traces the same Python function again into `graph` (the default graph) on
    `arg_tensors`; returns its output tensors. Gradient functions use it to rebuild a body
    with its control-flow contexts (which a GraphDef copy would lose)."""
    feed = iter(arg_tensors)
    outputs, _ = _call(graph, python_fn, args, kwargs, placeholders_for,
                       lambda i, spec: next(feed))
    return outputs


def _in_graph(graph, value) -> Tensor:
    if hasattr(value, "_as_graph_element") and not isinstance(value, Tensor):
        value = value._as_graph_element()
    if isinstance(value, Tensor):
        return value if value.graph is graph else graph._capture_tensor(value)
    return convert_to_tensor(value)


def _add_automatic_control_dependencies(graph) -> None:
    """Runs the body's effects in program order, as TF's tf.function does: each stateful op or
    reader of a ref (outside loops and branches) waits for the previous one."""
    previous = None
    for op in graph.get_operations():
        if op._control_flow_context is not None or op.type in ("Placeholder", "Const"):
            continue
        if not (op.op_def.is_stateful or any(t.dtype.is_ref_dtype for t in op._inputs)):
            continue
        if previous is not None and previous not in op._control_inputs:
            op._add_control_input(previous)
        previous = op


# -- FunctionDef export ---------------------------------------------------------------------


def _output_arg_counts(op_def, attrs) -> list:
    counts = []
    for arg in op_def.outputs:
        if arg.number_attr:
            counts.append((arg.name, int(attrs[arg.number_attr])))
        elif arg.type_list_attr:
            counts.append((arg.name, len(attrs[arg.type_list_attr])))
        else:
            counts.append((arg.name, 1))
    return counts


def _arg_names(inputs) -> list:
    names, used = [], set()
    for i, tensor in enumerate(inputs):
        base = tensor.op.name.lower().replace("/", "_")
        name = base if _ARG_NAME.match(base) else f"arg{i}"
        while name in used:
            name = f"{name}_{i}"
        used.add(name)
        names.append(name)
    return names


def _to_function_def(fn: DefinedFunction):

    fdef = function_pb2.FunctionDef()
    signature = fdef.signature
    signature.name = fn.name
    signature.is_stateful = fn.stateful
    arg_of = {}
    for tensor, name in zip(fn.inputs, _arg_names(fn.inputs)):
        arg = signature.input_arg.add()
        arg.name = name
        arg.type = tensor.dtype.base_dtype.as_datatype_enum
        arg.is_ref = tensor.dtype.is_ref_dtype
        arg_of[tensor] = name

    def tensor_name(tensor):
        if tensor in arg_of:
            return arg_of[tensor]
        op = tensor.op
        index = tensor.value_index
        for arg_name, count in _output_arg_counts(op.op_def, op._attrs):
            if index < count:
                return f"{op.name}:{arg_name}:{index}"
            index -= count
        raise ValueError(f"Tensor {tensor.name} is not an output of its op's signature.")

    inputs = set(arg_of)
    for op in fn.graph.get_operations():
        if op._outputs and op._outputs[0] in inputs:
            continue
        names = [tensor_name(t) for t in op._inputs]
        names += [f"^{c.name}" for c in op._control_inputs]
        _fill_node_def(fdef.node_def.add(), op.name, op.type, op.op_def, op._attrs, names,
                       op._device)
    for i, tensor in enumerate(fn.outputs):
        arg = signature.output_arg.add()
        arg.name = f"output_{i}"
        arg.type = tensor.dtype.base_dtype.as_datatype_enum
        fdef.ret[arg.name] = tensor_name(tensor)
    for op in fn.control_outputs:
        signature.control_output.append(op.name)
        fdef.control_ret[op.name] = op.name
    return fdef


# -- FunctionDef import ---------------------------------------------------------------------


def _func_names(node_def) -> list:
    names = []
    for value in node_def.attr.values():
        which = value.WhichOneof("value")
        if which == "func":
            names.append(value.func.name)
        elif which == "list":
            names.extend(f.name for f in value.list.func)
    return names


def import_library(graph, library) -> None:
    """Turns a `FunctionDefLibrary` into DefinedFunctions in `graph`'s library (callees
    first); functions already in the library by that name are kept.

    Raises:
        ValueError: a malformed FunctionDef or a call to a function the library lacks.
    """
    defs = {fdef.signature.name: fdef for fdef in library.function}
    visiting: list = []

    def load(name):
        existing = graph._functions.get(name)
        if existing is not None:
            if name in defs and existing.definition != defs[name]:
                raise ValueError(f"Cannot add function '{name}' because a different function "
                                 "with the same name already exists.")
            return
        if name not in defs:
            raise ValueError(f"Function '{name}' is called but not defined in the library.")
        if name in visiting:
            raise ValueError(f"Function '{name}' calls itself (recursion is not supported).")
        if len(visiting) >= MAX_NESTING:
            raise ValueError(f"Functions nest deeper than {MAX_NESTING} calls (through "
                             f"'{name}').")
        visiting.append(name)
        for node_def in defs[name].node_def:
            for callee in _func_names(node_def):
                load(callee)
        add_function(graph, from_function_def(defs[name], graph))
        visiting.pop()

    for name in defs:
        load(name)


def _flat_input(text: str, args: set, nodes: dict) -> str:
    """FunctionDef input naming -> GraphDef naming ('n:out:i' -> 'n:k', 'arg' -> 'arg:0')."""
    if text.startswith("^"):
        return text
    if text in args:
        return f"{text}:0"
    parts = text.split(":")
    if len(parts) == 3 and parts[0] in nodes and parts[2].isdigit():
        node_def = nodes[parts[0]]
        op_def = get_op_def(node_def.op)
        attrs = {key: spec.default for key, spec in op_def.attrs.items() if spec.has_default}

        for key, proto in node_def.attr.items():
            if key in op_def.attrs:
                attrs[key] = decode_attr(proto, op_def.attrs[key].kind)
        offset = 0
        for arg_name, count in _output_arg_counts(op_def, attrs):
            if arg_name == parts[1]:
                if int(parts[2]) >= count:
                    break
                return f"{parts[0]}:{offset + int(parts[2])}"
            offset += count
        raise ValueError(f"FunctionDef input '{text}': node '{parts[0]}' ({node_def.op}) has "
                         f"no output '{parts[1]}:{parts[2]}'.")
    if len(parts) == 2 and parts[0] in nodes and parts[1].isdigit():
        return text
    if text in nodes:
        return text
    raise ValueError(f"FunctionDef input '{text}' names neither an argument nor a node output.")


def from_function_def(fdef, outer_graph) -> DefinedFunction:
    """A DefinedFunction from a `FunctionDef` whose callees are in `outer_graph`'s library.

    Raises:
        ValueError: a malformed body (unknown input, wrong arity or type), naming the node.
    """

    signature = fdef.signature
    args = {arg.name for arg in signature.input_arg}
    nodes = {node.name: node for node in fdef.node_def}
    overlap = args & set(nodes)
    if overlap:
        raise ValueError(f"FunctionDef '{signature.name}': names used both as argument and node: "
                         f"{sorted(overlap)}")
    graph_def = graph_pb2.GraphDef()
    for node in fdef.node_def:
        copy = graph_def.node.add()
        copy.CopyFrom(node)
        del copy.input[:]
        copy.input.extend(_flat_input(text, args, nodes) for text in node.input)
    graph = FuncGraph(signature.name, outer_graph)
    with graph.as_default():
        for arg in signature.input_arg:
            dtype = dtypes.as_dtype(arg.type)
            if arg.is_ref:
                dtype = dtype._as_ref
            graph.inputs.append(get_op_def("Placeholder")(dtype=dtype, shape=None, name=arg.name))
        input_map = {f"{arg.name}:0": t for arg, t in zip(signature.input_arg, graph.inputs)}
        used = {text.split(":")[0] for node in fdef.node_def for text in node.input}
        input_map = {k: v for k, v in input_map.items() if k[:-2] in used}
        import_graph_def(graph_def, input_map=input_map, name="")
        for arg in signature.output_arg:
            if arg.name not in fdef.ret:
                raise ValueError(f"FunctionDef '{signature.name}': output '{arg.name}' has no "
                                 "ret entry.")
            text = fdef.ret[arg.name]
            if text in args:
                tensor = graph.inputs[[a.name for a in signature.input_arg].index(text)]
            else:
                tensor = graph.get_tensor_by_name(_flat_input(text, args, nodes)
                                                  if ":" in text else f"{text}:0")
            graph.outputs.append(tensor)
    control = [graph.get_operation_by_name(name) for name in fdef.control_ret.values()]
    defined = DefinedFunction(graph, signature.name, control or None)
    defined._proto = function_pb2.FunctionDef()
    defined._proto.CopyFrom(fdef)
    return defined


__all__: list = []
