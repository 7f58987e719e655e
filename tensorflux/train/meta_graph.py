"""Meta graphs: a GraphDef plus its collections and SaverDef (TF's `MetaGraphDef`).

`export_meta_graph` serializes collections the way TensorFlow does: variables as `VariableDef`
bytes, Tensors and Operations as node names, savers as `SaverDef` bytes, numbers as int64 or
float lists. `import_meta_graph` imports the graph (optionally under a scope), rebuilds the
collections (Variables as Python Variable objects again) and returns a Saver for the SaverDef.
"""

from __future__ import annotations

import os

from google.protobuf import message as protobuf_message
from google.protobuf import text_format

from tensorflux.framework import errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.graph_import import import_graph_def
from tensorflux.framework.graph_io import attr_to_proto
from tensorflux.framework.op_def import get_op_def
from tensorflux.framework.tensor import Operation, Tensor
from tensorflux.lib.formats import atomic_files
from tensorflux.ops.state.variables import Variable
from tensorflux.platform import tf_logging as logging
from tensorflux.platform.version import VERSION
from tensorflux.protos import meta_graph_pb2, op_def_pb2, queue_runner_pb2, saver_pb2, variable_pb2
from tensorflux.train.queue_runner import QueueRunner
from tensorflux.train.saver import Saver

__all__ = ["export_meta_graph", "import_meta_graph", "read_meta_graph_file", "op_list_for_types"]

_VARIABLE_KEYS = frozenset(GraphKeys._VARIABLE_COLLECTIONS + [GraphKeys.METRIC_VARIABLES,
                                                            GraphKeys.GLOBAL_STEP])


def _prefix(name: str, scope: str | None) -> str:
    return f"{scope}/{name}" if scope else name


def _strip(name: str, scope: str | None) -> str:
    if scope and name.startswith(scope + "/"):
        return name[len(scope) + 1:]
    return name


def _op_list(graph):
    return op_list_for_types({op.type for op in graph.get_operations()})


def op_list_for_types(type_names) -> op_def_pb2.OpList:
    """An `OpList` of the registered `OpDef`s of `type_names`, sorted by name.

    Raises:
        LookupError: a type is not a registered op.
    """
    ops = op_def_pb2.OpList()
    for type_name in sorted(set(type_names)):
        ops.op.add().CopyFrom(_op_def_proto(type_name))
    return ops


def _op_def_proto(type_name):
    op_def = get_op_def(type_name)
    proto = op_def_pb2.OpDef(name=op_def.name, is_stateful=op_def.is_stateful)

    def add_arg(target, arg):
        item = target.add(name=arg.name, is_ref=arg.is_ref)
        if arg.type_attr:
            item.type_attr = arg.type_attr
        if arg.fixed_type is not None:
            item.type = arg.fixed_type.as_datatype_enum
        if arg.number_attr:
            item.number_attr = arg.number_attr
        if arg.type_list_attr:
            item.type_list_attr = arg.type_list_attr

    for arg in op_def.inputs:
        add_arg(proto.input_arg, arg)
    for arg in op_def.outputs:
        add_arg(proto.output_arg, arg)
    for spec in op_def.attrs.values():
        attr = proto.attr.add(name=spec.name, type=spec.kind)
        if spec.has_default and spec.default is not None:
            attr.default_value.CopyFrom(attr_to_proto(spec.default, spec.kind))
        if spec.minimum is not None:
            attr.has_minimum = True
            attr.minimum = spec.minimum
        if spec.allowed:
            kind = "list(type)" if spec.kind == "type" else "list(string)"
            attr.allowed_values.CopyFrom(attr_to_proto(list(spec.allowed), kind))
    return proto


def _variable_def(var, scope):
    if getattr(var, "_is_resource_variable", False):
        return var.to_proto(export_scope=scope)
    proto = variable_pb2.VariableDef(
        variable_name=_strip(var.name, scope),
        initializer_name=_strip(var.initializer.name, scope),
        snapshot_name=_strip(var.value().name, scope),
        trainable=bool(getattr(var, "trainable", True)))
    initial = getattr(var, "initial_value", None)
    if isinstance(initial, Tensor):
        proto.initial_value_name = _strip(initial.name, scope)
    info = var._get_save_slice_info() if hasattr(var, "_get_save_slice_info") else None
    if info is not None:  # a shard of a partitioned variable
        proto.save_slice_info_def.full_name = _strip(info.full_name, scope)
        proto.save_slice_info_def.full_shape.extend(info.full_shape)
        proto.save_slice_info_def.var_offset.extend(info.var_offset)
        proto.save_slice_info_def.var_shape.extend(info.var_shape)
    return proto


def _add_collection(meta, key, items, scope) -> None:
    collection = meta.collection_def[key]
    for item in items:
        is_variable = hasattr(item, "initializer") and hasattr(item, "_as_graph_element")
        if is_variable and key in _VARIABLE_KEYS:
            if scope and not item.name.startswith(scope + "/"):
                continue
            collection.bytes_list.value.append(_variable_def(item, scope).SerializeToString())
        elif key == GraphKeys.QUEUE_RUNNERS and hasattr(item, "to_proto"):
            proto = item.to_proto(export_scope=scope)
            if proto is not None:
                collection.bytes_list.value.append(proto.SerializeToString())
        elif is_variable or isinstance(item, (Tensor, Operation)):
            # TF keeps a variable of a user collection as its tensor name (node_list).
            if scope and not item.name.startswith(scope + "/"):
                continue
            collection.node_list.value.append(_strip(item.name, scope))
        elif isinstance(item, bool) or isinstance(item, int):
            collection.int64_list.value.append(int(item))
        elif isinstance(item, float):
            collection.float_list.value.append(item)
        elif isinstance(item, (bytes, str)):
            collection.bytes_list.value.append(item.encode() if isinstance(item, str) else item)
        elif hasattr(item, "saver_def") and isinstance(item.saver_def, saver_pb2.SaverDef):
            collection.bytes_list.value.append(item.saver_def.SerializeToString())
        else:
            raise TypeError(f"cannot serialize a {type(item).__name__}")


def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None,
                      collection_list=None, as_text=False, graph=None, export_scope=None,
                      clear_devices=False, clear_extraneous_savers=False,
                      strip_default_attrs=False, save_debug_info=False, **kwargs):
    """Returns (and writes to `filename`) the MetaGraphDef of `graph` (default graph)."""

    graph = graph or graph_mod.get_default_graph()
    meta = meta_graph_pb2.MetaGraphDef()
    if meta_info_def is not None:
        meta.meta_info_def.CopyFrom(meta_info_def)
    meta.meta_info_def.tensorflow_version = VERSION
    meta.meta_info_def.tensorflow_git_version = "tensorflux"
    meta.meta_info_def.stripped_op_list.CopyFrom(_op_list(graph))
    if graph_def is None:
        graph_def = graph.as_graph_def(add_shapes=True)
    if export_scope:
        kept = [n for n in graph_def.node if n.name.startswith(export_scope + "/")]
        del graph_def.node[:]
        for node in kept:
            node.name = _strip(node.name, export_scope)
            node.input[:] = [("^" if i.startswith("^") else "") + _strip(i.lstrip("^"),
                                                                          export_scope)
                             for i in node.input]
            graph_def.node.add().CopyFrom(node)
    if clear_devices:
        for node in graph_def.node:
            node.device = ""
    meta.graph_def.CopyFrom(graph_def)
    if saver_def is not None:
        meta.saver_def.CopyFrom(saver_def)
    keys = collection_list if collection_list is not None else graph.get_all_collection_keys()
    for key in sorted(k for k in keys if isinstance(k, str)):
        items = graph.get_collection(key)
        if not items:
            continue
        try:
            _add_collection(meta, key, items, export_scope)
        except TypeError as err:
            meta.collection_def.pop(key, None)
            logging.warning(f"Issue encountered when serializing: {key}. Type is unsupported, "
                            f"or the types of the items don't match field type in "
                            f"CollectionDef. {err}")
    if filename:
        directory = os.path.dirname(filename)
        if directory:
            os.makedirs(directory, exist_ok=True)
        # Atomically: a reader (or a crash) never sees a truncated meta graph.
        atomic_files.write_file(filename, text_format.MessageToString(meta) if as_text
                                else meta.SerializeToString())
    return meta


def read_meta_graph_file(filename):
    """Reads a binary or text MetaGraphDef file."""

    if not os.path.exists(filename):
        raise OSError(f"File {filename} does not exist.")
    with open(filename, "rb") as handle:
        data = handle.read()
    meta = meta_graph_pb2.MetaGraphDef()
    try:
        meta.ParseFromString(data)
        return meta
    except protobuf_message.DecodeError as err:
        binary_error = err
    try:
        text_format.Merge(data.decode("utf-8"), meta)
    except UnicodeDecodeError:  # not text: the file is a damaged binary MetaGraphDef
        raise errors.DataLossError(None, None, f"Cannot parse meta graph {filename} "
                                   f"({len(data)} bytes): not a binary MetaGraphDef "
                                   f"({binary_error}; truncated or corrupted?) nor a text "
                                   "one") from None
    except text_format.ParseError as err:
        raise errors.DataLossError(None, None, f"Cannot parse meta graph {filename} as a "
                                   f"binary ({binary_error}) or text MetaGraphDef: "
                                   f"{err}") from None
    return meta


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None,
                      input_map=None, **kwargs):
    """Imports a MetaGraphDef (or file) into the default graph; returns its Saver or None.

    `input_map` ({tensor name in the meta graph: Tensor of the default graph}) replaces those
    inputs, as in `import_graph_def`.
    """

    meta = meta_graph_or_file
    if isinstance(meta, (str, os.PathLike)):
        meta = read_meta_graph_file(os.fspath(meta))
    graph = graph_mod.get_default_graph()
    graph_def = meta.graph_def
    if clear_devices:
        graph_def = type(graph_def)()
        graph_def.CopyFrom(meta.graph_def)
        for node in graph_def.node:
            node.device = ""
    import_graph_def(graph_def, input_map=input_map, name=import_scope or "")
    variables: dict = {}
    node_lists = []
    for key in sorted(meta.collection_def):
        collection = meta.collection_def[key]
        kind = collection.WhichOneof("kind")
        if kind == "node_list":
            node_lists.append((key, collection.node_list.value))
        elif kind == "bytes_list" and key == GraphKeys.QUEUE_RUNNERS:
            for data in collection.bytes_list.value:
                proto = queue_runner_pb2.QueueRunnerDef()
                proto.ParseFromString(data)
                graph.add_to_collection(key, QueueRunner.from_proto(proto, import_scope))
        elif kind == "bytes_list" and key in _VARIABLE_KEYS:
            for data in collection.bytes_list.value:
                proto = variable_pb2.VariableDef()
                proto.ParseFromString(data)
                var = variables.get(proto.variable_name)
                if var is None:
                    var = Variable(variable_def=proto, import_scope=import_scope)
                    variables[proto.variable_name] = var
                graph.add_to_collection(key, var)
        elif kind == "bytes_list" and key == GraphKeys.SAVERS:
            for data in collection.bytes_list.value:
                saver_def = saver_pb2.SaverDef()
                saver_def.ParseFromString(data)
                graph.add_to_collection(key, Saver(saver_def=saver_def, name=import_scope))
        elif kind == "bytes_list":
            for data in collection.bytes_list.value:
                graph.add_to_collection(key, data)
        elif kind == "int64_list":
            for value in collection.int64_list.value:
                graph.add_to_collection(key, int(value))
        elif kind == "float_list":
            for value in collection.float_list.value:
                graph.add_to_collection(key, float(value))
    by_name = {var.name: var for var in variables.values()}
    for key, names in node_lists:  # after the variables: a name may be one of them
        for name in names:
            name = _prefix(name, import_scope)
            graph.add_to_collection(key, by_name.get(name) or graph.as_graph_element(name))
    if meta.HasField("saver_def"):
        return Saver(saver_def=meta.saver_def, name=import_scope)
    if graph.get_collection(GraphKeys.GLOBAL_VARIABLES):
        return Saver()
    return None

