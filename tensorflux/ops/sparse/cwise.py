"""SparseTensor (op) dense: SparseDenseCwise{Mul,Div,Add}, and the `sp * dense` /
`sp / dense` operators of SparseTensor (as TF1 defines them).

The dense side is broadcast to the sparse side's shape (never the other way); only the stored
entries are computed, so the result keeps the SparseTensor's indices.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import gather_scatter as gather_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.array import slicing as slicing_ops
from tensorflux.ops.sparse.arithmetic import SparseTensorDenseAdd
from tensorflux.ops.sparse.util import as_sparse, check_bounds, dims_of, index_matrix

__all__: list = []


def _broadcast_gather(indices, shape, dense) -> np.ndarray:
    """dense[broadcast position of each index row], dense broadcast to `shape`."""
    dims = dims_of(shape)
    d_shape = np.asarray(dense.shape, np.int64)
    tail = dims[len(dims) - len(d_shape):] if len(d_shape) else dims[:0]
    if len(d_shape) > len(dims) or np.any((d_shape != 1) & (d_shape != tail)):
        raise errors.InvalidArgumentError(
            None, None, f"SparseDenseBinaryOpShared broadcasts dense to sparse only; got "
            f"incompatible shapes: {dims.tolist()} vs. {d_shape.tolist()}")
    indices = index_matrix(indices, len(dims), "sp_indices")
    check_bounds(indices, dims, "sp_indices")
    if dense.ndim == 0:
        return np.broadcast_to(dense, (len(indices),))
    cols = np.where(d_shape == 1, 0, indices[:, len(dims) - dense.ndim:])
    return dense[tuple(cols.T)]


def _divide(x, y):
    if np.any(y == 0):  # as TF, for every dtype
        raise errors.InvalidArgumentError(
            None, None, "SparseDenseCwiseDiv cannot divide by zero, but input dense tensor "
            "contains zero")
    if np.issubdtype(x.dtype, np.integer):
        quotient = np.abs(x) // np.abs(y)
        return np.where((x < 0) != (y < 0), -quotient, quotient).astype(x.dtype)
    return (x / y).astype(x.dtype, copy=False)


def _cwise_op(name, fn, differentiable):
    op = define_op(name, inputs=["sp_indices: int64", "sp_values: T", "sp_shape: int64",
                                 "dense: T"], outputs=["output: T"], attrs=["T: {numbertype}"],
                   differentiable=differentiable)

    @op.shape_fn
    def _shape(sp_indices, sp_values, sp_shape, dense):
        sp_indices.with_rank(2)
        return sp_values.with_rank(1)

    @op.kernel
    def _kernel(sp_indices, sp_values, sp_shape, dense):
        gathered = _broadcast_gather(sp_indices, sp_shape, np.asarray(dense))
        return np.asarray(fn(np.asarray(sp_values), gathered), dtype=dense.dtype)

    return op


SparseDenseCwiseMul = _cwise_op("SparseDenseCwiseMul", np.multiply, True)
SparseDenseCwiseDiv = _cwise_op("SparseDenseCwiseDiv", _divide, True)
SparseDenseCwiseAdd = _cwise_op("SparseDenseCwiseAdd", np.add, False)


def _mul_or_div_grad(op, grad, is_mul):
    indices, values, shape, dense = op.inputs
    dense_shape = shape_ops.shape(dense, out_type=dtypes.int64)
    added = shape_ops.reshape(shape_ops.size(shape, out_type=dtypes.int64)
                              - shape_ops.size(dense_shape, out_type=dtypes.int64), [1])
    full_shape = concat_ops.concat([array_ops.ones(added, dtypes.int64), dense_shape], 0)
    scale = math_ops.floordiv(shape, math_ops.maximum(full_shape, np.int64(1)))
    scaled = math_ops.floordiv(indices, math_ops.maximum(scale, np.int64(1)))
    scaled = slicing_ops.slice(scaled, concat_ops.concat([np.zeros([1], np.int64), added], 0),
                               np.array([-1, -1], np.int64))
    dense_values = gather_ops.gather_nd(dense, scaled)
    if is_mul:
        values_grad = math_ops.multiply(grad, dense_values)
        dense_part = math_ops.multiply(grad, values)
    else:
        values_grad = math_ops.divide(grad, dense_values)
        dense_part = math_ops.multiply(
            grad, math_ops.divide(math_ops.negative(values),
                                  math_ops.multiply(dense_values, dense_values)))
    dense_grad = SparseTensorDenseAdd(scaled, dense_part, dense_shape,
                                      array_ops.zeros_like(dense))
    return [None, values_grad, None, dense_grad]


SparseDenseCwiseMul.gradient(lambda op, grad: _mul_or_div_grad(op, grad, True))
SparseDenseCwiseDiv.gradient(lambda op, grad: _mul_or_div_grad(op, grad, False))


# TF's true division of integers: small ints divide as float32, int32/int64 as float64.
_TRUEDIV_FLOAT = {dtypes.uint8: dtypes.float32, dtypes.int8: dtypes.float32,
                  dtypes.uint16: dtypes.float32, dtypes.int16: dtypes.float32,
                  dtypes.int32: dtypes.float64, dtypes.int64: dtypes.float64}


def _binary(op, name, truediv=False):
    def operator(sp, dense):
        sp = as_sparse(sp)
        with graph_mod.get_default_graph().name_scope(name):
            dense = convert_to_tensor(dense, dtype=sp.dtype.base_dtype, name="y")
            values = sp.values
            wide = _TRUEDIV_FLOAT.get(sp.dtype.base_dtype) if truediv else None
            if wide is not None:
                values, dense = math_ops.cast(values, wide), math_ops.cast(dense, wide)
            values = op(sp.indices, values, sp.dense_shape, dense)
        return SparseTensor(sp.indices, values, sp.dense_shape)

    return operator


SparseTensor.__mul__ = _binary(SparseDenseCwiseMul, "mul")
SparseTensor.__rmul__ = SparseTensor.__mul__  # dense * sparse: TF's mul dispatch
SparseTensor.__truediv__ = _binary(SparseDenseCwiseDiv, "truediv", truediv=True)
SparseTensor.__div__ = _binary(SparseDenseCwiseDiv, "div")


def sparse_dense_cwise_add(sp_t, dense_t):
    """`sp_t + dense_t` at the entries of `sp_t` (dense broadcast to the sparse shape): a
    SparseTensor with `sp_t`'s indices (TF's sparse_ops.sparse_dense_cwise_add)."""
    return _binary(SparseDenseCwiseAdd, "SparseDenseCwiseAdd")(sp_t, dense_t)
