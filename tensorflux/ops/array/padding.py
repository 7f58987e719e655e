"""Tile, pad (constant and mirror), reverse, reverse_sequence and one_hot."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.array import slicing as slicing_ops
from tensorflux.ops.array.gradient_helpers import dense_gradient, reshape_like
from tensorflux.ops.array.util import INDEX_TYPES as _INDEX_TYPES
from tensorflux.ops.math import reduction as reduction_ops

__all__ = ["tile", "pad", "reverse", "reverse_v2", "reverse_sequence", "one_hot"]

# -- Tile -------------------------------------------------------------------------------------

Tile = define_op("Tile", inputs=["input: T", "multiples: Tmultiples"], outputs=["output: T"],
                 attrs=["T: type", f"Tmultiples: {_INDEX_TYPES}"])


def _multiply_dims(d, m):
    """A dimension times a multiple, either possibly unknown (0 and 1 decide alone)."""
    if d == 0 or m == 0:
        return 0
    if d == 1:
        return m
    if m == 1:
        return d
    return None if d is None or m is None else d * m


@Tile.shape_fn(static_inputs=("multiples",))
def _tile_shape(input, multiples):
    length = multiples.shape.with_rank(1).as_list()[0]
    known = multiples.as_shape()  # partly known multiples give the dims they can (TF)
    if known.ndims is None:
        known = unknown_shape(length if input.ndims is None else input.ndims)
    if input.ndims is not None and known.ndims is not None and input.ndims != known.ndims:
        raise ValueError(f"Shape must be rank {input.ndims} but is rank {known.ndims}: "
                         f"multiples {known} must have one entry per input dimension")
    if known.ndims is None:
        return TensorShape(None)
    value = multiples.value
    if value is not None and np.size(value) and np.min(value) < 0:
        raise ValueError(f"Expected multiples to be non-negative, got {value.tolist()}")
    in_dims = input._dim_list if input.ndims is not None else [None] * known.ndims
    return TensorShape([_multiply_dims(d, m) for d, m in zip(in_dims, known._dim_list)])


@Tile.kernel
def _tile_kernel(x, multiples):
    if multiples.ndim != 1:
        raise errors.InvalidArgumentError(
            None, None, f"Expected multiples to be 1-D, but got shape {list(multiples.shape)}")
    if multiples.shape != (x.ndim,) or (multiples.size and multiples.min() < 0):
        raise errors.InvalidArgumentError(
            None, None, f"Expected multiples argument to be a vector of length {x.ndim} with "
                        f"non-negative entries, got {multiples.tolist()}")
    return np.tile(x, multiples)


@Tile.gradient
def _tile_grad(op, grad):
    x = op.inputs[0]
    grad = dense_gradient(grad)
    multiples = op.inputs[1]
    if x.shape.is_fully_defined() and constant_value(multiples) is not None:
        dims = x.shape.as_list()
        split = []
        for m, d in zip(constant_value(multiples).tolist(), dims):
            split += [m, d]
    else:
        x_shape = shape_ops.shape(x, out_type=multiples.dtype)
        split = shape_ops.reshape(shape_ops.transpose(concat_ops.stack([multiples, x_shape])), [-1])
    rank = x.shape.ndims
    if rank is None and multiples.shape.ndims == 1:
        rank = multiples.shape._dim_list[0]
    if rank is not None:
        axes = list(range(0, 2 * rank, 2))
    else:
        axes = math_ops.range(0, shape_ops.size(split), 2)
    summed = reduction_ops.reduce_sum(shape_ops.reshape(grad, split), axis=axes)
    return [reshape_like(summed, x), None]


def tile(input, multiples, name=None):
    """Repeats `input` `multiples[i]` times along each dimension i.

    Args:
        input: a Tensor of any rank.
        multiples: a 1-D int32/int64 tensor, one non-negative entry per dimension of `input`.
            Entries known while the graph is built (a `tf.stack` of constants and tensors)
            give the output dimensions they can.

    Returns:
        A Tensor of `input`'s dtype, dimension i of size `input.shape[i] * multiples[i]`.
    """
    return Tile(input, multiples, name=name)


# -- Pad, PadV2, MirrorPad, MirrorPadGrad -------------------------------------------------------

Pad = define_op("Pad", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
                attrs=["T: type", f"Tpaddings: {_INDEX_TYPES}"])
PadV2 = define_op("PadV2", inputs=["input: T", "paddings: Tpaddings", "constant_values: T"],
                  outputs=["output: T"], attrs=["T: type", f"Tpaddings: {_INDEX_TYPES}"])
MirrorPad = define_op("MirrorPad", inputs=["input: T", "paddings: Tpaddings"],
                      outputs=["output: T"],
                      attrs=["T: type", f"Tpaddings: {_INDEX_TYPES}",
                             "mode: {'REFLECT', 'SYMMETRIC'}"])
MirrorPadGrad = define_op("MirrorPadGrad", inputs=["input: T", "paddings: Tpaddings"],
                          outputs=["output: T"],
                          attrs=["T: type", f"Tpaddings: {_INDEX_TYPES}",
                                 "mode: {'REFLECT', 'SYMMETRIC'}"])


def _pad_rank(input, paddings) -> int | None:
    """The output rank: the input's, or the rows of the [rank, 2] paddings matrix."""
    pad_shape = paddings.shape.with_rank(2)
    columns = pad_shape._dim_list[1]
    if columns is not None and columns != 2:
        raise ValueError(f"Dimension 1 in both shapes must be equal, but are "
                         f"{columns} and 2: paddings must be a matrix with 2 columns, "
                         f"got shape {pad_shape}")
    rows = pad_shape._dim_list[0]
    if rows is not None and input.ndims is not None and rows != input.ndims:
        raise ValueError(f"Shape must be rank {rows} but is rank {input.ndims}: paddings has "
                         f"{rows} rows for an input of rank {input.ndims}")
    return input.ndims if input.ndims is not None else rows


def _pad_shape_common(input, paddings, sign=1):
    """The padded (sign 1) or unpadded (sign -1) shape; unknown where a row or dim is."""
    rank = _pad_rank(input, paddings)
    if rank is None:
        return TensorShape(None)
    value = paddings.value
    if value is not None:
        pads = np.asarray(value)
        if pads.size and pads.min() < 0:
            raise ValueError(f"paddings must be non-negative, got {pads.tolist()}")
    else:
        pads = paddings.partial  # TF's tf.pad: rows known at graph build still count
        if pads is None:
            return unknown_shape(rank)
    dims = input._dim_list if input.ndims is not None else [None] * rank
    out = []
    for d, row in zip(dims, pads.tolist()):
        if d is None or any(p is None for p in row):
            out.append(None)
            continue
        size = d + sign * (row[0] + row[1])
        if size < 0:
            raise ValueError(f"paddings {np.asarray(pads).tolist()} are larger than the input "
                             f"{input}")
        out.append(size)
    return TensorShape(out)


@Pad.shape_fn(static_inputs=("paddings",))
def _pad_shape(input, paddings):
    return _pad_shape_common(input, paddings)


@PadV2.shape_fn(static_inputs=("paddings",))
def _pad_v2_shape(input, paddings, constant_values):
    constant_values.with_rank(0)
    return _pad_shape_common(input, paddings)


@MirrorPad.shape_fn(static_inputs=("paddings",))
def _mirror_pad_shape(input, paddings, *, mode):
    # NOTE: paddings too large for the mode fail at run time (InvalidArgumentError), as in TF.
    return _pad_shape_common(input, paddings)


@MirrorPadGrad.shape_fn(static_inputs=("paddings",))
def _mirror_pad_grad_shape(input, paddings, *, mode):
    return _pad_shape_common(input, paddings, sign=-1)


def _check_paddings(x, paddings):
    if paddings.ndim == 2 and paddings.shape[1] == 2 and paddings.shape[0] != x.ndim:
        raise errors.InvalidArgumentError(
            None, None, f"The first dimension of paddings must be the rank of inputs "
                        f"{paddings.tolist()} {list(x.shape)}")
    if paddings.shape != (x.ndim, 2) or min(paddings.reshape(-1).tolist(), default=0) < 0:
        raise errors.InvalidArgumentError(
            None, None, f"paddings must be a non-negative matrix of shape [{x.ndim}, 2], got "
                        f"{paddings.tolist()}")


def _constant_pad(x, paddings, constant_values=0):
    """`np.pad(x, paddings, constant_values=...)`: numbers and bools fill a new array and copy
    `x` in (np.pad's generic path costs ~0.1 ms even for small arrays). A scalar comes back
    as it is (TF's Pad of a scalar; np.pad rejects its empty paddings)."""
    if x.ndim == 0:
        return x.copy()
    if x.dtype.kind not in "biufc":
        return np.pad(x, paddings, constant_values=constant_values)
    pads = paddings.tolist()
    shape = tuple(d + a + b for d, (a, b) in zip(x.shape, pads))
    if isinstance(constant_values, int) and constant_values == 0:
        out = np.zeros(shape, dtype=x.dtype)
    else:
        out = np.full(shape, constant_values, dtype=x.dtype)
    out[tuple(slice(a, a + d) for d, (a, _) in zip(x.shape, pads))] = x
    return out


@Pad.kernel
def _pad_kernel(x, paddings):
    _check_paddings(x, paddings)
    return _constant_pad(x, paddings)


def _pad_grad_common(op, grad):
    x = op.inputs[0]
    paddings = op.inputs[1]
    grad = dense_gradient(grad)
    begin = shape_ops.reshape(slicing_ops.slice(paddings, [0, 0], [-1, 1]), [-1])
    return slicing_ops.slice(grad, begin, shape_ops.shape(x, out_type=begin.dtype))


@Pad.gradient
def _pad_grad(op, grad):
    return [_pad_grad_common(op, grad), None]


@PadV2.kernel
def _pad_v2_kernel(x, paddings, constant_values):
    _check_paddings(x, paddings)
    return _constant_pad(x, paddings, constant_values)


@PadV2.gradient
def _pad_v2_grad(op, grad):
    return [_pad_grad_common(op, grad), None, None]


@MirrorPad.kernel(factory=True)
def _mirror_pad_kernel(mode):
    np_mode = mode.lower()
    offset = 1 if mode == "REFLECT" else 0

    def mirror_pad(x, paddings):
        _check_paddings(x, paddings)
        if paddings.size and (paddings.max(axis=1) > np.array(x.shape) - offset).any():
            raise errors.InvalidArgumentError(
                None, None, f"paddings must be less than{' or equal to' if not offset else ''} "
                            f"the dimension size for mode {mode}: paddings {paddings.tolist()}, "
                            f"input shape {list(x.shape)}")
        return np.pad(x, paddings, mode=np_mode)

    return mirror_pad


@MirrorPad.gradient
def _mirror_pad_grad(op, grad):
    return [MirrorPadGrad(dense_gradient(grad), op.inputs[1], mode=op.get_attr_str("mode")), None]


@MirrorPadGrad.kernel(factory=True)
def _mirror_pad_grad_kernel(mode):
    reflect = mode == "REFLECT"

    def mirror_pad_grad(g, paddings):
        out = g
        for axis, (a, b) in enumerate(paddings.tolist()):
            if a == 0 and b == 0:
                continue
            n = out.shape[axis] - a - b
            moved = np.moveaxis(out, axis, 0)
            core = moved[a:a + n].copy()
            left = moved[:a][::-1]
            right = moved[a + n:][::-1]
            if reflect:
                core[1:a + 1] += left
                core[n - 1 - b:n - 1] += right
            else:
                core[:a] += left
                core[n - b:] += right
            out = np.moveaxis(core, 0, axis)
        return np.ascontiguousarray(out)

    return mirror_pad_grad


@MirrorPadGrad.gradient
def _mirror_pad_grad_grad(op, grad):
    return [MirrorPad(grad, op.inputs[1], mode=op.get_attr_str("mode")), None]


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """Pads `tensor` by `paddings`.

    Args:
        tensor: a Tensor of rank R.
        paddings: an int [R, 2] matrix: how much to add before and after each dimension.
        mode: "CONSTANT", "REFLECT" (edge not repeated) or "SYMMETRIC" (edge repeated),
            case-insensitive.
        name: op name.
        constant_values: the fill value in CONSTANT mode (non-zero uses PadV2).

    Returns:
        The padded Tensor.

    Raises:
        ValueError: unknown mode, or `paddings` does not have R rows.
        InvalidArgumentError: (at run time) negative paddings, or mirror paddings too large.

    Example:
        >>> tf.pad([[1, 2]], [[0, 0], [1, 1]], "REFLECT")   # -> [[2, 1, 2, 1]]
    """
    mode = mode.upper()
    if mode == "CONSTANT":
        if not isinstance(constant_values, Tensor) and np.all(np.asarray(constant_values) == 0):
            result = Pad(tensor, paddings, name=name)
        else:
            tensor = convert_to_tensor(tensor)
            result = PadV2(tensor, paddings, constant_values, name=name)
    elif mode in ("REFLECT", "SYMMETRIC"):
        result = MirrorPad(tensor, paddings, mode=mode, name=name)
    else:
        raise ValueError(f"Unknown padding mode: {mode}")
    _refine_from_padding_rows(result, paddings)
    return result


def _static_row(row):
    """`[before, after]` as ints when both are known now, else None."""
    if isinstance(row, Tensor):
        row = constant_value(row)
        return None if row is None or np.shape(row) != (2,) else [int(v) for v in row]
    if not isinstance(row, (list, tuple, np.ndarray)) or len(row) != 2:
        return None
    values = []
    for v in row:
        v = constant_value(v) if isinstance(v, Tensor) else v
        if v is None or np.ndim(v) != 0:
            return None
        values.append(int(v))
    return values


def _refine_from_padding_rows(result, paddings):
    """Static output dims from the rows of a Python `paddings` list known now (a list mixing
    constant rows with fed ones still gives the constant rows' dims, as TF1's `pad` does)."""
    if not isinstance(paddings, (list, tuple)) or result.shape.is_fully_defined():
        return
    in_shape = result.op.inputs[0].shape
    if in_shape.ndims is None or in_shape.ndims != len(paddings):
        return
    dims = []
    for row, dim in zip(paddings, in_shape.as_list()):
        known = _static_row(row)
        dims.append(None if known is None or dim is None else dim + sum(known))
    result.set_shape(dims)


# -- ReverseV2, ReverseSequence ---------------------------------------------------------------

ReverseV2 = define_op("ReverseV2", inputs=["tensor: T", "axis: Tidx"], outputs=["output: T"],
                      attrs=[f"Tidx: {_INDEX_TYPES}", "T: type"])


@ReverseV2.shape_fn(value_inputs=("axis",))
def _reverse_shape(tensor, axis):
    if axis is not None and tensor.ndims is not None:
        problem = _reverse_axis_problem(np.reshape(axis, [-1]).tolist(), tensor.ndims)
        if problem:
            raise ValueError(problem)
    return tensor


def _reverse_axis_problem(axes, rank):
    """TF's ReverseV2 checks: each axis in [-rank, rank), none repeated (None when valid)."""
    seen = set()
    for i, a in enumerate(axes):
        canonical = a + rank if a < 0 else a
        if not 0 <= canonical < rank:
            return f"'axis'[{i}] = {a} is out of valid range [0, {rank - 1}]"
        if canonical in seen:
            return f"axis {canonical} specified more than once."
        seen.add(canonical)
    return None


@ReverseV2.kernel
def _reverse_kernel(x, axis):
    axes = np.reshape(axis, [-1]).tolist()
    problem = _reverse_axis_problem(axes, x.ndim)
    if problem:
        raise errors.InvalidArgumentError(None, None, problem)
    return np.flip(x, axis=tuple(axes))


@ReverseV2.gradient
def _reverse_grad(op, grad):
    return [reverse(dense_gradient(grad), op.inputs[1]), None]


def reverse(tensor, axis, name=None):
    """Reverses `tensor` along each dimension in `axis`."""
    return ReverseV2(tensor, axis, name=name)


reverse_v2 = reverse

ReverseSequence = define_op(
    "ReverseSequence", inputs=["input: T", "seq_lengths: Tlen"], outputs=["output: T"],
    attrs=["seq_dim: int", "batch_dim: int = 0", "T: type", "Tlen: {int32, int64} = int64"])


@ReverseSequence.shape_fn
def _reverse_sequence_shape(input, seq_lengths, *, seq_dim, batch_dim):
    # TF's shape function: both dims in range, batch dim merged with len(seq_lengths);
    # seq_dim == batch_dim is only rejected by the kernel.
    seq_lengths.with_rank(1)
    if input.ndims is not None:
        for label, dim in (("seq_dim", seq_dim), ("batch_dim", batch_dim)):
            if dim >= input.ndims:
                raise ValueError(f"{label} must be < input rank ({dim} vs. {input.ndims})")
            if dim < 0:
                raise ValueError(f"{label} must be >= 0, got {dim}")
        batch, lengths = input._dim_list[batch_dim], seq_lengths._dim_list[0]
        if batch is not None and lengths is not None and batch != lengths:
            raise ValueError(f"Dimensions must be equal, but are {batch} and {lengths} "
                             f"(input.dims({batch_dim}) and the length of seq_lengths)")
    return input


@ReverseSequence.kernel(factory=True)
def _reverse_sequence_kernel(seq_dim, batch_dim):
    def reverse_sequence(x, lengths):
        if seq_dim == batch_dim:
            raise errors.InvalidArgumentError(None, None, f"batch_dim == seq_dim == {seq_dim}")
        moved = np.moveaxis(x, (batch_dim, seq_dim), (0, 1))
        batch, steps = moved.shape[:2]
        if lengths.shape != (batch,):
            raise errors.InvalidArgumentError(
                None, None, f"Length of seq_lengths {list(lengths.shape)} != input.dims"
                            f"({batch_dim}) ({batch})")
        if lengths.size and (lengths.max() > steps or lengths.min() < 0):
            raise errors.InvalidArgumentError(
                None, None, f"seq_lengths must be in [0, {steps}] = input.dims({seq_dim}), got "
                            f"{lengths.tolist()}")
        i = np.arange(steps)
        ends = lengths.astype(np.int64)[:, None]
        index = np.where(i < ends, ends - 1 - i, i)
        out = moved[np.arange(batch)[:, None], index]
        return np.moveaxis(out, (0, 1), (batch_dim, seq_dim))

    return reverse_sequence


@ReverseSequence.gradient
def _reverse_sequence_grad(op, grad):
    return [ReverseSequence(dense_gradient(grad), op.inputs[1], seq_dim=op.get_attr("seq_dim"),
                              batch_dim=op.get_attr("batch_dim")), None]


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None,
                     seq_dim=None, batch_dim=None):
    """Reverses the first `seq_lengths[b]` entries along `seq_axis` of each batch row b."""
    seq_axis = seq_dim if seq_axis is None else seq_axis
    batch_axis = (batch_dim if batch_dim is not None else 0) if batch_axis is None else batch_axis
    if seq_axis is None:
        raise ValueError("reverse_sequence needs seq_axis (or seq_dim)")
    return ReverseSequence(input, seq_lengths, seq_dim=seq_axis, batch_dim=batch_axis, name=name)


# -- OneHot -----------------------------------------------------------------------------------

OneHot = define_op("OneHot",
                   inputs=["indices: TI", "depth: int32", "on_value: T", "off_value: T"],
                   outputs=["output: T"],
                   attrs=["axis: int = -1", "T: type", "TI: {uint8, int32, int64} = int64"],
                   differentiable=False)


@OneHot.shape_fn(value_inputs=("depth",))
def _one_hot_shape(indices, depth, on_value, off_value, *, axis):
    on_value.with_rank(0)
    off_value.with_rank(0)
    if depth is not None and int(depth) < 0:
        raise ValueError(f"depth must be non-negative, got {int(depth)}")
    if indices.ndims is None:
        return TensorShape(None)
    rank = indices.ndims + 1
    if not -1 <= axis < rank:
        raise ValueError(f"Expected axis to be -1 or between [0, {rank}).  But received: "
                         f"{axis}")
    pos = rank - 1 if axis == -1 else axis
    dims = list(indices._dim_list)
    return TensorShape(dims[:pos] + [None if depth is None else int(depth)] + dims[pos:])


@OneHot.kernel(factory=True)
def _one_hot_kernel(axis):
    def one_hot(indices, depth, on_value, off_value):
        depth = int(depth)
        if depth < 0:
            raise errors.InvalidArgumentError(None, None, f"depth must be non-negative, got "
                                              f"{depth}")
        pos = indices.ndim if axis == -1 else axis
        shape = [1] * (indices.ndim + 1)
        shape[pos] = depth
        hot = np.expand_dims(indices, pos) == np.arange(depth).reshape(shape)
        return np.where(hot, on_value, off_value)

    return one_hot


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """One-hot encoding: `on_value` where the index matches, `off_value` elsewhere.

    Args:
        indices: int indices; out-of-range ones (including negative) give all-off rows.
        depth: the size of the new dimension.
        on_value, off_value: scalars (default 1 and 0); their dtype sets the output dtype.
        axis: where the new dimension goes (default -1, last).
        dtype: the output dtype (default float32, or that of on_value/off_value).
        name: name scope (default "one_hot").

    Returns:
        A Tensor with one more dimension than `indices`.

    Raises:
        TypeError: on_value, off_value and dtype disagree.

    Example:
        >>> tf.one_hot([0, 2], 3)   # -> [[1., 0., 0.], [0., 0., 1.]]
    """
    with _scope(name, "one_hot") as scope:
        on_t = None if on_value is None else convert_to_tensor(on_value, dtype=dtype,
                                                               name="on_value")
        off_t = None if off_value is None else convert_to_tensor(off_value, dtype=dtype,
                                                                 name="off_value")
        if on_t is not None and off_t is not None and on_t.dtype != off_t.dtype:
            raise TypeError(f"dtype of on_value ({on_t.dtype.name}) and off_value "
                            f"({off_t.dtype.name}) must be the same")
        if dtype is None:
            known = on_t if on_t is not None else off_t
            dtype = dtypes.float32 if known is None else known.dtype.base_dtype
        dtype = dtypes.as_dtype(dtype)
        if on_t is None:
            on_t = convert_to_tensor(np.ones([], dtype.as_numpy_dtype), name="on_value")
        if off_t is None:
            off_t = convert_to_tensor(np.zeros([], dtype.as_numpy_dtype), name="off_value")
        indices = convert_to_tensor(indices, name="indices")
        return OneHot(indices, depth, on_t, off_t, axis=-1 if axis is None else axis,
                      name=scope)
