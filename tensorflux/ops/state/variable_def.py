"""`Variable.to_proto`: a Variable as the `VariableDef` TF writes into meta graphs."""

from __future__ import annotations

from tensorflux.framework.tensor import Tensor
from tensorflux.protos import variable_pb2


def to_proto(var, export_scope=None):
    """`var` as a `VariableDef`, names relative to `export_scope`; None outside that scope."""
    if export_scope and not var.name.startswith(export_scope + "/"):
        return None

    def strip(name):
        return name[len(export_scope) + 1:] if export_scope else name

    proto = variable_pb2.VariableDef(
        variable_name=strip(var._variable.name), initializer_name=strip(var.initializer.name),
        snapshot_name=strip(var._snapshot.name), trainable=bool(var._trainable))
    if isinstance(var._initial_value, Tensor):
        proto.initial_value_name = strip(var._initial_value.name)
    info = var._save_slice_info
    if info is not None:
        proto.save_slice_info_def.full_name = strip(info.full_name)
        proto.save_slice_info_def.full_shape.extend(info.full_shape)
        proto.save_slice_info_def.var_offset.extend(info.var_offset)
        proto.save_slice_info_def.var_shape.extend(info.var_shape)
    return proto
