"""`tf.sparse_matmul` (op SparseMatMul): a dense float32 matrix product whose `a_is_sparse` /
`b_is_sparse` attrs are hints that an operand has many zeros. NumPy's BLAS product is used
either way, so the hints change nothing but are kept for GraphDef compatibility."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.math import casting as cast_ops

__all__ = ["sparse_matmul"]

SparseMatMul = define_op(
    "SparseMatMul", inputs=["a: Ta", "b: Tb"], outputs=["product: float32"],
    attrs=["transpose_a: bool = False", "transpose_b: bool = False",
           "a_is_sparse: bool = False", "b_is_sparse: bool = False",
           "Ta: {float32, bfloat16} = float32", "Tb: {float32, bfloat16} = float32"])


@SparseMatMul.shape_fn
def _sparse_matmul_shape(a, b, *, transpose_a, transpose_b):
    a, b = a.with_rank(2), b.with_rank(2)
    rows, inner = a._dim_list[::-1] if transpose_a else a._dim_list
    b_inner, cols = b._dim_list[::-1] if transpose_b else b._dim_list
    if inner is not None and b_inner is not None and inner != b_inner:
        raise ValueError(f"Dimensions must be equal, but are {inner} and {b_inner} for "
                         f"shapes {a} and {b}")
    return TensorShape([rows, cols])


@SparseMatMul.kernel
def _sparse_matmul_kernel(a, b, *, transpose_a, transpose_b):
    left = np.asarray(a, np.float32)
    right = np.asarray(b, np.float32)
    left = left.T if transpose_a else left
    right = right.T if transpose_b else right
    if left.shape[1] != right.shape[0]:
        raise errors.InvalidArgumentError(
            None, None, f"Matrix size-incompatible: In[0]: {list(a.shape)}, In[1]: "
            f"{list(b.shape)}")
    return np.matmul(left, right)


@SparseMatMul.gradient
def _sparse_matmul_grad(op, grad):
    a, b = op.inputs
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    a_sparse, b_sparse = op.get_attr("a_is_sparse"), op.get_attr("b_is_sparse")

    def product(x, y, tx, ty, x_sparse, y_sparse):
        return SparseMatMul(x, y, transpose_a=tx, transpose_b=ty, a_is_sparse=x_sparse,
                            b_is_sparse=y_sparse)

    if not ta and not tb:
        da = product(grad, b, False, True, False, b_sparse)
        db = product(a, grad, True, False, a_sparse, False)
    elif not ta and tb:
        da = product(grad, b, False, False, False, b_sparse)
        db = product(grad, a, True, False, False, a_sparse)
    elif ta and not tb:
        da = product(b, grad, False, True, b_sparse, False)
        db = product(a, grad, False, False, a_sparse, False)
    else:
        da = product(b, grad, True, True, b_sparse, False)
        db = product(grad, a, True, True, False, a_sparse)
    return [cast_ops.cast(da, a.dtype.base_dtype), cast_ops.cast(db, b.dtype.base_dtype)]


def sparse_matmul(a, b, transpose_a=False, transpose_b=False, a_is_sparse=False,
                  b_is_sparse=False, name=None):
    """`a @ b` for float32/bfloat16 matrices, with hints that an operand is mostly zeros.

    Returns:
        A float32 matrix.

    Example:
        >>> tf.sparse_matmul([[1.0, 0.0]], [[2.0], [3.0]], a_is_sparse=True)   # [[2.]]
    """
    a = convert_to_tensor(a, name="a")
    b = convert_to_tensor(b, name="b")
    for t, what in ((a, "a"), (b, "b")):
        if t.dtype.base_dtype not in (dtypes.float32, dtypes.bfloat16):
            raise TypeError(f"sparse_matmul: {what} must be float32 or bfloat16, got "
                            f"{t.dtype.name}")
    return SparseMatMul(a, b, transpose_a=transpose_a, transpose_b=transpose_b,
                        a_is_sparse=a_is_sparse, b_is_sparse=b_is_sparse, name=name)
