"""`tensorflow.python.framework.ops`: the graph, tensor and scope names TF1 programs import
from it, each the object the public API (`tf.*`) exports."""

from __future__ import annotations

from tensorflux.framework.behavior import (
    disable_eager_execution,
    enable_eager_execution,
    executing_eagerly,
)
from tensorflux.framework.graph import (
    Graph,
    GraphKeys,
    add_to_collection,
    add_to_collections,
    get_collection,
    get_collection_ref,
    get_default_graph,
    get_default_session,
    reset_default_graph,
)
from tensorflux.framework.indexed_slices import (
    IndexedSlices,
    IndexedSlicesValue,
    convert_to_tensor_or_indexed_slices,
)
from tensorflux.framework.scopes import (
    colocate_with,
    container,
    control_dependencies,
    device,
    get_name_scope,
    init_scope,
    name_scope,
    op_scope,
)
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor import Operation, Tensor
from tensorflux.framework.tensor_conversion import (
    convert_to_tensor,
    register_tensor_conversion_function,
)
from tensorflux.ops.autodiff.gradients import (
    NotDifferentiable,
    RegisterGradient,
    get_gradient_function,
)

__all__ = ["Graph", "GraphKeys", "Operation", "Tensor", "IndexedSlices", "IndexedSlicesValue",
           "SparseTensor", "add_to_collection", "add_to_collections", "get_collection",
           "get_collection_ref", "get_default_graph", "get_default_session",
           "reset_default_graph", "colocate_with", "container", "control_dependencies",
           "device", "get_name_scope", "init_scope", "name_scope", "op_scope",
           "convert_to_tensor", "convert_to_tensor_or_indexed_slices",
           "register_tensor_conversion_function", "NotDifferentiable", "RegisterGradient",
           "get_gradient_function", "enable_eager_execution", "disable_eager_execution",
           "executing_eagerly"]
