"""Validation of a `GraphDef` before anything is built from it.

Contract: `validate_graph_def` reads a GraphDef from an untrusted source (a file, a socket)
and either returns every node's op definition and checked attrs or raises a typed error
naming the node; it allocates no more than the limits allow (a tensor attr's declared size is
checked before it is decoded, list attrs and number attrs are bounded). The checks:

- sizes: node count, name lengths, inputs per node, list attr lengths, tensor attr bytes,
  shape ranks and dimensions (>= -1), number attrs (`N: int`);
- every op is registered (NotFoundError otherwise);
- every declared attr holds the kind its op declares (`type`, `int`, `list(shape)`, ...),
  passes the op's allowed values and minimum; private attrs (`_class`, `_output_shapes`) are
  decoded with the same bounds, `_class` must be strings;
- with `complete=True` (graphs built by our own master: worker RPCs): every attr without a
  default is present, the data inputs match the op's arity and input dtypes, input indices
  name existing outputs, and the graph has no cycle except through `NextIteration` back
  edges (while loops).

`tf.import_graph_def` runs it with `complete=False` (type attrs may be inferred from inputs
there; the importer checks arity and dtypes itself) and the runtime's `nodes_from_graph_def`
(the path of `WorkerService.RegisterGraph`) with `complete=True`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import OP_DEFS, coerce_attr
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.framework.tensor_util import DEFAULT_MAX_TENSOR_BYTES, MAX_RANK, make_ndarray

__all__ = ["GraphLimits", "DEFAULT_LIMITS", "validate_graph_def", "decode_attr"]


@dataclass(frozen=True)
class GraphLimits:
    """Bounds on what one GraphDef may ask for."""

    max_nodes: int = 1 << 20
    max_name_length: int = 4096
    max_inputs: int = 1 << 16
    max_list_length: int = 1 << 20
    max_number_attr: int = 1 << 16
    max_tensor_bytes: int = DEFAULT_MAX_TENSOR_BYTES
    max_rank: int = MAX_RANK


DEFAULT_LIMITS = GraphLimits()

# AttrValue oneof field -> the attr kind it carries.
_FIELD_KINDS = {"type": "type", "i": "int", "f": "float", "b": "bool", "s": "string",
                "shape": "shape", "tensor": "tensor", "func": "func"}
_LIST_FIELDS = {"type": "type", "int": "i", "float": "f", "bool": "b", "string": "s",
                "shape": "shape", "tensor": "tensor", "func": "func"}
_NEXT_OPS = frozenset({"NextIteration", "RefNextIteration"})


def _invalid(node, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, f"Node '{node.name}' ({node.op}): {message}")


def _check_shape(proto, limits: GraphLimits) -> TensorShape:
    if proto.unknown_rank:
        return TensorShape(None)
    if len(proto.dim) > limits.max_rank:
        raise ValueError(f"shape of rank {len(proto.dim)} is over the maximum {limits.max_rank}")
    for dim in proto.dim:
        if dim.size < -1:
            raise ValueError(f"shape has an invalid dimension {dim.size} (must be >= -1)")
    return TensorShape(proto)


def _populated_list_field(lst):
    return [field.name for field, _ in lst.ListFields()]


def decode_attr(proto, kind, limits: GraphLimits = DEFAULT_LIMITS):
    """An AttrValue's Python value, checked to be of `kind` (None: any kind) and bounded.

    Raises:
        ValueError / TypeError: the value is of another kind or over a limit.
        InvalidArgumentError: a tensor attr's declared size is over the limit.
    """
    which = proto.WhichOneof("value")
    if which is None or which == "placeholder":
        raise ValueError(f"attr value is {'a placeholder' if which else 'empty'}")
    if kind is not None and kind not in ("any",):
        if kind.startswith("list("):
            if which != "list":
                raise TypeError(f"expected a list of {kind[5:-1]}, got an attr of kind "
                                f"'{_FIELD_KINDS.get(which, which)}'")
        elif _FIELD_KINDS.get(which) != kind:
            raise TypeError(f"expected an attr of kind '{kind}', got "
                            f"'{_FIELD_KINDS.get(which, which)}'")
    if which == "type":
        return dtypes.as_dtype(proto.type)
    if which == "i":
        return int(proto.i)
    if which == "f":
        return float(proto.f)
    if which == "b":
        return bool(proto.b)
    if which == "s":
        if len(proto.s) > limits.max_tensor_bytes:
            raise ValueError(f"string attr of {len(proto.s)} bytes is over the limit")
        try:
            return proto.s.decode()
        except UnicodeDecodeError:
            return proto.s
    if which == "shape":
        return _check_shape(proto.shape, limits)
    if which == "tensor":
        return make_ndarray(proto.tensor, limits.max_tensor_bytes)
    if which == "func":
        return proto.func.name
    return _decode_list(proto.list, kind, limits)


def _decode_list(lst, kind, limits: GraphLimits):
    fields = _populated_list_field(lst)
    if len(fields) > 1:
        raise TypeError(f"list attr holds several kinds of values: {sorted(fields)}")
    inner = kind[5:-1] if kind and kind.startswith("list(") else None
    if inner is not None and fields and fields[0] != _LIST_FIELDS.get(inner, inner):
        raise TypeError(f"expected a list of {inner}, got a list field '{fields[0]}'")
    field = fields[0] if fields else _LIST_FIELDS.get(inner)
    if field is None:
        return ()
    values = getattr(lst, field)
    if len(values) > limits.max_list_length:
        raise ValueError(f"list attr of {len(values)} values is over the limit of "
                         f"{limits.max_list_length}")
    if field == "type":
        return tuple(dtypes.as_dtype(t) for t in values)
    if field == "i":
        return tuple(int(v) for v in values)
    if field == "f":
        return tuple(float(v) for v in values)
    if field == "b":
        return tuple(bool(v) for v in values)
    if field == "s":
        out = []
        for item in values:
            try:
                out.append(item.decode())
            except UnicodeDecodeError:
                raise ValueError("list(string) attr holds bytes that are not UTF-8") from None
        return tuple(out)
    if field == "shape":
        return tuple(_check_shape(s, limits) for s in values)
    if field == "tensor":
        total = 0
        arrays = []
        for item in values:
            array = make_ndarray(item, limits.max_tensor_bytes - total)
            total += array.nbytes
            arrays.append(array)
        return tuple(arrays)
    return tuple(f.name for f in values)


def _check_private(key: str, value):
    if key == "_class":
        items = value if isinstance(value, tuple) else (value,)
        if not all(isinstance(v, str) for v in items):
            raise TypeError("attr '_class' must be a list of strings 'loc:@name'")
        return tuple(items)
    if key == "_output_shapes":
        items = value if isinstance(value, tuple) else (value,)
        if not all(isinstance(v, TensorShape) for v in items):
            raise TypeError("attr '_output_shapes' must be a list of shapes")
        return tuple(items)
    return value


def _node_attrs(node, op_def, limits: GraphLimits, complete: bool) -> dict:
    attrs = {}
    for key, proto in node.attr.items():
        if len(key) > limits.max_name_length:
            raise _invalid(node, "an attr name is over the length limit")
        spec = op_def.attrs.get(key)
        try:
            if spec is None:
                if key.startswith("_"):
                    attrs[key] = _check_private(key, decode_attr(proto, None, limits))
                continue
            value = coerce_attr(spec, decode_attr(proto, spec.kind, limits))
        except errors.InvalidArgumentError as err:
            raise _invalid(node, f"attr '{key}': {err.message}") from None
        except (TypeError, ValueError, OverflowError) as err:
            raise _invalid(node, f"attr '{key}': {err}") from None
        if spec.minimum is not None:
            count = len(value) if spec.kind.startswith("list(") else value
            if isinstance(count, int) and count < spec.minimum:
                raise _invalid(node, f"attr '{key}' is {value!r}, less than the minimum "
                               f"{spec.minimum}")
        attrs[key] = value
    for arg in op_def.inputs + op_def.outputs:
        count = attrs.get(arg.number_attr) if arg.number_attr else None
        if count is not None and not 0 <= count <= limits.max_number_attr:
            raise _invalid(node, f"attr '{arg.number_attr}' is {count}, outside "
                           f"[0, {limits.max_number_attr}]")
    if complete:
        for key, spec in op_def.attrs.items():
            if key in attrs:
                continue
            if not spec.has_default:
                raise _invalid(node, f"NodeDef is missing attr '{key}' (which has no default)")
            attrs[key] = spec.default
    return attrs


def _split_input(text: str):
    if text.startswith("^"):
        return text[1:], None
    name, sep, index = text.rpartition(":")
    if sep and index.isdigit() and len(index) < 10:
        return name, int(index)
    if sep and index.lstrip("-").isdigit():
        raise ValueError(f"input '{text}' has an invalid output index")
    return text, 0


def _io_types(args, attrs) -> list:
    types = []
    for arg in args:
        if arg.type_list_attr:
            types.extend(dtypes.as_dtype(t) for t in attrs[arg.type_list_attr])
        else:
            one = attrs[arg.type_attr] if arg.type_attr else arg.fixed_type
            types.extend([one] * (attrs[arg.number_attr] if arg.number_attr else 1))
    return types


def validate_graph_def(graph_def, limits: GraphLimits | None = None,
                       complete: bool = False) -> dict:
    """Checks an untrusted GraphDef (see the module docstring).

    Args:
        graph_def: a `GraphDef`.
        limits: the bounds (`DEFAULT_LIMITS` when None).
        complete: also check arity, input dtypes, output indices and cycles (a graph whose
            attrs are all present, as the master sends to workers).

    Returns:
        {node name: (OpDef, attrs)} with attrs decoded and checked (defaults filled in when
        `complete`).

    Raises:
        InvalidArgumentError: a malformed node, naming it and what is wrong.
        NotFoundError: a node's op is not registered.
    """
    limits = limits or DEFAULT_LIMITS
    if len(graph_def.node) > limits.max_nodes:
        raise errors.InvalidArgumentError(
            None, None, f"GraphDef has {len(graph_def.node)} nodes, over the limit of "
            f"{limits.max_nodes}")
    checked: dict = {}
    for node in graph_def.node:
        if not node.name or len(node.name) > limits.max_name_length:
            raise errors.InvalidArgumentError(
                None, None, f"GraphDef has a node with an empty or over-long name "
                f"({len(node.name)} characters, op '{node.op[:100]}')")
        if node.name in checked:
            raise errors.InvalidArgumentError(
                None, None, f"Node '{node.name}' is not unique in the GraphDef: two nodes "
                "have that name.")
        if len(node.input) > limits.max_inputs or len(node.device) > limits.max_name_length:
            raise _invalid(node, f"{len(node.input)} inputs or a device name of "
                           f"{len(node.device)} characters is over the limit")
        op_def = OP_DEFS.get(node.op)
        if op_def is None:
            raise errors.NotFoundError(
                None, None, f"Op type not registered '{node.op[:200]}' (node '{node.name}') "
                "in tensorflux.")
        checked[node.name] = (op_def, _node_attrs(node, op_def, limits, complete))
    if complete:
        _check_edges(graph_def, checked)
    return checked


def _check_edges(graph_def, checked: dict) -> None:
    outputs = {}
    for name, (op_def, attrs) in checked.items():
        try:
            outputs[name] = _io_types(op_def.outputs, attrs)
        except (TypeError, KeyError) as err:
            raise errors.InvalidArgumentError(
                None, None, f"Node '{name}': cannot derive its output types: {err}") from None
    consumers: dict = {name: [] for name in checked}
    indegree = dict.fromkeys(checked, 0)
    for node in graph_def.node:
        op_def, attrs = checked[node.name]
        data = []
        seen_control = False
        for text in node.input:
            try:
                source, index = _split_input(text)
            except ValueError as err:
                raise _invalid(node, str(err)) from None
            if source not in checked:
                raise _invalid(node, f"unknown input node '{text}'")
            if index is None:
                seen_control = True
            else:
                if seen_control:
                    raise _invalid(node, f"data input '{text}' comes after a control input")
                if index >= len(outputs[source]):
                    raise _invalid(node, f"input '{text}' names output {index} of '{source}', "
                                   f"which has {len(outputs[source])} outputs")
                data.append(outputs[source][index])
            if checked[source][0].name not in _NEXT_OPS:
                consumers[source].append(node.name)
                indegree[node.name] += 1
        try:
            expected = _io_types(op_def.inputs, attrs)
        except (TypeError, KeyError) as err:
            raise _invalid(node, f"cannot derive its input types: {err}") from None
        if len(expected) != len(data):
            raise _invalid(node, f"NodeDef has {len(data)} data inputs but the op's signature "
                           f"expects {len(expected)}")
        for k, (got, want) in enumerate(zip(data, expected)):
            if dtypes.as_dtype(got).base_dtype != dtypes.as_dtype(want).base_dtype:
                raise _invalid(node, f"input {k} is {dtypes.as_dtype(got).name}, expected "
                               f"{dtypes.as_dtype(want).name}")
    ready = deque(name for name, count in indegree.items() if count == 0)
    done = 0
    while ready:
        name = ready.popleft()
        done += 1
        for consumer in consumers[name]:
            indegree[consumer] -= 1
            if indegree[consumer] == 0:
                ready.append(consumer)
    if done != len(checked):
        stuck = [name for name, count in indegree.items() if count > 0][:5]
        raise errors.InvalidArgumentError(
            None, None, f"GraphDef has a cycle that is not a while loop (not through a "
                        f"NextIteration), through nodes {stuck}")
