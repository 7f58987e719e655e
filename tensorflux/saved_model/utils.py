"""TensorInfo protos for SignatureDefs (TF's `tf.saved_model.utils`)."""

from __future__ import annotations

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor import Tensor
from tensorflux.protos import meta_graph_pb2

__all__ = ["build_tensor_info", "get_tensor_from_tensor_info"]


def build_tensor_info(tensor):
    """The TensorInfo (name or COO-sparse names, dtype, static shape) of a tensor.

    Args:
        tensor: a Tensor or SparseTensor.

    Returns:
        A `meta_graph_pb2.TensorInfo`.

    Raises:
        TypeError: `tensor` is neither.

    Example:
        >>> info = tf.saved_model.utils.build_tensor_info(x)     # info.name == "x:0"
    """
    if isinstance(tensor, SparseTensor):
        info = meta_graph_pb2.TensorInfo(dtype=tensor.dtype.as_datatype_enum)
        info.coo_sparse.values_tensor_name = tensor.values.name
        info.coo_sparse.indices_tensor_name = tensor.indices.name
        info.coo_sparse.dense_shape_tensor_name = tensor.dense_shape.name
        info.tensor_shape.CopyFrom(tensor.get_shape().as_proto())
        return info
    if not isinstance(tensor, Tensor):
        raise TypeError(f"build_tensor_info expects a Tensor or SparseTensor, got "
                        f"{type(tensor).__name__}: {tensor!r}")
    info = meta_graph_pb2.TensorInfo(name=tensor.name, dtype=tensor.dtype.as_datatype_enum)
    info.tensor_shape.CopyFrom(tensor.get_shape().as_proto())
    return info


def _prefixed(name: str, import_scope: str | None) -> str:
    return f"{import_scope}/{name}" if import_scope else name


def get_tensor_from_tensor_info(tensor_info, graph=None, import_scope=None):
    """The Tensor (or SparseTensor) a TensorInfo names, looked up in `graph`.

    Raises:
        KeyError: the graph has no such tensor.
        ValueError: the TensorInfo has no encoding.
    """
    graph = graph or graph_mod.get_default_graph()

    def get(name):
        return graph.get_tensor_by_name(_prefixed(name, import_scope))

    encoding = tensor_info.WhichOneof("encoding")
    if encoding == "name":
        return get(tensor_info.name)
    if encoding == "coo_sparse":
        sparse = tensor_info.coo_sparse
        return SparseTensor(get(sparse.indices_tensor_name), get(sparse.values_tensor_name),
                            get(sparse.dense_shape_tensor_name))
    raise ValueError(f"Invalid TensorInfo.encoding: {encoding}")
