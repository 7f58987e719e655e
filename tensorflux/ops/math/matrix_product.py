"""Matrix products: MatMul (rank 2), BatchMatMul / BatchMatMulV2 (batched; V2 broadcasts the
batch dimensions), and the `tf.matmul` / `tf.tensordot` wrappers.

MatMul's `transpose_a/b` are plain transposes; the batch ops' `adj_x/adj_y` are adjoints
(conjugate transposes). `tf.matmul` picks BatchMatMulV2 when a rank is above 2 or unknown.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.common_shapes import broadcast_shape
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.numerics import intra_op, transpose_jit
from tensorflux.ops import array as array_ops
from tensorflux.ops.math import casting as cast_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import select as select_ops
from tensorflux.ops.math import sequence as sequence_ops
from tensorflux.ops.math.broadcast_gradient import unbroadcast
from tensorflux.ops.math.unary import Conj, conj

__all__ = ["matmul", "tensordot"]

MatMul = define_op(
    "MatMul", inputs=["a: T", "b: T"], outputs=["product: T"],
    attrs=["T: {floattype, int32, int64, uint8, uint16, uint32, uint64, complex64, complex128}",
           "transpose_a: bool = False", "transpose_b: bool = False"])


def _inner_check(inner_a, inner_b, a, b, flags):
    if inner_a is not None and inner_b is not None and inner_a != inner_b:
        raise ValueError(f"Dimensions must be equal, but are {inner_a} and {inner_b}: inner "
                         f"dimensions differ: {a} vs {b} ({flags})")


@MatMul.shape_fn
def _matmul_shape(a, b, *, transpose_a, transpose_b):
    a = a.with_rank(2)
    b = b.with_rank(2)
    a_dims, b_dims = a._dim_list, b._dim_list
    rows, inner_a = (a_dims[1], a_dims[0]) if transpose_a else (a_dims[0], a_dims[1])
    inner_b, cols = (b_dims[1], b_dims[0]) if transpose_b else (b_dims[0], b_dims[1])
    _inner_check(inner_a, inner_b, a, b,
                 f"transpose_a={transpose_a}, transpose_b={transpose_b}")
    return TensorShape([rows, cols])


# `a @ b.T` with few rows in `a` runs as `(b @ a.T).T`: OpenBLAS packs a transposed large
# operand slowly, the small one cheaply (single thread: [32, 1024] @ [1024, 512]^T 0.89 ->
# 0.61 ms, [128, 1024] @ [1024, 1024]^T 3.9 -> 3.4 ms; the same dot products, equal bits in
# every shape measured). Not for short inner or output dimensions, where it is slower. The
# transposing copy back runs in cache tiles (lib/numerics/transpose_jit.py: [1024, 128]
# float32 0.19 -> 0.10 ms).
_SWAP_MAX_ROWS = 128
_SWAP_MIN_INNER = 32
_BLAS_FLOATS = (np.float32, np.float64)


def product(a: np.ndarray, b: np.ndarray, transpose_a: bool = False,
            transpose_b: bool = False) -> np.ndarray:
    """MatMul's kernel: `op(a) @ op(b)` for 2-D arrays, through `intra_op.matmul`.

    Args:
        a, b: matrices of one dtype.
        transpose_a, transpose_b: transpose an operand first (a view, no copy).

    Returns:
        The C-contiguous product.
    """
    if transpose_b and not transpose_a and a.ndim == 2 and b.ndim == 2 and \
            a.shape[0] <= _SWAP_MAX_ROWS and b.shape[0] >= 2 * a.shape[0] and \
            a.shape[1] >= _SWAP_MIN_INNER and a.dtype.type in _BLAS_FLOATS and \
            b.dtype == a.dtype and b.flags.c_contiguous:
        return transpose_jit.transposed_copy(intra_op.matmul(b, a.T))
    return intra_op.matmul(a.T if transpose_a else a, b.T if transpose_b else b)


@MatMul.kernel(factory=True)
def _matmul_factory(transpose_a, transpose_b):
    def size_error(a, b):  # NumPy's core-dimension mismatch, in TF's words
        return errors.InvalidArgumentError(
            None, None, f"Matrix size-incompatible: In[0]: {list(a.shape)}, In[1]: "
                        f"{list(b.shape)} (transpose_a={transpose_a}, "
                        f"transpose_b={transpose_b})")

    if not transpose_a and not transpose_b:
        matmul = intra_op.matmul

        def plain_kernel(a, b):
            try:
                return matmul(a, b)
            except ValueError:
                raise size_error(a, b) from None

        return plain_kernel

    def matmul_kernel(a, b):
        try:
            return product(a, b, transpose_a, transpose_b)
        except ValueError:
            raise size_error(a, b) from None

    return matmul_kernel


_BATCH_TYPES = "{floattype, int16, int32, int64, uint8, uint16, uint32, uint64, complex64, " \
               "complex128}"
_BATCH_ATTRS = ["adj_x: bool = False", "adj_y: bool = False"]
BatchMatMul = define_op("BatchMatMul", inputs=["x: T", "y: T"], outputs=["output: T"],
                        attrs=["T: {floattype, int32, int64, complex64, complex128}",
                               *_BATCH_ATTRS])
BatchMatMulV2 = define_op("BatchMatMulV2", inputs=["x: T", "y: T"], outputs=["output: T"],
                          attrs=[f"T: {_BATCH_TYPES}", *_BATCH_ATTRS])


def _batch_shape(x, y, adj_x, adj_y, broadcast):
    if x.ndims is None or y.ndims is None:
        return TensorShape(None)
    x = x.with_rank_at_least(2)
    y = y.with_rank_at_least(2)
    x_dims, y_dims = x._dim_list, y._dim_list
    rows, inner_x = (x_dims[-1], x_dims[-2]) if adj_x else (x_dims[-2], x_dims[-1])
    inner_y, cols = (y_dims[-1], y_dims[-2]) if adj_y else (y_dims[-2], y_dims[-1])
    _inner_check(inner_x, inner_y, x, y, f"adj_x={adj_x}, adj_y={adj_y}")
    batch_x, batch_y = TensorShape(x._dim_list[:-2]), TensorShape(y._dim_list[:-2])
    if broadcast:
        batch = broadcast_shape(batch_x, batch_y)
    else:
        if batch_x.ndims != batch_y.ndims or not batch_x.is_compatible_with(batch_y):
            raise ValueError(f"BatchMatMul needs equal batch dimensions: {x} vs {y}")
        batch = batch_x.merge_with(batch_y)
    return TensorShape(list(batch._dim_list) + [rows, cols])


@BatchMatMul.shape_fn
def _batch_matmul_shape(x, y, *, adj_x, adj_y):
    return _batch_shape(x, y, adj_x, adj_y, broadcast=False)


@BatchMatMulV2.shape_fn
def _batch_matmul_v2_shape(x, y, *, adj_x, adj_y):
    return _batch_shape(x, y, adj_x, adj_y, broadcast=True)


def _adjoint(m):
    m = np.swapaxes(m, -1, -2)
    return np.conj(m) if np.iscomplexobj(m) else m


def _batch_factory(broadcast):
    def factory(adj_x, adj_y):
        def kernel(x, y):
            if x.ndim < 2 or y.ndim < 2:
                raise errors.InvalidArgumentError(
                    None, None, f"In[0] and In[1] must have rank >= 2: {list(x.shape)} vs "
                                f"{list(y.shape)}")
            if not broadcast and x.shape[:-2] != y.shape[:-2]:
                raise errors.InvalidArgumentError(
                    None, None, f"Batch dimensions must be equal: In[0] {list(x.shape)} vs "
                                f"In[1] {list(y.shape)}")
            a = _adjoint(x) if adj_x else x
            b = _adjoint(y) if adj_y else y
            if a.shape[-1] != b.shape[-2]:
                raise errors.InvalidArgumentError(
                    None, None, f"Matrix size-incompatible: In[0]: {list(x.shape)}, In[1]: "
                                f"{list(y.shape)} (adj_x={adj_x}, adj_y={adj_y})")
            try:
                return np.matmul(a, b)
            except ValueError:
                raise errors.InvalidArgumentError(
                    None, None, f"In[0] and In[1] must have compatible batch dimensions: "
                                f"{list(x.shape)} vs. {list(y.shape)}") from None

        return kernel

    return factory


BatchMatMul.kernel(_batch_factory(broadcast=False), factory=True)
BatchMatMulV2.kernel(_batch_factory(broadcast=True), factory=True)


# -- gradients --------------------------------------------------------------------------------

def _conj(t):
    if t.dtype.is_complex:
        return Conj(t)
    return t


@MatMul.gradient
def _matmul_grad(op, grad):
    ta = op.get_attr("transpose_a")
    tb = op.get_attr("transpose_b")
    a, b = _conj(op.inputs[0]), _conj(op.inputs[1])
    if not ta and not tb:
        return (MatMul(grad, b, transpose_b=True), MatMul(a, grad, transpose_a=True))
    if not ta and tb:
        return MatMul(grad, b), MatMul(grad, a, transpose_a=True)
    if ta and not tb:
        return MatMul(b, grad, transpose_b=True), MatMul(a, grad)
    return (MatMul(b, grad, transpose_a=True, transpose_b=True),
            MatMul(grad, a, transpose_a=True, transpose_b=True))


def _batch_grad(op_def):
    def grad_fn(op, grad):
        adj_x = op.get_attr("adj_x")
        adj_y = op.get_attr("adj_y")
        x, y = op.inputs

        def mm(p, q, ap=False, aq=False):
            return op_def(p, q, adj_x=ap, adj_y=aq)

        if not adj_x:
            if not adj_y:
                gx, gy = mm(grad, y, aq=True), mm(x, grad, ap=True)
            else:
                gx, gy = mm(grad, y), mm(grad, x, ap=True)
        elif not adj_y:
            gx, gy = mm(y, grad, aq=True), mm(x, grad)
        else:
            gx, gy = mm(y, grad, ap=True, aq=True), mm(grad, x, ap=True, aq=True)
        return unbroadcast(gx, x), unbroadcast(gy, y)

    return grad_fn


BatchMatMul.gradient(_batch_grad(BatchMatMul))
BatchMatMulV2.gradient(_batch_grad(BatchMatMulV2))


# -- wrappers ---------------------------------------------------------------------------------

def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, name=None):
    """Matrix product `a @ b`, batched over leading dimensions when a rank is above 2.

    Args:
        a, b: tensors of the same numeric dtype, rank >= 2.
        transpose_a, transpose_b: transpose the last two dimensions first.
        adjoint_a, adjoint_b: conjugate-transpose the last two dimensions first.
        a_is_sparse, b_is_sparse: hints that an operand is mostly zeros: float32/bfloat16
            2-D operands then use SparseMatMul (a float32 product, cast back to bfloat16
            when both are bfloat16), as TF1 does.
        name: op name (default "MatMul").

    Returns:
        The product, with broadcast batch dimensions.

    Raises:
        ValueError: both transpose and adjoint are set for one operand, or the inner
            dimensions differ.

    Example:
        >>> tf.matmul(tf.ones([5, 2, 3]), tf.ones([3, 4]))   # shape [5, 2, 4]
    """

    if transpose_a and adjoint_a:
        raise ValueError("Only one of transpose_a and adjoint_a can be True.")
    if transpose_b and adjoint_b:
        raise ValueError("Only one of transpose_b and adjoint_b can be True.")
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "MatMul") as scope:
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b", preferred_dtype=a.dtype.base_dtype)
        rank_a, rank_b = a.shape.ndims, b.shape.ndims
        if rank_a is None or rank_b is None or rank_a > 2 or rank_b > 2:
            if transpose_a:
                a, adjoint_a = conj(a), True
            if transpose_b:
                b, adjoint_b = conj(b), True
            return BatchMatMulV2(a, b, adj_x=adjoint_a, adj_y=adjoint_b, name=scope)
        if adjoint_a:
            a, transpose_a = conj(a), True
        if adjoint_b:
            b, transpose_b = conj(b), True
        a_type, b_type = a.dtype.base_dtype, b.dtype.base_dtype
        sparse_types = (dtypes.float32, dtypes.bfloat16)
        # As TF1: sparsity hints on float32/bfloat16 operands, or a bfloat16 operand mixed
        # with another dtype (MatMul takes one dtype), use SparseMatMul (float32 product).
        if ((a_is_sparse or b_is_sparse) and a_type in sparse_types and b_type in sparse_types) \
                or (dtypes.bfloat16 in (a_type, b_type) and a_type != b_type):
            # cycle: ops.sparse (its package facade) imports ops.math, which imports this module
            from tensorflux.ops.sparse.matmul import SparseMatMul

            product = SparseMatMul(a, b, transpose_a=transpose_a, transpose_b=transpose_b,
                                   a_is_sparse=a_is_sparse, b_is_sparse=b_is_sparse,
                                   name=scope)
            if a_type == dtypes.bfloat16 and b_type == dtypes.bfloat16:
                product = cast_ops.cast(product, dtypes.bfloat16)
            return product
        return MatMul(a, b, transpose_a=transpose_a, transpose_b=transpose_b, name=scope)


def _tensordot_axes(a, axes):
    """(a_axes, b_axes): Python int lists when `axes` is a Python value, else int32 tensors."""
    if isinstance(axes, (int, np.integer)):
        if axes < 0:
            raise ValueError(f"'axes' must be at least 0, got {axes}.")
        rank = a.shape.ndims
        if rank is None:
            dynamic_rank = array_ops.rank(a)
            return (sequence_ops.range(dynamic_rank - axes, dynamic_rank, dtype=dtypes.int32),
                    sequence_ops.range(axes, dtype=dtypes.int32))
        if axes > rank:
            raise ValueError(f"'axes' must not be larger than the number of dimensions of "
                             f"tensor {a.name} ({axes} > {rank}).")
        return list(range(rank - axes, rank)), list(range(axes))
    if isinstance(axes, (list, tuple)):
        if len(axes) != 2:
            raise ValueError(f"'axes' must be an integer or have length 2, got {axes}.")
        a_axes, b_axes = axes
        if isinstance(a_axes, (int, np.integer)) and isinstance(b_axes, (int, np.integer)):
            a_axes, b_axes = [a_axes], [b_axes]
        if len(a_axes) != len(b_axes):
            raise ValueError(f"Different number of contraction axes 'a' and 'b', "
                             f"{len(a_axes)} != {len(b_axes)}.")
        return [int(i) for i in a_axes], [int(i) for i in b_axes]
    axes = convert_to_tensor(axes, name="axes", dtype=dtypes.int32)
    return axes[0], axes[1]


def _tensordot_matrix(x, axes, contracted_first: bool):
    """`x` transposed to (free..., axes...) (or axes first) and flattened to a matrix.

    Returns (matrix, free_dims, static_free_dims): free_dims is a list of ints when x's shape
    is fully known and the axes are Python ints, else an int32 tensor; static_free_dims is the
    list of (possibly None) free dimensions when x's rank is known and the axes are ints.
    Raises IndexError for a static axis outside x's rank, as TF's list indexing does.
    """
    static = isinstance(axes, list)
    dims = x.shape.as_list() if x.shape.ndims is not None else None
    if static and dims is not None:
        axes = [i if i >= 0 else i + len(dims) for i in axes]
        axis_dims = [dims[i] for i in axes]  # IndexError when out of range
        free = [i for i in range(len(dims)) if i not in axes]
        free_dims = [dims[i] for i in free]
        perm = axes + free if contracted_first else free + axes
        if None not in dims:
            rows = int(np.prod(free_dims, dtype=np.int64))
            inner = int(np.prod(axis_dims, dtype=np.int64))
            if perm != list(range(len(dims))):
                x = array_ops.transpose(x, perm)
            shape = [inner, rows] if contracted_first else [rows, inner]
            return array_ops.reshape(x, shape), free_dims, free_dims
        static_free = free_dims
        axes_t = convert_to_tensor(np.array(axes, np.int32))
        free_t = convert_to_tensor(np.array(free, np.int32))
    else:
        static_free = None
        rank = array_ops.rank(x)
        axes_t = convert_to_tensor(axes, dtype=dtypes.int32)
        axes_t = select_ops.where(axes_t >= 0, axes_t, axes_t + rank)
        # cycle: ops.array.sorting imports ops.nn, whose package imports ops.math
        from tensorflux.ops.array.sorting import setdiff1d

        free_t, _ = setdiff1d(sequence_ops.range(rank), axes_t)
    shape = array_ops.shape(x)
    free_dims = array_ops.gather(shape, free_t)
    rows = reduction_ops.reduce_prod(free_dims)
    inner = reduction_ops.reduce_prod(array_ops.gather(shape, axes_t))
    order = [axes_t, free_t] if contracted_first else [free_t, axes_t]
    matrix_shape = [inner, rows] if contracted_first else [rows, inner]
    matrix = array_ops.reshape(array_ops.transpose(x, array_ops.concat(order, 0)),
                               array_ops.stack(matrix_shape))
    return matrix, free_dims, static_free


def tensordot(a, b, axes, name=None):
    """Sums the product of `a` and `b` over the given axes.

    Args:
        a, b: tensors; their shapes (even ranks) may be known only at run time.
        axes: an int N (last N axes of a with first N of b), a pair of axis lists (or ints),
            or an int32 tensor of shape [2, k].
        name: name scope (default "Tensordot").

    Returns:
        A tensor of shape a's free axes + b's free axes.

    Raises:
        ValueError: bad axes, or contracted dimensions that differ (when known).
        IndexError: a static axis outside its tensor's rank.
        InvalidArgumentError: (at run time) bad axes or shapes given as tensors.
    """

    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "Tensordot") as scope:
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b", preferred_dtype=a.dtype.base_dtype)
        a_axes, b_axes = _tensordot_axes(a, axes)
        sa = a.shape.as_list() if a.shape.ndims is not None else None
        sb = b.shape.as_list() if b.shape.ndims is not None else None
        if isinstance(a_axes, list) and sa is not None and sb is not None:
            for i, j in zip(a_axes, b_axes):
                if -len(sa) <= i < len(sa) and -len(sb) <= j < len(sb) and \
                        sa[i] is not None and sb[j] is not None and sa[i] != sb[j]:
                    raise ValueError(f"tensordot: contracted dimensions differ: a{sa}[{i}] vs "
                                     f"b{sb}[{j}]")
        a_matrix, a_free, a_static = _tensordot_matrix(a, a_axes, contracted_first=False)
        b_matrix, b_free, b_static = _tensordot_matrix(b, b_axes, contracted_first=True)
        product = MatMul(a_matrix, b_matrix)
        if isinstance(a_free, list) and isinstance(b_free, list):
            return array_ops.reshape(product, a_free + b_free, name=scope)
        out_shape = array_ops.concat([convert_to_tensor(a_free, dtype=dtypes.int32),
                                      convert_to_tensor(b_free, dtype=dtypes.int32)], 0)
        result = array_ops.reshape(product, out_shape, name=scope)
        if a_static is not None and b_static is not None:
            result.set_shape(a_static + b_static)
        return result
