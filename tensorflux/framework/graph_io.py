"""GraphDef export: Operations and runtime Nodes to `NodeDef`/`GraphDef` protobufs.

Attr values are converted with the kinds the op definition declares; undeclared (private)
attrs such as `_class` are converted by their Python type.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.framework.tensor_util import make_ndarray, make_tensor_proto
from tensorflux.protos import attr_value_pb2, graph_pb2, node_def_pb2


def attr_to_proto(value, kind: str | None = None):
    """Python attr value -> AttrValue."""

    proto = attr_value_pb2.AttrValue()
    if kind is None:
        kind = _infer_kind(value)
    if kind == "type":
        proto.type = dtypes.as_dtype(value).as_datatype_enum
    elif kind == "int":
        proto.i = int(value)
    elif kind == "float":
        proto.f = float(value)
    elif kind == "bool":
        proto.b = bool(value)
    elif kind == "string":
        proto.s = value.encode() if isinstance(value, str) else bytes(value)
    elif kind == "shape":
        proto.shape.CopyFrom(TensorShape(value).as_proto() if not isinstance(value, TensorShape)
                             else value.as_proto())
    elif kind == "tensor":
        proto.tensor.CopyFrom(make_tensor_proto(value))
    elif kind == "func":
        proto.func.name = getattr(value, "name", str(value))
    elif kind == "list(func)":
        for item in value or ():
            proto.list.func.add().name = getattr(item, "name", str(item))
        proto.list.SetInParent()
    elif kind.startswith("list("):
        inner = kind[5:-1]
        items = list(value or ())
        list_value = proto.list
        if inner == "type":
            list_value.type.extend(dtypes.as_dtype(v).as_datatype_enum for v in items)
        elif inner == "int":
            list_value.i.extend(int(v) for v in items)
        elif inner == "float":
            list_value.f.extend(float(v) for v in items)
        elif inner == "bool":
            list_value.b.extend(bool(v) for v in items)
        elif inner == "string":
            list_value.s.extend(v.encode() if isinstance(v, str) else bytes(v) for v in items)
        elif inner == "shape":
            list_value.shape.extend(TensorShape(v).as_proto() for v in items)
        elif inner == "tensor":
            list_value.tensor.extend(make_tensor_proto(v) for v in items)
        if not items:
            list_value.SetInParent()
    return proto


def attr_public_value(value, kind: str | None = None):
    """A stored attr value as TF's `Operation.get_attr` returns it (from its AttrValue).

    bytes for strings, DType for types, TensorShapeProto for shapes, TensorProto for tensors,
    NameAttrList for functions, Python lists for lists; an unset shape is the unknown shape.
    """
    if value is None:
        if kind == "shape":
            return TensorShape(None).as_proto()
        return None
    if kind is None:
        kind = _infer_kind(value)
    if kind in ("int", "bool", "type"):
        return value  # stored as TF returns them: skip the proto
    proto = attr_to_proto(value, kind)
    which = proto.WhichOneof("value")
    if which == "list":
        for field in ("s", "i", "f", "b", "type", "shape", "tensor", "func"):
            items = getattr(proto.list, field)
            if items:
                if field == "type":
                    return [dtypes.as_dtype(t) for t in items]
                return list(items)
        return []
    if which == "type":
        return dtypes.as_dtype(proto.type)
    if which is None:
        return []
    return getattr(proto, which)


def _infer_kind(value) -> str:
    if isinstance(value, dtypes.DType):
        return "type"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, (str, bytes)):
        return "string"
    if isinstance(value, TensorShape):
        return "shape"
    if isinstance(value, np.ndarray):
        return "tensor"
    if isinstance(value, (list, tuple)):
        if not value:
            return "list(int)"
        return f"list({_infer_kind(value[0])})"
    return "string"


def attr_from_proto(proto, kind: str | None = None):
    """AttrValue -> Python attr value (kinds as in op_def; inferred when None)."""

    which = proto.WhichOneof("value")
    if which == "type":
        return dtypes.as_dtype(proto.type)
    if which == "i":
        return int(proto.i)
    if which == "f":
        return float(proto.f)
    if which == "b":
        return bool(proto.b)
    if which == "s":
        try:
            return proto.s.decode()
        except UnicodeDecodeError:
            return proto.s
    if which == "shape":
        return TensorShape(proto.shape)
    if which == "tensor":
        return make_ndarray(proto.tensor)
    if which == "func":
        return proto.func.name
    if which == "list":
        lst = proto.list
        inner = kind[5:-1] if kind and kind.startswith("list(") else None
        if inner == "type" or (inner is None and lst.type):
            return tuple(dtypes.as_dtype(t) for t in lst.type)
        if inner == "int" or (inner is None and lst.i):
            return tuple(int(v) for v in lst.i)
        if inner == "float" or (inner is None and lst.f):
            return tuple(float(v) for v in lst.f)
        if inner == "bool" or (inner is None and lst.b):
            return tuple(bool(v) for v in lst.b)
        if inner == "string" or (inner is None and lst.s):
            return tuple(s.decode() for s in lst.s)
        if inner == "shape" or (inner is None and lst.shape):
            return tuple(TensorShape(s) for s in lst.shape)
        if inner == "tensor" or (inner is None and lst.tensor):
            return tuple(make_ndarray(t) for t in lst.tensor)
        if inner == "func" or (inner is None and lst.func):
            return tuple(f.name for f in lst.func)
        return ()
    if which == "placeholder":
        return None
    return None


def _fill_node_def(proto, name, op_type, op_def, attrs, inputs, device):
    proto.name = name
    proto.op = op_type
    proto.input.extend(inputs)
    if device:
        proto.device = device
    for key, value in attrs.items():
        spec = op_def.attrs.get(key) if op_def is not None else None
        if value is None and (spec is None or spec.kind not in ("shape",)):
            continue
        proto.attr[key].CopyFrom(attr_to_proto(value, spec.kind if spec else None))
    return proto


def node_def_of(op):
    """The NodeDef of an Operation."""

    inputs = [t._as_node_def_input() for t in op._inputs]
    inputs += [f"^{c._name}" for c in op._control_inputs]
    return _fill_node_def(node_def_pb2.NodeDef(), op._name, op._type, op._op_def, op._attrs,
                          inputs, op._device)


MAX_GRAPH_DEF_BYTES = 1 << 31  # a protocol buffer message cannot be larger (TF's limit too)


def graph_to_graph_def(graph, from_version=None, add_shapes: bool = False):
    """Graph -> GraphDef (ops in creation order; `from_version` keeps later ops only).

    Raises:
        ValueError: the GraphDef would be 2 GB or more (as TF), naming its largest node.
    """

    graph_def = graph_pb2.GraphDef()
    graph_def.versions.producer = graph._graph_def_versions[0]
    graph_def.versions.min_consumer = graph._graph_def_versions[1]
    for op in graph.get_operations():
        if from_version is not None and op._id <= from_version:
            continue
        node = graph_def.node.add()
        node.CopyFrom(node_def_of(op))
        if add_shapes:
            node.attr["_output_shapes"].CopyFrom(
                attr_to_proto([t.shape for t in op._outputs], "list(shape)"))
    if graph_def.ByteSize() >= MAX_GRAPH_DEF_BYTES:
        size, name = max((node.ByteSize(), node.name) for node in graph_def.node)
        raise ValueError(
            f"GraphDef cannot be larger than 2GB (its nodes take {graph_def.ByteSize()} bytes; "
            f"the largest node is '{name}' with {size} bytes). Hold large values in variables "
            "initialized from a placeholder, or in files read by the input pipeline, instead "
            "of constants.")
    if graph._functions:
        # cycle: a module-level import breaks `import tensorflux` (partly initialized module)
        from tensorflux.framework import function

        graph_def.library.CopyFrom(function.library_proto(graph))
    return graph_def


def nodes_to_graph_def(nodes, use_assigned_device: bool = False):
    """Runtime Nodes -> GraphDef, sorted by name for a deterministic dump."""

    graph_def = graph_pb2.GraphDef()
    graph_def.versions.producer = 27
    for node in sorted(nodes, key=lambda n: n.name):
        inputs = [src.name if idx == 0 else f"{src.name}:{idx}" for src, idx in node.inputs]
        inputs += [f"^{c.name}" for c in node.control_inputs]
        device = node.assigned_device if use_assigned_device else node.device
        _fill_node_def(graph_def.node.add(), node.name, node.op, node.op_def, node.attrs,
                       inputs, device or node.device)
    return graph_def
