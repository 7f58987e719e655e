"""Segment reductions: Segment{Sum,Mean,Max,Min,Prod} over sorted ids and
UnsortedSegment{Sum,Max,Min,Prod} over arbitrary ids with an explicit `num_segments`.

Sorted ops: `segment_ids` is a non-decreasing vector over data's first dimension; the output
has `ids[-1] + 1` rows and empty segments are 0. Unsorted ops: `segment_ids` has a prefix of
data's shape; negative ids are dropped; empty segments hold the reduction's identity (0, 1, the
dtype's lowest for max, highest for min). Kernels use NumPy's unbuffered `ufunc.at`.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops.math import binary as binary_ops
from tensorflux.ops.math import casting as cast_ops
from tensorflux.ops.math import comparison as comparison_ops
from tensorflux.ops.math import select as select_ops
from tensorflux.ops.math import unary as unary_ops

__all__ = ["segment_sum", "segment_mean", "segment_max", "segment_min", "segment_prod",
           "unsorted_segment_sum", "unsorted_segment_max", "unsorted_segment_min",
           "unsorted_segment_prod"]

_NUMBER = "{numbertype}"
_REAL = "{realnumbertype}"


def _identity(kind, dtype):
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if np.issubdtype(dtype, np.floating):
        return -np.inf if kind == "max" else np.inf
    info = np.iinfo(dtype)
    return info.min if kind == "max" else info.max


def _unsorted_empty(kind, dtype):
    """TF fills empty unsorted max/min segments with the finite lowest/highest value."""
    if kind in ("sum", "prod"):
        return _identity(kind, dtype)
    if np.issubdtype(dtype, np.floating):
        info = np.finfo(dtype)
        return info.min if kind == "max" else info.max
    return _identity(kind, dtype)


_UFUNCS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


def _accumulate(kind, data, ids, rows):
    """out[ids[i]] (op)= data[i] for the ids' leading dims; ids are valid and non-negative."""
    out = np.full((rows,) + data.shape[ids.ndim:], _identity(kind, data.dtype), data.dtype)
    flat_ids = ids.reshape(-1)
    flat_data = data.reshape((flat_ids.size,) + data.shape[ids.ndim:])
    _UFUNCS[kind].at(out, flat_ids, flat_data)
    return out


def check_sorted_segment_ids(ids: np.ndarray, rows: int) -> None:
    """TF's run-time checks of sorted segment ids, in its order: the last id is >= 0; then, for
    each run of equal ids, the next run's id is larger and this run's id is in [0, rows).

    Raises:
        InvalidArgumentError: naming the first rule broken.
    """
    if ids.size == 0:
        return
    if ids[-1] < 0:
        raise errors.InvalidArgumentError(
            None, None, f"segment ids must be >= 0, got {int(ids[-1])} as the last id")
    runs = ids[np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])]
    decreasing = np.r_[runs[:-1] > runs[1:], False]
    outside = (runs < 0) | (runs >= rows)
    bad = decreasing | outside
    if bad.any():
        i = int(np.argmax(bad))
        if decreasing[i]:
            raise errors.InvalidArgumentError(
                None, None, f"segment ids are not increasing: {int(runs[i])} is followed by "
                            f"{int(runs[i + 1])}")
        raise errors.InvalidArgumentError(
            None, None, f"Segment id {int(runs[i])} out of range [0, {rows}), possibly because "
                        "'segment_ids' input is not sorted.")


def _sorted_kernel(kind):
    def kernel(data, segment_ids):
        ids = np.asarray(segment_ids)
        if ids.ndim != 1 or data.ndim < 1 or ids.shape[0] != data.shape[0]:
            raise errors.InvalidArgumentError(
                None, None, f"segment_ids should be the same size as dimension 0 of input "
                            f"(data shape {list(data.shape)}, segment_ids shape "
                            f"{list(ids.shape)})")
        if ids.size == 0:
            return np.zeros((0,) + data.shape[1:], data.dtype)
        rows = int(ids[-1]) + 1
        check_sorted_segment_ids(ids, rows)
        if kind == "mean":
            total = _accumulate("sum", data.astype(_acc(data.dtype), copy=False), ids, rows)
            counts = np.bincount(ids, minlength=rows).reshape((rows,) + (1,) * (data.ndim - 1))
            return _divide(total, counts, data.dtype)
        out = _accumulate(kind, data, ids, rows)
        if kind in ("max", "min"):
            present = np.bincount(ids, minlength=rows) > 0
            out[~present] = 0
        return out

    return kernel


def _acc(dtype):
    return np.float32 if dtype == np.float16 else dtype


def _divide(total, counts, dtype):
    safe = np.maximum(counts, 1)
    if np.issubdtype(dtype, np.integer):
        quotient = np.abs(total) // safe
        return np.where(total < 0, -quotient, quotient).astype(dtype, copy=False)
    return (total / safe).astype(dtype, copy=False)


def _unsorted_kernel(kind):
    def kernel(data, segment_ids, num_segments):
        ids = np.asarray(segment_ids)
        if np.ndim(num_segments) != 0:
            raise errors.InvalidArgumentError(
                None, None, f"num_segments should be a scalar, not shape "
                            f"{list(np.shape(num_segments))}")
        rows = int(num_segments)
        if rows < 0:
            raise errors.InvalidArgumentError(None, None,
                                              f"num_segments must be >= 0, got {rows}")
        if data.shape[:ids.ndim] != ids.shape:
            raise errors.InvalidArgumentError(
                None, None, f"data.shape = {list(data.shape)} does not start with "
                            f"segment_ids.shape = {list(ids.shape)}")
        if np.any(ids >= rows):
            where = np.argwhere(ids >= rows)[0]
            index = ",".join(str(int(i)) for i in where)
            raise errors.InvalidArgumentError(
                None, None, f"segment_ids[{index}] = {ids[tuple(where)]} is out of range "
                            f"[0, {rows})")
        keep = ids >= 0
        if not keep.all():
            data = data[keep]
            ids = ids[keep]
        out = _accumulate(kind, data, ids, rows)
        if kind in ("max", "min") and np.issubdtype(data.dtype, np.floating):
            present = np.bincount(ids.reshape(-1), minlength=rows) > 0
            out[~present] = _unsorted_empty(kind, data.dtype)
        return out

    return kernel


def _segment_op(name, kind, types):
    op = define_op(name, inputs=["data: T", "segment_ids: Tindices"], outputs=["output: T"],
                   attrs=[f"T: {types}", "Tindices: {int32, int64}"])

    @op.shape_fn
    def _shape(data, segment_ids):
        if segment_ids.ndims not in (None, 1):
            raise ValueError(f"segment_ids must be a vector, got shape {segment_ids}")
        if data.ndims is None:
            return TensorShape(None)
        data = data.with_rank_at_least(1)
        # As TF, a segment_ids length that differs from data's first dimension is reported
        # when the op runs (InvalidArgumentError), not here.
        return TensorShape([None] + list(data._dim_list[1:]))

    op.kernel(_sorted_kernel(kind))
    return op


def _unsorted_op(name, kind, types):
    index_types = "{int16, int32, int64}" if kind == "sum" else "{int32, int64}"
    op = define_op(name, inputs=["data: T", "segment_ids: Tindices",
                                 "num_segments: Tnumsegments"], outputs=["output: T"],
                   attrs=[f"T: {types}", f"Tindices: {index_types}",
                          "Tnumsegments: {int32, int64} = int32"])

    @op.shape_fn(value_inputs=("num_segments",))
    def _shape(data, segment_ids, num_segments):
        rows = None if num_segments is None else int(np.asarray(num_segments).reshape(-1)[0])
        if data.ndims is None or segment_ids.ndims is None:
            return TensorShape(None)
        prefix = TensorShape(data._dim_list[:segment_ids.ndims])
        if segment_ids.ndims > data.ndims or not prefix.is_compatible_with(segment_ids):
            raise ValueError(f"data.shape {data} must start with segment_ids.shape "
                             f"{segment_ids}")
        return TensorShape([rows] + list(data._dim_list[segment_ids.ndims:]))

    op.kernel(_unsorted_kernel(kind))
    return op


SegmentSum = _segment_op("SegmentSum", "sum", _NUMBER)


def _gather(params, indices):
    return array_ops.gather(params, indices)


def _row_mask(mask, data):
    """A [n] or ids-shaped bool mask reshaped to broadcast against `data` (ids + row dims)."""
    if data.shape.ndims is not None and mask.shape.ndims is not None:
        tail = data.shape.ndims - mask.shape.ndims
        if mask.shape.is_fully_defined():
            return array_ops.reshape(mask, mask.shape.as_list() + [1] * tail)
        ones = np.ones([tail], np.int32)
    else:
        ones = array_ops.fill(array_ops.reshape(binary_ops.Sub(array_ops.rank(data),
                                                    array_ops.rank(mask)), [1]), np.int32(1))
    return array_ops.reshape(mask, array_ops.concat([array_ops.shape(mask), ones], 0))


def _gather_drop_negatives(params, ids):
    """gather(params, ids) with zero rows where ids < 0; also returns the clipped ids."""
    zero = np.zeros([], ids.dtype.as_numpy_dtype)
    clipped = binary_ops.Maximum(ids, zero)
    gathered = _gather(params, clipped)
    keep = _row_mask(comparison_ops.GreaterEqual(ids, zero), gathered)
    return select_ops.SelectV2(keep, gathered, np.zeros([], params.dtype.as_numpy_dtype)), clipped


@SegmentSum.gradient
def _segment_sum_grad(op, grad):
    return _gather(grad, op.inputs[1]), None


SegmentMean = _segment_op("SegmentMean", "mean", _NUMBER)


@SegmentMean.gradient
def _segment_mean_grad(op, grad):
    data, ids = op.inputs
    valid = comparison_ops.GreaterEqual(ids, np.zeros([], ids.dtype.as_numpy_dtype))
    ones = cast_ops.cast(valid, grad.dtype)
    counts = SegmentSum(ones, ids)
    scaled = binary_ops.RealDiv(grad, _row_mask(counts, grad))
    return _gather(scaled, ids), None


SegmentProd = _segment_op("SegmentProd", "prod", _NUMBER)


def _segment_prod_grad(op, grad, sorted_ids):
    """Zero-safe: one zero in a segment -> its gradient is the product of the others."""
    data, ids = op.inputs[0], op.inputs[1]
    zero = np.zeros([], data.dtype.as_numpy_dtype)
    one = np.ones([], data.dtype.as_numpy_dtype)
    is_zero = comparison_ops.Equal(data, zero)
    if sorted_ids:
        zeros_per_segment = SegmentSum(cast_ops.cast(is_zero, dtypes.int32), ids)
        nonzero_prod = SegmentProd(select_ops.SelectV2(is_zero, one, data), ids)
    else:
        num = op.inputs[2]
        zeros_per_segment = UnsortedSegmentSum(cast_ops.cast(is_zero, dtypes.int32), ids, num)
        nonzero_prod = UnsortedSegmentProd(select_ops.SelectV2(is_zero, one, data), ids, num)
    grad = select_ops.SelectV2(comparison_ops.Greater(zeros_per_segment, np.int32(1)), zero, grad)
    if sorted_ids:
        clipped = ids
        gathered_grad = _gather(grad, ids)
    else:
        gathered_grad, clipped = _gather_drop_negatives(grad, ids)
    gathered_prod = _gather(op.outputs[0], clipped)
    gathered_nonzero = _gather(nonzero_prod, clipped)
    divided = binary_ops.DivNoNan(gathered_prod, data)
    partial = select_ops.SelectV2(is_zero, gathered_nonzero, divided)
    if data.dtype.is_complex:
        partial = unary_ops.Conj(partial)
    result = binary_ops.Mul(gathered_grad, partial)
    return (result, None) if sorted_ids else (result, None, None)


SegmentProd.gradient(lambda op, grad: _segment_prod_grad(op, grad, True))
SegmentMax = _segment_op("SegmentMax", "max", _REAL)


def _segment_min_max_grad(op, grad, sorted_ids):
    data, ids = op.inputs[0], op.inputs[1]
    zero = np.zeros([], grad.dtype.as_numpy_dtype)
    if sorted_ids:
        selected = comparison_ops.Equal(data, _gather(op.outputs[0], ids))
        counts = SegmentSum(cast_ops.cast(selected, grad.dtype), ids)
        weighted = binary_ops.RealDiv(grad, counts)
        return select_ops.SelectV2(selected, _gather(weighted, ids), zero), None
    gathered, clipped = _gather_drop_negatives(op.outputs[0], ids)
    valid = comparison_ops.GreaterEqual(ids, np.zeros([], ids.dtype.as_numpy_dtype))
    positive = _row_mask(valid, data)
    selected = comparison_ops.LogicalAnd(comparison_ops.Equal(data, gathered), positive)
    counts = UnsortedSegmentSum(cast_ops.cast(selected, grad.dtype), ids, op.inputs[2])
    weighted = binary_ops.RealDiv(grad, counts)
    return select_ops.SelectV2(selected, _gather(weighted, clipped), zero), None, None


SegmentMax.gradient(lambda op, grad: _segment_min_max_grad(op, grad, True))
SegmentMin = _segment_op("SegmentMin", "min", _REAL)


SegmentMin.gradient(lambda op, grad: _segment_min_max_grad(op, grad, True))
UnsortedSegmentSum = _unsorted_op("UnsortedSegmentSum", "sum", _NUMBER)


@UnsortedSegmentSum.gradient
def _unsorted_segment_sum_grad(op, grad):
    return _gather_drop_negatives(grad, op.inputs[1])[0], None, None


UnsortedSegmentProd = _unsorted_op("UnsortedSegmentProd", "prod", _NUMBER)


UnsortedSegmentProd.gradient(lambda op, grad: _segment_prod_grad(op, grad, False))
UnsortedSegmentMax = _unsorted_op("UnsortedSegmentMax", "max", _REAL)


UnsortedSegmentMax.gradient(lambda op, grad: _segment_min_max_grad(op, grad, False))
UnsortedSegmentMin = _unsorted_op("UnsortedSegmentMin", "min", _REAL)


UnsortedSegmentMin.gradient(lambda op, grad: _segment_min_max_grad(op, grad, False))


# -- wrappers ---------------------------------------------------------------------------------

def segment_sum(data, segment_ids, name=None):
    """Sums rows of `data` that share a (sorted) segment id.

    Example:
        >>> tf.segment_sum([1, 2, 3], [0, 0, 2])   # -> [3, 0, 3]
    """
    return SegmentSum(data, segment_ids, name=name)


def segment_mean(data, segment_ids, name=None):
    """Mean of the rows of each sorted segment (integer means truncate; empty segments 0)."""
    return SegmentMean(data, segment_ids, name=name)


def segment_max(data, segment_ids, name=None):
    """Max of the rows of each sorted segment (empty segments 0)."""
    return SegmentMax(data, segment_ids, name=name)


def segment_min(data, segment_ids, name=None):
    """Min of the rows of each sorted segment (empty segments 0)."""
    return SegmentMin(data, segment_ids, name=name)


def segment_prod(data, segment_ids, name=None):
    """Product of the rows of each sorted segment (empty segments 1)."""
    return SegmentProd(data, segment_ids, name=name)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Sums entries of `data` into `num_segments` rows by id (negative ids are dropped)."""
    return UnsortedSegmentSum(data, segment_ids, num_segments, name=name)


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """Max by segment id; empty segments hold the dtype's lowest finite value."""
    return UnsortedSegmentMax(data, segment_ids, num_segments, name=name)


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    """Min by segment id; empty segments hold the dtype's highest finite value."""
    return UnsortedSegmentMin(data, segment_ids, num_segments, name=name)


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """Product by segment id; empty segments are 1."""
    return UnsortedSegmentProd(data, segment_ids, num_segments, name=name)
