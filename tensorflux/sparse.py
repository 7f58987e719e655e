"""`tf.sparse`: the SparseTensor namespace (TF1 names)."""

from tensorflux.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorflux.ops.sparse_ops import sparse_placeholder as placeholder
from tensorflux.ops.sparse_ops import sparse_tensor_to_dense as to_dense

__all__ = ["SparseTensor", "SparseTensorValue", "placeholder", "to_dense"]
