"""Segment reductions: Segment{Sum,Mean,Max,Min,Prod} over sorted ids and
UnsortedSegment{Sum,Max,Min,Prod} over arbitrary ids with an explicit `num_segments`.

Sorted ops: `segment_ids` is a non-decreasing vector over data's first dimension; the output
has `ids[-1] + 1` rows and empty segments are 0. Unsorted ops: `segment_ids` has a prefix of
data's shape; negative ids are dropped; empty segments hold the reduction's identity (0, 1, the
dtype's lowest for max, highest for min). Kernels use NumPy's unbuffered `ufunc.at`.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape

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
        if ids[0] < 0:
            raise errors.InvalidArgumentError(None, None,
                                              f"segment ids must be >= 0, got {ids[0]}")
        if np.any(ids[1:] < ids[:-1]):
            raise errors.InvalidArgumentError(None, None, "segment ids are not increasing")
        rows = int(ids[-1]) + 1
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
        rows = int(np.asarray(num_segments).reshape(-1)[0])
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
        return TensorShape([None] + list(data.dims[1:]))

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
        prefix = TensorShape(data.dims[:segment_ids.ndims])
        if segment_ids.ndims > data.ndims or not prefix.is_compatible_with(segment_ids):
            raise ValueError(f"data.shape {data} must start with segment_ids.shape "
                             f"{segment_ids}")
        return TensorShape([rows] + list(data.dims[segment_ids.ndims:]))

    op.kernel(_unsorted_kernel(kind))
    return op


SegmentSum = _segment_op("SegmentSum", "sum", _NUMBER)
SegmentMean = _segment_op("SegmentMean", "mean", _NUMBER)
SegmentProd = _segment_op("SegmentProd", "prod", _NUMBER)
SegmentMax = _segment_op("SegmentMax", "max", _REAL)
SegmentMin = _segment_op("SegmentMin", "min", _REAL)
UnsortedSegmentSum = _unsorted_op("UnsortedSegmentSum", "sum", _NUMBER)
UnsortedSegmentProd = _unsorted_op("UnsortedSegmentProd", "prod", _NUMBER)
UnsortedSegmentMax = _unsorted_op("UnsortedSegmentMax", "max", _REAL)
UnsortedSegmentMin = _unsorted_op("UnsortedSegmentMin", "min", _REAL)


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
