"""Diagonal and band ops (Diag, MatrixDiag, MatrixBandPart, ...), eye, meshgrid and the
space/depth rearrangements."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import constants as constant_ops
from tensorflux.ops.array.concat_split import concat, stack
from tensorflux.ops.array.constants import ones, zeros
from tensorflux.ops.array.gradient_helpers import dense_gradient
from tensorflux.ops.array.shapes import broadcast_to, reshape, size

__all__ = ["matrix_band_part", "diag", "diag_part", "matrix_diag", "matrix_diag_part",
           "matrix_set_diag", "eye", "meshgrid", "space_to_depth", "depth_to_space"]

_DIAG_TYPES = "{bfloat16, float16, float32, float64, int32, int64, complex64, complex128}"


# -- MatrixBandPart ---------------------------------------------------------------------------

MatrixBandPart = define_op(
    "MatrixBandPart", inputs=["input: T", "num_lower: Tindex", "num_upper: Tindex"],
    outputs=["band: T"], attrs=["T: type", "Tindex: {int32, int64} = int64"])


def _at_least(shape, rank: int):
    """`shape` with rank >= `rank`, else TF's shape-function error."""
    if shape.ndims is not None and shape.ndims < rank:
        raise ValueError(f"Shape must be at least rank {rank} but is rank {shape.ndims}")
    return shape.with_rank_at_least(rank)


def _check_kernel_rank(x, rank: int) -> None:
    if x.ndim < rank:
        raise errors.InvalidArgumentError(
            None, None, f"input must be at least {rank}-dim, received shape: {list(x.shape)}")


@MatrixBandPart.shape_fn
def _matrix_band_part_shape(input, num_lower, num_upper):
    num_lower.with_rank(0)
    num_upper.with_rank(0)
    return _at_least(input, 2)


@MatrixBandPart.kernel
def _matrix_band_part_kernel(x, num_lower, num_upper):
    rows, cols = x.shape[-2:]
    lower, upper = int(num_lower), int(num_upper)
    if lower > rows:
        raise errors.InvalidArgumentError(
            None, None, f"num_lower must be negative or less or equal to number of rows "
                        f"({rows}) got: {lower}")
    if upper > cols:
        raise errors.InvalidArgumentError(
            None, None, f"num_upper must be negative or less or equal to number of columns "
                        f"({cols}) got: {upper}")
    offset = np.arange(cols)[None, :] - np.arange(rows)[:, None]  # j - i
    keep = np.ones((rows, cols), dtype=bool)
    if lower >= 0:
        keep &= -offset <= lower
    if upper >= 0:
        keep &= offset <= upper
    return np.where(keep, x, np.zeros((), x.dtype))


@MatrixBandPart.gradient
def _matrix_band_part_grad(op, grad):
    return [matrix_band_part(dense_gradient(grad), op.inputs[1], op.inputs[2]), None, None]


def matrix_band_part(input, num_lower, num_upper, name=None):
    """Keeps a band of each innermost matrix: `num_lower` subdiagonals and `num_upper`
    superdiagonals (negative: all of them); zeros elsewhere."""
    return MatrixBandPart(input, num_lower, num_upper, name=name)


# -- Diag, DiagPart ---------------------------------------------------------------------------

Diag = define_op("Diag", inputs=["diagonal: T"], outputs=["output: T"],
                 attrs=[f"T: {_DIAG_TYPES}"])
DiagPart = define_op("DiagPart", inputs=["input: T"], outputs=["diagonal: T"],
                     attrs=[f"T: {_DIAG_TYPES}"])


@Diag.shape_fn
def _diag_shape(diagonal):
    if diagonal.ndims is None:
        return TensorShape(None)
    if diagonal.ndims < 1:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    return diagonal.concatenate(diagonal)


@Diag.kernel
def _diag_kernel(d):
    return np.diagflat(d).reshape(d.shape + d.shape)


@Diag.gradient
def _diag_grad(op, grad):
    return diag_part(grad)


@DiagPart.shape_fn
def _diag_part_shape(input):
    if input.ndims is None:
        return TensorShape(None)
    if input.ndims == 0 or input.ndims % 2:
        raise ValueError(f"Input must have even and non-zero rank, input rank is {input.ndims}")
    half = input.ndims // 2
    out = []
    for a, b in zip(input._dim_list[:half], input._dim_list[half:]):
        if a is not None and b is not None and a != b:
            raise ValueError(f"Dimensions must be equal, but are {a} and {b} (input shape "
                             f"{input})")
        out.append(a if a is not None else b)
    return TensorShape(out)


@DiagPart.kernel
def _diag_part_kernel(x):
    half = x.ndim // 2
    if x.ndim == 0 or x.ndim % 2 or x.shape[:half] != x.shape[half:]:
        raise errors.InvalidArgumentError(
            None, None, f"DiagPart expects a tensor of shape s + s, got {list(x.shape)}")
    n = int(np.prod(x.shape[:half], dtype=np.int64))
    return x.reshape(n, n).diagonal().reshape(x.shape[:half]).copy()


@DiagPart.gradient
def _diag_part_grad(op, grad):
    return diag(grad)


def diag(diagonal, name=None):
    """A tensor of rank 2k with `diagonal` (rank k) on its diagonal."""
    return Diag(diagonal, name=name)


def diag_part(input, name=None):
    """The diagonal of a rank-2k tensor of shape `s + s`."""
    return DiagPart(input, name=name)


# -- MatrixDiag, MatrixDiagPart, MatrixSetDiag --------------------------------------------------

MatrixDiag = define_op("MatrixDiag", inputs=["diagonal: T"], outputs=["output: T"],
                       attrs=["T: type"])
MatrixDiagPart = define_op("MatrixDiagPart", inputs=["input: T"], outputs=["diagonal: T"],
                           attrs=["T: type"])
MatrixSetDiag = define_op("MatrixSetDiag", inputs=["input: T", "diagonal: T"],
                          outputs=["output: T"], attrs=["T: type"])


@MatrixDiag.shape_fn
def _matrix_diag_shape(diagonal):
    diagonal = _at_least(diagonal, 1)
    if diagonal.ndims is None:
        return TensorShape(None)
    return diagonal.concatenate([diagonal._dim_list[-1]])


@MatrixDiag.kernel
def _matrix_diag_kernel(d):
    _check_kernel_rank(d, 1)
    n = d.shape[-1]
    out = np.zeros(d.shape + (n,), dtype=d.dtype)
    i = np.arange(n)
    out[..., i, i] = d
    return out


@MatrixDiag.gradient
def _matrix_diag_grad(op, grad):
    return matrix_diag_part(grad)


@MatrixDiagPart.shape_fn
def _matrix_diag_part_shape(input):
    input = _at_least(input, 2)
    if input.ndims is None:
        return TensorShape(None)
    rows, cols = input._dim_list[-2:]
    size = None if rows is None or cols is None else min(rows, cols)
    return TensorShape(list(input._dim_list[:-2]) + [size])


@MatrixDiagPart.kernel
def _matrix_diag_part_kernel(x):
    _check_kernel_rank(x, 2)
    return np.diagonal(x, axis1=-2, axis2=-1)


@MatrixDiagPart.gradient
def _matrix_diag_part_grad(op, grad):
    x = op.inputs[0]
    if x.shape.is_fully_defined() and x.shape._dim_list[-1] == x.shape._dim_list[-2]:
        return matrix_diag(grad)
    return matrix_set_diag(constant_ops.zeros_like(x), grad)


@MatrixSetDiag.shape_fn
def _matrix_set_diag_shape(input, diagonal):
    expected = _matrix_diag_part_shape(input)
    diagonal = _at_least(diagonal, 1)
    if not diagonal.is_compatible_with(expected):
        raise ValueError(f"diagonal shape {diagonal} must be {expected} for input shape "
                         f"{input}")
    if input.ndims is None or diagonal.ndims is None:
        return input
    # TF: the batch dims the diagonal knows refine the output's
    batch = input[:-2].merge_with(diagonal[:-1])
    return batch.concatenate(input[-2:])


@MatrixSetDiag.kernel
def _matrix_set_diag_kernel(x, d):
    _check_kernel_rank(x, 2)
    n = min(x.shape[-2:]) if x.ndim >= 2 else 0
    if x.ndim < 2 or d.shape != x.shape[:-2] + (n,):
        raise errors.InvalidArgumentError(
            None, None, f"diagonal shape {list(d.shape)} does not match input shape "
                        f"{list(x.shape)}: expected {list(x.shape[:-2]) + [n]}")
    out = x.copy()
    i = np.arange(n)
    out[..., i, i] = d
    return out


@MatrixSetDiag.gradient
def _matrix_set_diag_grad(op, grad):
    grad = dense_gradient(grad)
    return [matrix_set_diag(grad, constant_ops.zeros_like(op.inputs[1])), matrix_diag_part(grad)]


def matrix_diag(diagonal, name="diag"):
    """Batched diagonal matrices: `[..., n] -> [..., n, n]`."""
    return MatrixDiag(diagonal, name=name)


def matrix_diag_part(input, name="diag_part"):
    """The main diagonals of a batch of matrices: `[..., m, n] -> [..., min(m, n)]`."""
    return MatrixDiagPart(input, name=name)


def matrix_set_diag(input, diagonal, name="set_diag"):
    """`input` with the main diagonal of each innermost matrix replaced by `diagonal`."""
    return MatrixSetDiag(input, diagonal, name=name)


# -- eye, meshgrid ----------------------------------------------------------------------------

def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """Identity matrices (optionally rectangular, optionally batched)."""

    with graph_mod.get_default_graph().name_scope(name or "eye"):
        is_square = num_columns is None
        batch_shape = [] if batch_shape is None else batch_shape
        num_columns = num_rows if num_columns is None else num_columns
        static = not any(isinstance(v, Tensor) for v in (num_rows, num_columns, batch_shape))
        if static:
            batch = list(as_shape(batch_shape).as_list())
            diag_size = min(int(num_rows), int(num_columns))
            diag_shape = batch + [diag_size]
            shape = batch + [int(num_rows), int(num_columns)]
        else:
            rows = convert_to_tensor(num_rows, dtype=dtypes.int32)
            cols = convert_to_tensor(num_columns, dtype=dtypes.int32)
            batch = convert_to_tensor(batch_shape, dtype=dtypes.int32)
            diag_size = math_ops.minimum(rows, cols)
            diag_shape = concat([batch, [diag_size]], 0)
            shape = concat([batch, [rows, cols]], 0)
        diag_ones = ones(diag_shape, dtype=dtype)
        if is_square:
            return matrix_diag(diag_ones)
        return matrix_set_diag(zeros(shape, dtype=dtype), diag_ones)


def meshgrid(*args, **kwargs):
    """N-D coordinate arrays from 1-D ones (`indexing='xy'` swaps the first two outputs' axes)."""

    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise TypeError(f"'{next(iter(kwargs))}' is an invalid keyword argument for this "
                        "function")
    if indexing not in ("xy", "ij"):
        raise ValueError("indexing parameter must be either 'xy' or 'ij'")
    with graph_mod.get_default_graph().name_scope(name):
        ndim = len(args)
        tensors = [convert_to_tensor(a) for a in args]
        outputs = []
        for i, x in enumerate(tensors):
            shape = [1] * ndim
            shape[i] = -1
            outputs.append(reshape(reshape(x, [-1]), shape))
        sizes = [size(x) for x in tensors]
        if indexing == "xy" and ndim > 1:
            outputs[0] = reshape(outputs[0], [1, -1] + [1] * (ndim - 2))
            outputs[1] = reshape(outputs[1], [-1, 1] + [1] * (ndim - 2))
            sizes[0], sizes[1] = sizes[1], sizes[0]
        full = stack(sizes)
        return [broadcast_to(x, full) for x in outputs]


# -- SpaceToDepth, DepthToSpace ---------------------------------------------------------------

_BLOCK_ATTRS = ["T: type", "block_size: int >= 2", "data_format: {'NHWC', 'NCHW'} = 'NHWC'"]
SpaceToDepth = define_op("SpaceToDepth", inputs=["input: T"], outputs=["output: T"],
                         attrs=_BLOCK_ATTRS)
DepthToSpace = define_op("DepthToSpace", inputs=["input: T"], outputs=["output: T"],
                         attrs=_BLOCK_ATTRS)


def _nhwc(shape: TensorShape, data_format: str):
    dims = list(shape.with_rank(4)._dim_list) if shape.ndims is not None else [None] * 4
    return dims if data_format == "NHWC" else [dims[0], dims[2], dims[3], dims[1]]


def _from_nhwc(dims, data_format: str) -> TensorShape:
    if data_format == "NHWC":
        return TensorShape(dims)
    return TensorShape([dims[0], dims[3], dims[1], dims[2]])


def _div(value, block, what):
    if value is None:
        return None
    if value % block:
        raise ValueError(f"Dimension size must be evenly divisible by {block} but is {value} "
                         f"({what.lower()})")
    return value // block


def _mul(value, block):
    return None if value is None else value * block


@SpaceToDepth.shape_fn
def _space_to_depth_shape(input, *, block_size, data_format):
    n, h, w, c = _nhwc(input, data_format)
    return _from_nhwc([n, _div(h, block_size, "Image height"),
                       _div(w, block_size, "Image width"), _mul(c, block_size * block_size)],
                      data_format)


@DepthToSpace.shape_fn
def _depth_to_space_shape(input, *, block_size, data_format):
    n, h, w, c = _nhwc(input, data_format)
    return _from_nhwc([n, _mul(h, block_size), _mul(w, block_size),
                       _div(c, block_size * block_size, "Input depth")], data_format)


def _to_nhwc_array(x, data_format):
    if x.ndim != 4:
        raise errors.InvalidArgumentError(None, None, f"Input rank should be 4 instead of "
                                                      f"{x.ndim}")
    return x if data_format == "NHWC" else x.transpose(0, 2, 3, 1)


def _from_nhwc_array(x, data_format):
    return x if data_format == "NHWC" else x.transpose(0, 3, 1, 2)


@SpaceToDepth.kernel
def _space_to_depth_kernel(x, *, block_size, data_format):
    x = _to_nhwc_array(x, data_format)
    n, h, w, c = x.shape
    b = block_size
    if h % b or w % b:
        raise errors.InvalidArgumentError(
            None, None, f"Image width {w} and height {h} should be divisible by block_size: {b}")
    y = x.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5)
    return _from_nhwc_array(y.reshape(n, h // b, w // b, b * b * c), data_format)


@SpaceToDepth.gradient
def _space_to_depth_grad(op, grad):
    return depth_to_space(grad, op.get_attr("block_size"),
                            data_format=op.get_attr_str("data_format"))


@DepthToSpace.kernel
def _depth_to_space_kernel(x, *, block_size, data_format):
    x = _to_nhwc_array(x, data_format)
    n, h, w, c = x.shape
    b = block_size
    if c % (b * b):
        raise errors.InvalidArgumentError(
            None, None, f"Input depth dimension {c} should be divisible by: {b * b}")
    y = x.reshape(n, h, w, b, b, c // (b * b)).transpose(0, 1, 3, 2, 4, 5)
    return _from_nhwc_array(y.reshape(n, h * b, w * b, c // (b * b)), data_format)


@DepthToSpace.gradient
def _depth_to_space_grad(op, grad):
    return space_to_depth(grad, op.get_attr("block_size"),
                            data_format=op.get_attr_str("data_format"))


def space_to_depth(input, block_size, name=None, data_format="NHWC"):
    """Moves `block_size x block_size` spatial blocks into the depth dimension."""
    return SpaceToDepth(input, block_size=block_size, data_format=data_format, name=name)


def depth_to_space(input, block_size, name=None, data_format="NHWC"):
    """The inverse of `space_to_depth`."""
    return DepthToSpace(input, block_size=block_size, data_format=data_format, name=name)
