"""Sparse arithmetic: SparseTensorDenseMatMul, SparseReduce{Sum,Max}[Sparse], SparseAdd,
SparseTensorDenseAdd, SparseSoftmax, SparseSparse{Maximum,Minimum}.

Kernels work on linear (row-major) positions of the index rows: sorting, grouping and matching
entries is then 1-D NumPy work (`argsort`, `unique`, `reduceat`, `searchsorted`).
"""

from __future__ import annotations

import math

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import gather_scatter as gather_ops
from tensorflux.ops.array import padding as pad_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.math import casting as cast_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import sequence as sequence_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.sparse.util import (
    as_sparse,
    check_bounds,
    dims_of,
    group_sum,
    index_matrix,
    linear,
    match_rows,
    pick,
    unlinear,
)

__all__ = ["sparse_tensor_dense_matmul", "sparse_reduce_sum", "sparse_reduce_sum_sparse",
           "sparse_reduce_max", "sparse_reduce_max_sparse", "sparse_add", "sparse_softmax",
           "sparse_maximum", "sparse_minimum"]

_NUMBER = "{numbertype}"
_REAL = "{realnumbertype}"


# -- SparseTensorDenseMatMul --------------------------------------------------------------------

SparseTensorDenseMatMul = define_op(
    "SparseTensorDenseMatMul",
    inputs=["a_indices: Tindices", "a_values: T", "a_shape: int64", "b: T"],
    outputs=["product: T"],
    attrs=["T: type", "Tindices: {int32, int64} = int64", "adjoint_a: bool = False",
           "adjoint_b: bool = False"])


@SparseTensorDenseMatMul.shape_fn(value_inputs=("a_shape",))
def _sparse_matmul_shape(a_indices, a_values, a_shape, b, *, adjoint_a, adjoint_b):
    b = b.with_rank(2)
    a_indices.with_rank(2)
    a_values.with_rank(1)
    rows = inner = None
    if a_shape is not None:
        dims = dims_of(a_shape)
        if len(dims) != 2:
            raise ValueError(f"a_shape must be a length-2 vector, got {dims.tolist()}")
        rows, inner = (int(d) for d in (dims[::-1] if adjoint_a else dims))
    b_inner, cols = (b._dim_list[::-1] if adjoint_b else b._dim_list)
    if inner is not None and b_inner is not None and inner != b_inner:
        raise ValueError(f"Dimensions must be equal, but are {inner} and {b_inner}: Cannot "
                         f"multiply A and B because inner dimension does not match")
    return TensorShape([rows, cols])


def _check_product_bounds(indices, dims, adjoint_a):
    """Each entry's output row m and inner position k must lie in the product (TF's words)."""
    m_col, k_col = (1, 0) if adjoint_a else (0, 1)
    m_size, k_size = (int(dims[1]), int(dims[0])) if adjoint_a else (int(dims[0]), int(dims[1]))
    k_bad = (indices[:, k_col] < 0) | (indices[:, k_col] >= k_size)
    m_bad = (indices[:, m_col] < 0) | (indices[:, m_col] >= m_size)
    bad = np.nonzero(k_bad | m_bad)[0]
    if bad.size:  # the first bad entry; its k is checked before its m
        i = int(bad[0])
        name, col, size = ("k", k_col, k_size) if k_bad[i] else ("m", m_col, m_size)
        raise errors.InvalidArgumentError(
            None, None, f"{name} ({indices[i, col]}) from index[{i},{col}] out of bounds "
            f"(>={size})")


@SparseTensorDenseMatMul.kernel
def _sparse_matmul_kernel(a_indices, a_values, a_shape, b, *, adjoint_a, adjoint_b):
    dims = dims_of(a_shape)
    if len(dims) != 2 or b.ndim != 2:
        raise errors.InvalidArgumentError(
            None, None, f"Tensor 'a_shape' must have 2 elements and b must be a matrix; got "
            f"a_shape {dims.tolist()}, b shape {list(b.shape)}")
    indices = index_matrix(a_indices, 2, "a_indices")
    _check_product_bounds(indices, dims, adjoint_a)
    rows, cols = indices[:, 0], indices[:, 1]
    m, k = (int(d) for d in dims)
    values = np.asarray(a_values)
    if adjoint_a:
        rows, cols, m, k = cols, rows, k, m
        values = np.conj(values) if np.iscomplexobj(values) else values
    right = b.T if adjoint_b else b
    if adjoint_b and np.iscomplexobj(right):
        right = np.conj(right)
    if right.shape[0] != k:
        raise errors.InvalidArgumentError(
            None, None, f"Cannot multiply A and B because inner dimension does not match: {k} "
            f"vs. {right.shape[0]}.  Did you forget a transpose?  Dimensions of A: "
            f"[{m}, {k}).  Dimensions of B: {list(b.shape)}")
    product = group_sum(rows, values[:, None] * right[cols], m)
    return product.astype(b.dtype, copy=False)


@SparseTensorDenseMatMul.gradient
def _sparse_matmul_grad(op, grad):
    a_indices, a_values, a_shape, b = op.inputs
    adjoint_a = op.get_attr("adjoint_a")
    adjoint_b = op.get_attr("adjoint_b")
    b_grad = SparseTensorDenseMatMul(a_indices, a_values, a_shape, grad,
                                     adjoint_a=not adjoint_a)
    if adjoint_b:
        b_grad = shape_ops.transpose(b_grad, conjugate=True)
    rows, cols = a_indices[:, 0], a_indices[:, 1]
    if adjoint_a:
        rows, cols = cols, rows
    # NOTE: complex gradients follow TF's convention (conjugates, as for MatMul).
    right_conj = shape_ops.transpose(b) if adjoint_b else unary_ops.conj(b)
    parts = math_ops.multiply(gather_ops.gather(grad, rows), gather_ops.gather(right_conj, cols))
    values_grad = reduction_ops.reduce_sum(parts, axis=1)
    if adjoint_a:
        values_grad = unary_ops.conj(values_grad)
    return [None, values_grad, None, b_grad]


def sparse_tensor_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """`op(sp_a) @ op(b)` for a rank-2 SparseTensor `sp_a` and a dense matrix `b`.

    Args:
        sp_a: SparseTensor [M, K] (indices need not be ordered; repeated indices add up).
        b: dense [K, N] tensor of the same dtype.
        adjoint_a: use the conjugate transpose of `sp_a`.
        adjoint_b: use the conjugate transpose of `b`.

    Returns:
        A dense [M, N] tensor.

    Example:
        >>> a = tf.SparseTensor([[0, 1]], [2.0], [2, 2])
        >>> tf.sparse_tensor_dense_matmul(a, tf.ones([2, 3]))   # row 0 -> [2, 2, 2]
    """
    sp_a = as_sparse(sp_a, "sp_a")
    with graph_mod.get_default_graph().name_scope(name or "SparseTensorDenseMatMul"):
        b = convert_to_tensor(b, dtype=sp_a.dtype.base_dtype, name="b")
        return SparseTensorDenseMatMul(sp_a.indices, sp_a.values, sp_a.dense_shape, b,
                                       adjoint_a=adjoint_a, adjoint_b=adjoint_b)


# -- SparseReduceSum / SparseReduceMax (dense and sparse outputs) -------------------------------

def _reduce_plan(shape, axes, keep_dims):
    """(kept dims, output shape) for reducing `axes` of a dense `shape`."""
    dims = dims_of(shape)
    rank = len(dims)
    axes = np.asarray(axes, np.int64).reshape(-1)
    for axis in axes.tolist():
        if not -rank <= axis < rank:
            raise errors.InvalidArgumentError(
                None, None, f"Invalid reduction dimension {axis}, for input with {rank} "
                "dimensions.")
    if np.any(dims < 0) or math.prod(dims.tolist()) >= 2 ** 63:
        raise errors.InvalidArgumentError(
            None, None, f"Invalid input_shape {dims.tolist()}: dimensions must be >= 0 and "
            "their product must fit in int64")
    reduced = np.zeros(rank, bool)
    reduced[axes % rank if rank else axes] = True
    kept = np.flatnonzero(~reduced)
    out_shape = np.where(reduced, 1, dims) if keep_dims else dims[kept]
    return dims, kept, out_shape.astype(np.int64)


def _reduce_shape(input_indices, input_values, input_shape, reduction_axes, keep_dims):
    if input_shape is None or reduction_axes is None:
        return TensorShape(None)
    try:
        _, _, out_shape = _reduce_plan(input_shape, reduction_axes, keep_dims)
    except errors.InvalidArgumentError:
        return TensorShape(None)  # bad axes or shape fail when run, as TF
    return TensorShape([int(d) for d in out_shape])


def _reduce_groups(indices, shape, axes, keep_dims):
    dims, kept, out_shape = _reduce_plan(shape, axes, keep_dims)
    indices = index_matrix(indices, len(dims), "input_indices")
    check_bounds(indices, dims, "input_indices")
    return linear(indices[:, kept], dims[kept]), dims, kept, out_shape


def _reduce_values(kind, groups, values, size):
    if kind == "sum":
        return group_sum(groups, values, size)
    if np.issubdtype(values.dtype, np.floating):
        lowest = -np.inf
    else:
        lowest = np.iinfo(values.dtype).min
    out = np.full(size, lowest, values.dtype)
    np.maximum.at(out, groups, values)
    return out


def _dense_reduce_kernel(kind):
    def kernel(input_indices, input_values, input_shape, reduction_axes, *, keep_dims):
        groups, _, _, out_shape = _reduce_groups(input_indices, input_shape, reduction_axes,
                                                 keep_dims)
        size = int(np.prod(out_shape))
        out = _reduce_values(kind, groups, np.asarray(input_values), size)
        if kind == "max":
            out[np.bincount(groups, minlength=size) == 0] = 0
        return out.reshape(out_shape)

    return kernel


def _sparse_reduce_kernel(kind):
    def kernel(input_indices, input_values, input_shape, reduction_axes, *, keep_dims):
        groups, dims, kept, out_shape = _reduce_groups(input_indices, input_shape,
                                                       reduction_axes, keep_dims)
        present, inverse = np.unique(groups, return_inverse=True)
        values = _reduce_values(kind, inverse.reshape(-1), np.asarray(input_values),
                                present.size)
        kept_indices = unlinear(present, dims[kept])
        if keep_dims:
            indices = np.zeros((present.size, len(dims)), np.int64)
            indices[:, kept] = kept_indices
        else:
            indices = kept_indices
        return indices, values, out_shape

    return kernel


def _reduce_op(name, kind, types, sparse_output):
    outputs = (["output_indices: int64", "output_values: T", "output_shape: int64"]
               if sparse_output else ["output: T"])
    op = define_op(name, inputs=["input_indices: int64", "input_values: T", "input_shape: int64",
                                 "reduction_axes: int32"], outputs=outputs,
                   attrs=["keep_dims: bool = False", f"T: {types}"],
                   differentiable=(name == "SparseReduceSum"))

    @op.shape_fn(value_inputs=("input_shape", "reduction_axes"))
    def _shape(input_indices, input_values, input_shape, reduction_axes, *, keep_dims):
        dense = _reduce_shape(input_indices, input_values, input_shape, reduction_axes,
                              keep_dims)
        if not sparse_output:
            return dense
        return [TensorShape([None, dense.ndims]), TensorShape([None]),
                TensorShape([dense.ndims])]

    op.kernel(_sparse_reduce_kernel(kind) if sparse_output else _dense_reduce_kernel(kind))
    return op


SparseReduceSum = _reduce_op("SparseReduceSum", "sum", _NUMBER, False)
SparseReduceSumSparse = _reduce_op("SparseReduceSumSparse", "sum", _NUMBER, True)
SparseReduceMax = _reduce_op("SparseReduceMax", "max", _REAL, False)
SparseReduceMaxSparse = _reduce_op("SparseReduceMaxSparse", "max", _REAL, True)


def gather_reduced(dense, indices, shape, axes):
    """For each index row, the element of `dense` (a keep-dims reduction of `shape` over
    `axes`) that the row was reduced into."""

    rank = shape_ops.size(shape)
    axes = math_ops.floormod(cast_ops.cast(axes, dtypes.int32), rank)
    reduced = reduction_ops.reduce_max(
        pad_ops.one_hot(shape_ops.reshape(axes, [-1]), rank, dtype=dtypes.int64), axis=0)
    kept_shape = shape - (shape - 1) * reduced
    scale = math_ops.floordiv(shape, math_ops.maximum(kept_shape, np.int64(1)))
    rows = math_ops.floordiv(indices, math_ops.maximum(scale, np.int64(1)))
    return gather_ops.gather_nd(shape_ops.reshape(dense, kept_shape), rows)


@SparseReduceSum.gradient
def _sparse_reduce_sum_grad(op, grad):
    indices, _, shape, axes = op.inputs
    return [None, gather_reduced(grad, indices, shape, axes), None, None]


def _reduction_axes(sp_input, axis):
    if axis is not None:
        return convert_to_tensor(axis, dtype=dtypes.int32, name="reduction_axes")
    rank = sp_input.shape.ndims
    if rank is not None:
        return convert_to_tensor(np.arange(rank, dtype=np.int32), name="reduction_axes")
    return sequence_ops.range(0, shape_ops.size(sp_input.dense_shape, out_type=dtypes.int32))


def _sparse_reduce(op, sp_input, axis, keepdims, reduction_axes, keep_dims):
    sp_input = as_sparse(sp_input)
    axis = pick("axis", axis, "reduction_axes", reduction_axes)
    keepdims = bool(pick("keepdims", keepdims, "keep_dims", keep_dims))
    return op(sp_input.indices, sp_input.values, sp_input.dense_shape,
              _reduction_axes(sp_input, axis), keep_dims=keepdims)


def sparse_reduce_sum(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """Sum of a SparseTensor's values over `axis` (all axes when None); a dense result.

    Example:
        >>> x = tf.SparseTensor([[0, 0], [0, 2], [1, 1]], [1, 1, 1], [2, 3])
        >>> tf.sparse_reduce_sum(x, 1)   # -> [2, 1]
    """
    return _sparse_reduce(SparseReduceSum, sp_input, axis, keepdims, reduction_axes, keep_dims)


def sparse_reduce_max(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """Max over the stored values only (implicit zeros are ignored; empty cells give 0)."""
    return _sparse_reduce(SparseReduceMax, sp_input, axis, keepdims, reduction_axes, keep_dims)


def sparse_reduce_sum_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None,
                             keep_dims=None):
    """Like `sparse_reduce_sum`, as a SparseTensor holding only the non-empty sums."""
    sp_input = as_sparse(sp_input)
    return SparseTensor(*_sparse_reduce(SparseReduceSumSparse, sp_input, axis, keepdims,
                                        reduction_axes, keep_dims))


def sparse_reduce_max_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None,
                             keep_dims=None):
    """Like `sparse_reduce_max`, as a SparseTensor holding only the non-empty maxima."""
    sp_input = as_sparse(sp_input)
    return SparseTensor(*_sparse_reduce(SparseReduceMaxSparse, sp_input, axis, keepdims,
                                        reduction_axes, keep_dims))


# -- SparseAdd, SparseAddGrad, SparseTensorDenseAdd -------------------------------------------

SparseAdd = define_op(
    "SparseAdd",
    inputs=["a_indices: int64", "a_values: T", "a_shape: int64", "b_indices: int64",
            "b_values: T", "b_shape: int64", "thresh: Treal"],
    outputs=["sum_indices: int64", "sum_values: T", "sum_shape: int64"],
    attrs=[f"T: {_NUMBER}", f"Treal: {_REAL}"])
SparseAddGrad = define_op(
    "SparseAddGrad",
    inputs=["backprop_val_grad: T", "a_indices: int64", "b_indices: int64",
            "sum_indices: int64"],
    outputs=["a_val_grad: T", "b_val_grad: T"], attrs=[f"T: {_NUMBER}"], differentiable=False)
SparseTensorDenseAdd = define_op(
    "SparseTensorDenseAdd",
    inputs=["a_indices: Tindices", "a_values: T", "a_shape: Tindices", "b: T"],
    outputs=["output: T"], attrs=[f"T: {_NUMBER}", "Tindices: {int32, int64}"])


@SparseAdd.shape_fn
def _sparse_add_shape(a_indices, a_values, a_shape, b_indices, b_values, b_shape, thresh):
    rank = a_shape.with_rank(1).merge_with(b_shape.with_rank(1))._dim_list[0]
    thresh.with_rank(0)
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


def _same_shapes(a_shape, b_shape, what="Operand"):
    a_dims, b_dims = dims_of(a_shape), dims_of(b_shape)
    if a_dims.shape != b_dims.shape or np.any(a_dims != b_dims):
        raise errors.InvalidArgumentError(
            None, None, f"{what} shapes do not match: A.shape = {a_dims.tolist()} vs. "
            f"B.shape = {b_dims.tolist()}")
    return a_dims


@SparseAdd.kernel
def _sparse_add_kernel(a_indices, a_values, a_shape, b_indices, b_values, b_shape, thresh):
    dims = _same_shapes(a_shape, b_shape)
    a_indices = index_matrix(a_indices, len(dims), "a_indices")
    b_indices = index_matrix(b_indices, len(dims), "b_indices")
    # Entries are matched by their index rows, in row-major order, without a bounds check
    # (as TF: an index outside the dense shape is added like any other).
    rows = np.concatenate([a_indices, b_indices]).astype(np.int64, copy=False)
    values = np.concatenate([np.asarray(a_values), np.asarray(b_values)])
    if len(dims) == 0:
        present = rows[:1]
        inverse = np.zeros(len(rows), np.int64)
        counts = np.array([len(rows)])[:len(present)]
    else:
        present, inverse, counts = np.unique(rows, axis=0, return_inverse=True,
                                             return_counts=True)
    sums = group_sum(inverse.reshape(-1), values, len(present))
    keep = (counts < 2) | (np.abs(sums) >= thresh)
    return present[keep].reshape(-1, len(dims)), sums[keep], dims


@SparseAddGrad.shape_fn
def _sparse_add_grad_shape(backprop_val_grad, a_indices, b_indices, sum_indices):
    return [TensorShape([a_indices.with_rank(2)._dim_list[0]]),
            TensorShape([b_indices.with_rank(2)._dim_list[0]])]


@SparseAddGrad.kernel
def _sparse_add_grad_kernel(backprop_val_grad, a_indices, b_indices, sum_indices):
    rank = np.shape(sum_indices)[1]
    table = np.asarray(sum_indices, np.int64).reshape(-1, rank)
    grads = []
    for indices in (a_indices, b_indices):
        pos = match_rows(np.asarray(indices, np.int64).reshape(-1, rank), table)
        picked = backprop_val_grad[np.maximum(pos, 0)] if len(table) else \
            np.zeros(len(pos), backprop_val_grad.dtype)
        grads.append(np.where(pos >= 0, picked, 0).astype(backprop_val_grad.dtype))
    return tuple(grads)


@SparseAdd.gradient
def _sparse_add_grad(op, indices_grad, values_grad, shape_grad):
    a_grad, b_grad = SparseAddGrad(values_grad, op.inputs[0], op.inputs[3], op.outputs[0])
    return [None, a_grad, None, None, b_grad, None, None]


@SparseTensorDenseAdd.shape_fn
def _sparse_dense_add_shape(a_indices, a_values, a_shape, b):
    return b


@SparseTensorDenseAdd.kernel
def _sparse_dense_add_kernel(a_indices, a_values, a_shape, b):
    dims = _same_shapes(a_shape, np.asarray(b.shape, np.int64), "Dimension")
    indices = index_matrix(a_indices, len(dims), "a_indices")
    check_bounds(indices, dims, "a_indices")
    out = np.array(b, copy=True)
    if len(dims) == 0:
        return out + np.sum(a_values).astype(b.dtype)
    np.add.at(out, tuple(indices.T), np.asarray(a_values, b.dtype))
    return out


@SparseTensorDenseAdd.gradient
def _sparse_dense_add_grad(op, grad):
    return [None, gather_ops.gather_nd(grad, op.inputs[0]), None, grad]


def _sparse_result(op, *args, **kwargs):
    out = op(*args, **kwargs)
    return SparseTensor(out[0], out[1], out[2])


def sparse_add(a, b, threshold=None, thresh=None):
    """`a + b` where at least one side is a SparseTensor.

    Sparse + sparse gives a SparseTensor; an entry present in both operands is dropped when
    the magnitude of the sum is below `threshold` (default 0: keep all). Sparse + dense gives
    a dense tensor.

    Raises:
        TypeError: neither operand is sparse.
    """
    threshold = pick("threshold", threshold, "thresh", thresh)
    a_sparse = isinstance(a, (SparseTensor, SparseTensorValue))
    b_sparse = isinstance(b, (SparseTensor, SparseTensorValue))
    if not a_sparse and not b_sparse:
        raise TypeError("sparse_add: at least one of a and b must be a SparseTensor")
    with graph_mod.get_default_graph().name_scope("SparseAdd"):
        if a_sparse and b_sparse:
            a, b = as_sparse(a, "a"), as_sparse(b, "b")
            a.shape.merge_with(b.shape)  # as TF: static shapes that differ fail here
            real = a.dtype.base_dtype.real_dtype if a.dtype.is_complex else a.dtype.base_dtype
            thresh_t = convert_to_tensor(0 if threshold is None else threshold, dtype=real,
                                         name="threshold")
            return _sparse_result(SparseAdd, a.indices, a.values, a.dense_shape, b.indices,
                                  b.values, b.dense_shape, thresh_t)
        sparse, dense = (a, b) if a_sparse else (b, a)
        sparse = as_sparse(sparse)
        dense = convert_to_tensor(dense, dtype=sparse.dtype.base_dtype, name="b")
        return SparseTensorDenseAdd(sparse.indices, sparse.values, sparse.dense_shape, dense)


# -- SparseSoftmax ------------------------------------------------------------------------------

SparseSoftmax = define_op("SparseSoftmax",
                          inputs=["sp_indices: int64", "sp_values: T", "sp_shape: int64"],
                          outputs=["output: T"], attrs=["T: {float16, float32, float64}"])


@SparseSoftmax.shape_fn
def _sparse_softmax_shape(sp_indices, sp_values, sp_shape):
    return sp_values.with_rank(1)


def _row_groups(indices, shape, what):
    dims = dims_of(shape)
    if len(dims) < 2:
        raise errors.InvalidArgumentError(
            None, None, f"{what} needs a SparseTensor of rank >= 2, got rank {len(dims)}")
    if np.any(dims < 0) or math.prod(dims.tolist()) >= 2 ** 63:
        raise errors.InvalidArgumentError(
            None, None, f"{what}: invalid sp_shape {dims.tolist()}: dimensions must be >= 0 "
            "and their product must fit in int64")
    indices = index_matrix(indices, len(dims), "sp_indices")
    check_bounds(indices, dims, "sp_indices")
    _, groups = np.unique(linear(indices[:, :-1], dims[:-1]), return_inverse=True)
    return groups.reshape(-1)


@SparseSoftmax.kernel
def _sparse_softmax_kernel(sp_indices, sp_values, sp_shape):
    groups = _row_groups(sp_indices, sp_shape, "SparseSoftmax")
    values = np.asarray(sp_values)
    if values.size == 0:
        return values.copy()
    size = int(groups.max()) + 1
    top = np.full(size, -np.inf, values.dtype)
    np.maximum.at(top, groups, values)
    exp = np.exp(values - top[groups])
    return (exp / group_sum(groups, exp, size)[groups]).astype(values.dtype, copy=False)


@SparseSoftmax.gradient
def _sparse_softmax_grad(op, grad):
    indices, _, shape = op.inputs
    y = op.outputs[0]
    weighted = SparseReduceSum(indices, math_ops.multiply(grad, y), shape, [-1], keep_dims=True)
    row_sums = gather_reduced(weighted, indices, shape, [-1])
    return [None, math_ops.multiply(math_ops.subtract(grad, row_sums), y), None]


def sparse_softmax(sp_input, name=None):
    """Softmax over the last dimension of a SparseTensor, among the stored entries only.

    Returns:
        A SparseTensor with `sp_input`'s indices and shape and the softmax values.
    """
    sp_input = as_sparse(sp_input)
    values = SparseSoftmax(sp_input.indices, sp_input.values, sp_input.dense_shape, name=name)
    return SparseTensor(sp_input.indices, values, sp_input.dense_shape)


# -- SparseSparseMaximum / SparseSparseMinimum --------------------------------------------------

def _sparse_sparse_op(name, fn, types):
    op = define_op(name, inputs=["a_indices: int64", "a_values: T", "a_shape: int64",
                                 "b_indices: int64", "b_values: T", "b_shape: int64"],
                   outputs=["output_indices: int64", "output_values: T"],
                   attrs=[f"T: {types}"], differentiable=False)

    @op.shape_fn
    def _shape(a_indices, a_values, a_shape, b_indices, b_values, b_shape):
        a_rank, b_rank = a_shape.with_rank(1)._dim_list[0], b_shape.with_rank(1)._dim_list[0]
        rank = a_rank if a_rank == b_rank else None  # a mismatch fails when run (as TF)
        return [TensorShape([None, rank]), TensorShape([None])]

    @op.kernel
    def _kernel(a_indices, a_values, a_shape, b_indices, b_values, b_shape):
        a_dims, b_dims = dims_of(a_shape), dims_of(b_shape)
        if a_dims.size != b_dims.size:
            raise errors.InvalidArgumentError(
                None, None, f"Operands do not have the same ranks; got shapes: "
                f"{a_dims.tolist()} and {b_dims.tolist()}")
        for d, (a, b) in enumerate(zip(a_dims.tolist(), b_dims.tolist())):
            if a != b:
                raise errors.InvalidArgumentError(
                    None, None, f"Operands' shapes do not match: got {a} and {b} for "
                    f"dimension {d}")
        dims = a_dims
        a_indices = index_matrix(a_indices, len(dims), "a_indices")
        b_indices = index_matrix(b_indices, len(dims), "b_indices")
        check_bounds(a_indices, dims, "a_indices")
        check_bounds(b_indices, dims, "b_indices")
        a_flat, b_flat = linear(a_indices, dims), linear(b_indices, dims)
        union = np.union1d(a_flat, b_flat)
        dense_a = np.zeros(union.size, a_values.dtype)
        dense_b = np.zeros(union.size, b_values.dtype)
        dense_a[np.searchsorted(union, a_flat)] = a_values
        dense_b[np.searchsorted(union, b_flat)] = b_values
        return unlinear(union, dims), fn(dense_a, dense_b)

    return op


SparseSparseMaximum = _sparse_sparse_op("SparseSparseMaximum", np.maximum, _REAL)
SparseSparseMinimum = _sparse_sparse_op("SparseSparseMinimum", np.minimum, _NUMBER)


def _sparse_sparse(op, sp_a, sp_b, name):
    sp_a, sp_b = as_sparse(sp_a, "sp_a"), as_sparse(sp_b, "sp_b")
    out = op(sp_a.indices, sp_a.values, sp_a.dense_shape, sp_b.indices, sp_b.values,
             sp_b.dense_shape, name=name)
    return SparseTensor(out.output_indices, out.output_values, sp_a.dense_shape)


def sparse_maximum(sp_a, sp_b, name=None):
    """Element-wise max of two SparseTensors of the same shape (missing entries count as 0).

    Example:
        >>> a = tf.SparseTensor([[0], [1]], [-1.0, 3.0], [2])
        >>> b = tf.SparseTensor([[1]], [4.0], [2])
        >>> tf.sparse_maximum(a, b)   # indices [[0], [1]], values [0., 4.]
    """
    return _sparse_sparse(SparseSparseMaximum, sp_a, sp_b, name)


def sparse_minimum(sp_a, sp_b, name=None):
    """Element-wise min of two SparseTensors of the same shape (missing entries count as 0)."""
    return _sparse_sparse(SparseSparseMinimum, sp_a, sp_b, name)
