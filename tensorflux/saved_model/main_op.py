"""The standard SavedModel main op (TF's `tf.saved_model.main_op`)."""

from __future__ import annotations

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor import Operation, Tensor
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.data_flow import lookup as lookup_ops
from tensorflux.ops.state import variables

__all__ = ["main_op", "main_op_with_restore"]


def main_op():
    """An op initializing global and local variables and tables (run after loading)."""

    return control_flow_ops.group(variables.global_variables_initializer(),
                                  variables.local_variables_initializer(),
                                  lookup_ops.tables_initializer())


def main_op_with_restore(restore_op_name):
    """An op that runs `main_op()` and then the restore op named `restore_op_name`."""

    graph = graph_mod.get_default_graph()
    restore = restore_op_name
    if not isinstance(restore, (Operation, Tensor)):
        restore = graph.as_graph_element(restore_op_name)
    with graph.control_dependencies([main_op()]):
        return control_flow_ops.group(restore)
