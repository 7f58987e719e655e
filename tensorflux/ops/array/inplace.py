"""Row updates of a tensor (InplaceUpdate/Add/Sub) and Empty: TensorFlow's `inplace_ops`.

TF's kernels may write into the input buffer when nothing else reads it; here every op returns
a new array (values are never mutated), so `alias_inplace_*` are the same computation as
`inplace_*` and a tensor read after an "aliasing" update keeps its old value.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.array.shapes import expand_dims, reshape, shape
from tensorflux.ops.math.casting import cast

__all__ = ["inplace_update", "inplace_add", "inplace_sub", "alias_inplace_update",
           "alias_inplace_add", "alias_inplace_sub", "empty", "empty_like"]


def _define(op_type: str):
    op = define_op(op_type, inputs=["x: T", "i: int32", "v: T"], outputs=["y: T"],
                   attrs=["T: type"], differentiable=False)
    op.shape_fn(lambda x, i, v: x)
    return op


InplaceUpdate = _define("InplaceUpdate")
InplaceAdd = _define("InplaceAdd")
InplaceSub = _define("InplaceSub")


def _rows(x: np.ndarray, i: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The row indices `i` (negative ones counted from the end), checked against x and v."""
    if i.ndim != 1:
        raise errors.InvalidArgumentError(None, None, f"i must be a vector. {i.tolist()}")
    if x.ndim < 1 or x.shape[1:] != v.shape[1:] or v.ndim != x.ndim:
        raise errors.InvalidArgumentError(
            None, None, f"x and v shape doesn't match (ignoring the first dimension): "
            f"{list(x.shape)} vs. {list(v.shape)}")
    if i.shape[0] != v.shape[0]:
        raise errors.InvalidArgumentError(
            None, None, f"i and x shape doesn't match: {i.shape[0]} indices for "
            f"{v.shape[0]} rows of v")
    rows = np.where(i < 0, i + x.shape[0], i).astype(np.int64)
    if np.any((rows < 0) | (rows >= x.shape[0])):
        raise errors.InvalidArgumentError(
            None, None, f"i {i.tolist()} out of range for x with {x.shape[0]} rows")
    return rows


def _kernel(apply):
    def kernel(x, i, v):
        rows = _rows(x, i, v)
        out = np.array(x, copy=True)
        apply(out, rows, v)
        return out

    return kernel


def _update(out, rows, v):
    out[rows] = v


def _add(out, rows, v):
    np.add.at(out, rows, v)


def _sub(out, rows, v):
    np.subtract.at(out, rows, v)


InplaceUpdate.kernel(_kernel(_update))
InplaceAdd.kernel(_kernel(_add))
InplaceSub.kernel(_kernel(_sub))


def _inplace(op, x, i, v, name):
    with graph_mod.get_default_graph().name_scope(name or op.name):
        x = convert_to_tensor(x, name="x")
        v = convert_to_tensor(v, dtype=x.dtype.base_dtype, name="v")
        if i is None:  # the whole tensor, as one row
            flat = op(reshape(x, [1, -1]), [0], reshape(v, [1, -1]))
            return reshape(flat, shape(x))
        i = cast(convert_to_tensor(i), dtypes.int32)
        if i.shape.ndims == 0:  # one row given without its leading dimension
            return op(x, reshape(i, [1]), expand_dims(v, 0))
        return op(x, i, v)


def inplace_update(x, i, v, name=None):
    """x with rows `i` replaced by the rows of `v` (`i` None: all of x; a scalar `i`: one
    row `v`)."""
    return _inplace(InplaceUpdate, x, i, v, name)


def inplace_add(x, i, v, name=None):
    """x with the rows of `v` added to rows `i` (see `inplace_update`)."""
    return _inplace(InplaceAdd, x, i, v, name)


def inplace_sub(x, i, v, name=None):
    """x with the rows of `v` subtracted from rows `i` (see `inplace_update`)."""
    return _inplace(InplaceSub, x, i, v, name)


alias_inplace_update = inplace_update
alias_inplace_add = inplace_add
alias_inplace_sub = inplace_sub


Empty = define_op("Empty", inputs=["shape: int32"], outputs=["output: dtype"],
                  attrs=["dtype: type", "init: bool = False"], differentiable=False,
                  stateful=True)


@Empty.shape_fn(value_inputs=("shape",))
def _empty_shape(shape, *, dtype, init):
    if shape is None:
        return TensorShape(None)
    return TensorShape([int(d) for d in np.asarray(shape).reshape(-1)])


@Empty.kernel
def _empty_kernel(shape, *, dtype, init):
    dims = [int(d) for d in np.asarray(shape).reshape(-1)]
    if shape.ndim != 1 or any(d < 0 for d in dims):
        raise errors.InvalidArgumentError(None, None, f"shape must be a vector of sizes >= 0, "
                                                      f"got {np.asarray(shape).tolist()}")
    dtype = dtypes.as_dtype(dtype)
    if dtype == dtypes.string:  # strings always start empty
        out = np.empty(dims, dtype=object)
        out.fill(b"")
        return out
    return np.zeros(dims, dtype=dtype.as_numpy_dtype)  # `init` or not: zeros here


def empty(shape, dtype, init=False, name=None):
    """A tensor of `shape` and `dtype` (zeros; TF leaves it uninitialized unless `init`)."""
    return Empty(convert_to_tensor(shape, dtype=dtypes.int32), dtype=dtypes.as_dtype(dtype),
                 init=bool(init), name=name)


def empty_like(x, init=None, name=None):
    """`empty` with the shape and dtype of `x`."""
    x = convert_to_tensor(x)
    return empty(shape(x), x.dtype.base_dtype, init=bool(init), name=name)
