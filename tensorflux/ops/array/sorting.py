"""Ordering and index ops: sort/argsort (on TopKV2), searchsorted (LowerBound/UpperBound), Roll,
repeat, setdiff1d (ListDiff) and unravel_index (UnravelIndex).

`sort` and `argsort` are TensorFlow's composite: a descending TopKV2 over the whole (last) axis,
with an order-reversing map for ascending order, so their gradient is TopKV2's. `repeat` gathers
at `UpperBound(cumsum(repeats), range(total))`, so its gradient is GatherV2's.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import sequence as sequence_ops
from tensorflux.ops.nn import core as nn_ops

__all__ = ["sort", "argsort", "searchsorted", "roll", "repeat", "setdiff1d", "unravel_index"]

_INDEX = "{int32, int64}"



# -- LowerBound, UpperBound -------------------------------------------------------------------

def _bound_op(name, side):
    op = define_op(name, inputs=["sorted_inputs: T", "values: T"], outputs=["output: out_type"],
                   attrs=["T: {realnumbertype}", f"out_type: {_INDEX} = int32"],
                   differentiable=False)

    @op.shape_fn
    def _bound_shape(sorted_inputs, values):
        sorted_inputs = sorted_inputs.with_rank_at_least(1)
        values = values.with_rank_at_least(1)
        if sorted_inputs.ndims is not None and values.ndims is not None:
            if sorted_inputs.ndims != values.ndims:
                raise ValueError(f"sorted_inputs and values must have the same rank, got "
                                 f"{sorted_inputs} and {values}")
            outer = TensorShape(sorted_inputs._dim_list[:-1]).merge_with(
                TensorShape(values._dim_list[:-1]))
            return outer.concatenate([values._dim_list[-1]])
        return values

    def kernel(sorted_inputs, values, *, out_type):
        return _search(sorted_inputs, values, side).astype(out_type.as_numpy_dtype)

    kernel.__name__ = f"_{name.lower()}_kernel"
    op.kernel(kernel)
    return op


def _search(sorted_inputs, values, side):
    """Row-wise searchsorted of `values` into `sorted_inputs` in one lexsort (no row loop)."""
    if sorted_inputs.ndim == 0 or sorted_inputs.shape[:-1] != values.shape[:-1]:
        raise errors.InvalidArgumentError(
            None, None, f"sorted_inputs and values must share all but the last dimension, got "
                        f"{list(sorted_inputs.shape)} and {list(values.shape)}")
    n, m = sorted_inputs.shape[-1], values.shape[-1]
    rows = int(np.prod(values.shape[:-1], dtype=np.int64))
    if n == 0 or values.size == 0:
        return np.zeros(values.shape, np.int64)
    keys = np.concatenate([sorted_inputs.reshape(-1), values.reshape(-1)])
    row_of = np.concatenate([np.repeat(np.arange(rows), n), np.repeat(np.arange(rows), m)])
    is_value = np.zeros(keys.size, bool)
    is_value[rows * n:] = True
    # Ties: a value sorts before equal sorted entries for the lower bound, after for the upper.
    tie = ~is_value if side == "left" else is_value
    order = np.lexsort((tie, keys, row_of))
    sorted_before = np.cumsum(~is_value[order])
    at = np.flatnonzero(is_value[order])
    which = order[at] - rows * n
    result = np.empty(values.size, np.int64)
    result[which] = sorted_before[at] - row_of[order[at]] * n
    return result.reshape(values.shape)


LowerBound = _bound_op("LowerBound", "left")
UpperBound = _bound_op("UpperBound", "right")


def searchsorted(sorted_sequence, values, side="left", out_type=dtypes.int32, name=None):
    """For each value, the index at which inserting it keeps its row of `sorted_sequence` sorted.

    Args:
        sorted_sequence: N-D tensor sorted along its last axis.
        values: N-D tensor with the same leading dimensions.
        side: "left" (first suitable index, LowerBound) or "right" (last, UpperBound).
        out_type: int32 or int64.
        name: optional name.

    Returns:
        A tensor of `out_type` with the shape of `values`.

    Raises:
        ValueError: `side` is neither "left" nor "right".

    Example:
        >>> tf.searchsorted([[1, 3, 5]], [[0, 3, 6]], side="right")   # -> [[0, 2, 3]]
    """
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    op = LowerBound if side == "left" else UpperBound
    with _scope(name, "searchsorted"):
        sorted_sequence = convert_to_tensor(sorted_sequence, name="sorted_sequence")
        values = convert_to_tensor(values, name="values",
                                   dtype=sorted_sequence.dtype.base_dtype)
        return op(sorted_sequence, values, out_type=dtypes.as_dtype(out_type))


# -- sort, argsort ------------------------------------------------------------------------------

def _reverse_order(x):
    """An order-reversing involution without overflow: -x for floats, -1 - x / max - x for ints."""
    dtype = x.dtype.base_dtype
    if dtype.is_floating:
        return math_ops.negative(x)
    if dtype.is_unsigned:
        return math_ops.subtract(np.array(np.iinfo(dtype.as_numpy_dtype).max,
                                          dtype.as_numpy_dtype), x)
    return math_ops.subtract(np.array(-1, dtype.as_numpy_dtype), x)


def _sort_impl(values, axis, direction, want_indices):
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
    values = convert_to_tensor(values, name="values")
    dtype = values.dtype.base_dtype
    if not (dtype.is_floating or dtype.is_integer):
        raise TypeError(f"sort: values must be a real number tensor, got {dtype!r}")
    ndims = values.shape.ndims
    if ndims is None:
        raise ValueError("sort: values must have a known rank")
    if ndims == 0:
        raise ValueError("sort: values must be at least 1-D")
    static_axis = constant_value(convert_to_tensor(axis)) if not isinstance(axis, int) else axis
    if static_axis is None:
        raise ValueError("sort: axis must be a constant")
    axis = int(static_axis)
    if not -ndims <= axis < ndims:
        raise ValueError(f"sort: axis {axis} is out of range for a rank-{ndims} tensor")
    axis %= ndims
    perm = None
    if axis != ndims - 1:
        perm = list(range(ndims))
        perm[axis], perm[-1] = perm[-1], perm[axis]
        values = array_ops.transpose(values, perm)
    ascending = direction == "ASCENDING"
    keyed = _reverse_order(values) if ascending else values
    k = values.shape._dim_list[-1]
    if k is None:
        k = array_ops.shape(values)[-1]
    top, indices = nn_ops.top_k(keyed, k=k, sorted=True)
    result = indices if want_indices else (_reverse_order(top) if ascending else top)
    if perm is not None:
        result = array_ops.transpose(result, perm)
    return result


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """Sorts `values` along `axis` (a constant).

    Args:
        values: a real number tensor of known rank.
        axis: the axis to sort along (default the last).
        direction: "ASCENDING" or "DESCENDING".
        name: optional name (default "sort").

    Returns:
        A tensor like `values`, sorted along `axis`.

    Raises:
        ValueError: bad `direction`, unknown rank, or `axis` not a constant in range.

    Example:
        >>> tf.sort([3, 1, 2], direction="DESCENDING")   # -> [3, 2, 1]
    """
    with _scope(name, "sort"):
        return _sort_impl(values, axis, direction, want_indices=False)


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The int32 indices that sort `values` along `axis`.

    Equal values keep their original order (the sort is always stable), so `stable` only
    exists for TF compatibility.

    Example:
        >>> tf.argsort([3, 1, 2])   # -> [1, 2, 0]
    """
    del stable
    with _scope(name, "argsort"):
        return _sort_impl(values, axis, direction, want_indices=True)


# -- Roll -------------------------------------------------------------------------------------

Roll = define_op("Roll", inputs=["input: T", "shift: Tshift", "axis: Taxis"],
                 outputs=["output: T"],
                 attrs=["T: type", f"Tshift: {_INDEX}", f"Taxis: {_INDEX}"])


@Roll.shape_fn
def _roll_shape(input, shift, axis):
    input = input.with_rank_at_least(1)
    shift = shift.with_rank_at_most(1)
    axis = axis.with_rank_at_most(1)
    if shift.ndims is not None and axis.ndims is not None and shift.ndims != axis.ndims:
        raise ValueError(f"shift and axis must have the same rank, got {shift} and {axis}")
    if shift.ndims == 1 and axis.ndims == 1 and not shift.is_compatible_with(axis):
        raise ValueError(f"shift and axis must have the same size, got {shift} and {axis}")
    return input


@Roll.kernel
def _roll_kernel(input, shift, axis):
    if input.ndim == 0:
        raise errors.InvalidArgumentError(None, None, "input must be 1-D or higher")
    if shift.shape != axis.shape or shift.ndim > 1:
        raise errors.InvalidArgumentError(
            None, None, f"shift and axis must have the same size (scalars or 1-D), got "
                        f"shapes {list(shift.shape)} and {list(axis.shape)}")
    axes = axis.reshape(-1)
    if axes.size and (axes.min() < -input.ndim or axes.max() >= input.ndim):
        raise errors.InvalidArgumentError(
            None, None, f"axis {axes.tolist()} is out of range for a rank-{input.ndim} input "
                        f"(axis {int(axes[(axes < -input.ndim) | (axes >= input.ndim)][0])} "
                        "is out of range)")
    if axes.size == 0:
        return input.copy()
    return np.roll(input, tuple(shift.reshape(-1).tolist()), tuple(axes.tolist()))


@Roll.gradient
def _roll_grad(op, grad):
    _, shift, axis = op.inputs
    return Roll(grad, math_ops.negative(shift), axis), None, None


def roll(input, shift, axis, name=None):  # noqa: A002 - TF name
    """Rolls `input` by `shift` positions along `axis` (elements wrap around).

    Args:
        input: a tensor of rank >= 1.
        shift: int scalar or 1-D; positive shifts move elements towards higher indices.
        axis: int scalar or 1-D like `shift`; an axis given twice gets the sum of its shifts.
        name: optional name (default "Roll").

    Example:
        >>> tf.roll([0, 1, 2, 3, 4], shift=2, axis=0)   # -> [3, 4, 0, 1, 2]
    """
    return Roll(input, shift, axis, name=name)


# -- repeat -----------------------------------------------------------------------------------

def repeat(input, repeats, axis=None, name=None):  # noqa: A002 - TF name
    """Repeats each slice of `input` along `axis` `repeats` times (numpy.repeat).

    Args:
        input: a tensor.
        repeats: an int scalar or 1-D: one count per slice, or one count for all of them;
            negative counts act as 0.
        axis: the axis to repeat along; None flattens `input` first.
        name: optional name (default "Repeat").

    Returns:
        A tensor like `input` whose `axis` dimension is `sum(repeats)`.

    Raises:
        ValueError: `axis` is out of range for `input`'s rank.

    Example:
        >>> tf.repeat([[1, 2], [3, 4]], [2, 1], axis=0)   # -> [[1, 2], [1, 2], [3, 4]]
    """
    with _scope(name, "Repeat"):
        input = convert_to_tensor(input, name="input")
        if axis is None:
            input = array_ops.reshape(input, [-1])
            axis = 0
        ndims = input.shape.ndims
        if ndims is None:
            raise ValueError("repeat: input must have a known rank")
        if not -ndims <= axis < max(ndims, 1):
            raise ValueError(f"repeat: axis {axis} is out of range for a rank-{ndims} tensor")
        axis %= max(ndims, 1)
        repeats = convert_to_tensor(repeats, name="repeats")
        if not repeats.dtype.is_integer:
            raise TypeError(f"repeat: repeats must be an integer tensor, got {repeats.dtype!r}")
        # NOTE: as in TF, negative counts repeat nothing and a single count applies to all.
        repeats = math_ops.maximum(math_ops.cast(repeats, dtypes.int32), np.int32(0))
        size = input.shape._dim_list[axis]
        if size is None:
            size = array_ops.shape(input)[axis]
        repeats = array_ops.broadcast_to(repeats, array_ops.reshape(size, [1]))
        ends = reduction_ops.cumsum(array_ops.reshape(repeats, [-1]))
        total = reduction_ops.reduce_sum(repeats)
        positions = sequence_ops.range(0, total, 1, dtype=dtypes.int32)
        index = UpperBound(array_ops.reshape(ends, [1, -1]),
                           array_ops.reshape(positions, [1, -1]))
        return array_ops.gather(input, array_ops.reshape(index, [-1]), axis=axis)


# -- ListDiff ---------------------------------------------------------------------------------

ListDiff = define_op("ListDiff", inputs=["x: T", "y: T"], outputs=["out: T", "idx: out_idx"],
                     attrs=["T: type", f"out_idx: {_INDEX} = int32"], differentiable=False)


@ListDiff.shape_fn
def _list_diff_shape(x, y):
    x.with_rank(1)
    y.with_rank(1)
    return [TensorShape([None]), TensorShape([None])]


@ListDiff.kernel
def _list_diff_kernel(x, y, *, out_idx):
    if x.ndim != 1 or y.ndim != 1:
        raise errors.InvalidArgumentError(
            None, None, f"x and y must be 1-D, got shapes {list(x.shape)} and {list(y.shape)}")
    keep = ~np.isin(x, y)
    return x[keep], np.flatnonzero(keep).astype(out_idx.as_numpy_dtype)


def setdiff1d(x, y, index_dtype=dtypes.int32, name=None):
    """The entries of 1-D `x` that are not in `y`, in `x`'s order, and their indices in `x`.

    Returns:
        An `(out, idx)` namedtuple with `out = x[idx]`.

    Example:
        >>> tf.setdiff1d([1, 2, 3, 4, 5, 6], [1, 3, 5])   # -> out [2, 4, 6], idx [1, 3, 5]
    """
    return ListDiff(x, y, out_idx=dtypes.as_dtype(index_dtype), name=name)


# -- UnravelIndex -----------------------------------------------------------------------------

UnravelIndex = define_op("UnravelIndex", inputs=["indices: Tidx", "dims: Tidx"],
                         outputs=["output: Tidx"], attrs=[f"Tidx: {_INDEX} = int32"],
                         differentiable=False)


@UnravelIndex.shape_fn
def _unravel_index_shape(indices, dims):
    indices = indices.with_rank_at_most(1)
    dims = dims.with_rank(1)
    if indices.ndims is None:
        return TensorShape(None)
    return TensorShape(list(dims._dim_list) + list(indices._dim_list))


@UnravelIndex.kernel
def _unravel_index_kernel(indices, dims):
    if indices.ndim > 1 or dims.ndim != 1:
        raise errors.InvalidArgumentError(
            None, None, f"indices must be 0-D or 1-D and dims 1-D, got shapes "
                        f"{list(indices.shape)} and {list(dims.shape)}")
    if dims.size and dims.min() <= 0:
        raise errors.InvalidArgumentError(
            None, None, f"dims must be positive, got {dims.tolist()}")
    total = int(np.prod(dims, dtype=np.int64))
    if indices.size and (indices.min() < 0 or indices.max() >= total):
        raise errors.InvalidArgumentError(
            None, None, f"index out of bounds for array of shape {dims.tolist()}: "
                        f"{indices.reshape(-1).tolist()}")
    coords = np.unravel_index(indices, tuple(int(d) for d in dims))
    return np.stack(coords).astype(indices.dtype, copy=False).reshape(
        (dims.size,) + indices.shape)


def unravel_index(indices, dims, name=None):
    """Converts flat indices into coordinates in an array of shape `dims` (row-major).

    Returns:
        `[len(dims)]` coordinates for a scalar index, `[len(dims), N]` for N indices.

    Example:
        >>> tf.unravel_index([2, 5, 7], [3, 3])   # -> [[0, 1, 2], [2, 2, 1]]
    """
    return UnravelIndex(indices, dims, name=name)
