"""`tf.sparse`: the SparseTensor namespace (TF1 names)."""

from tensorflux.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorflux.ops.data_flow.accumulators import SparseConditionalAccumulator
from tensorflux.ops.sparse.composites import eye, expand_dims, from_dense
from tensorflux.ops.sparse.composites import sparse_mask as mask
from tensorflux.ops.sparse.composites import sparse_merge as merge
from tensorflux.ops.sparse.composites import sparse_reset_shape as reset_shape
from tensorflux.ops.sparse.composites import sparse_retain as retain
from tensorflux.ops.sparse.composites import sparse_to_indicator as to_indicator
from tensorflux.ops.sparse.composites import sparse_transpose as transpose
from tensorflux.ops.sparse.arithmetic import sparse_add as add
from tensorflux.ops.sparse.arithmetic import sparse_maximum as maximum
from tensorflux.ops.sparse.arithmetic import sparse_minimum as minimum
from tensorflux.ops.sparse.arithmetic import sparse_reduce_max as reduce_max
from tensorflux.ops.sparse.arithmetic import sparse_reduce_max_sparse as reduce_max_sparse
from tensorflux.ops.sparse.arithmetic import sparse_reduce_sum as reduce_sum
from tensorflux.ops.sparse.arithmetic import sparse_reduce_sum_sparse as reduce_sum_sparse
from tensorflux.ops.sparse.arithmetic import sparse_softmax as softmax
from tensorflux.ops.sparse.arithmetic import sparse_tensor_dense_matmul as matmul
from tensorflux.ops.sparse.arithmetic import sparse_tensor_dense_matmul as sparse_dense_matmul
from tensorflux.ops.sparse.core import sparse_placeholder as placeholder
from tensorflux.ops.sparse.cross import sparse_cross as cross
from tensorflux.ops.sparse.cross import sparse_cross_hashed as cross_hashed
from tensorflux.ops.sparse.core import sparse_tensor_to_dense as to_dense
from tensorflux.ops.sparse.structure import sparse_concat as concat
from tensorflux.ops.sparse.structure import sparse_fill_empty_rows as fill_empty_rows
from tensorflux.ops.sparse.structure import sparse_reorder as reorder
from tensorflux.ops.sparse.structure import sparse_reshape as reshape
from tensorflux.ops.sparse.structure import sparse_slice as slice  # noqa: A004 - TF name
from tensorflux.ops.sparse.structure import sparse_split as split
from tensorflux.ops.sparse.segment import sparse_segment_mean as segment_mean
from tensorflux.ops.sparse.segment import sparse_segment_sqrt_n as segment_sqrt_n
from tensorflux.ops.sparse.segment import sparse_segment_sum as segment_sum

__all__ = ["SparseTensor", "SparseTensorValue", "SparseConditionalAccumulator", "add", "concat",
           "cross", "cross_hashed",
           "expand_dims", "eye",
           "fill_empty_rows", "from_dense", "mask", "matmul", "maximum", "merge", "minimum",
           "placeholder", "reduce_max", "reduce_max_sparse", "reduce_sum", "reduce_sum_sparse",
           "reorder", "reset_shape", "reshape", "retain", "segment_mean", "segment_sqrt_n",
           "segment_sum", "slice", "softmax", "sparse_dense_matmul", "split", "to_dense",
           "to_indicator", "transpose"]
__all__ += ["cross", "cross_hashed"]
