"""Sparse segment reductions: SparseSegment{Sum,Mean,SqrtN}[WithNumSegments] and the
SparseSegment{Mean,SqrtN}Grad ops their gradients use.

`output[s] = reduce(data[indices[i]] for i with segment_ids[i] == s)`: a gather fused with a
sorted segment reduction. Without `num_segments` the output has `segment_ids[-1] + 1` rows;
empty segments are 0. Mean divides by the segment's size, SqrtN by its square root.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.array import gather_scatter as gather_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.math import segment as segment_ops
from tensorflux.ops.sparse.util import group_sum

__all__ = ["sparse_segment_sum", "sparse_segment_mean", "sparse_segment_sqrt_n"]

_FLOATS = "{bfloat16, float16, float32, float64}"
_INDEX = "{int32, int64} = int32"


def _acc(dtype):
    return np.float32 if dtype.itemsize < 4 else dtype


def _check(data, indices, segment_ids, num_segments):
    indices = np.asarray(indices)
    ids = np.asarray(segment_ids)
    if indices.ndim != 1 or ids.ndim != 1 or indices.shape != ids.shape:
        raise errors.InvalidArgumentError(
            None, None, f"indices and segment_ids should be vectors of one size, got "
            f"{list(indices.shape)} and {list(ids.shape)}")
    if data.ndim < 1:
        raise errors.InvalidArgumentError(None, None, "data must be at least rank 1")
    bad = (indices < 0) | (indices >= data.shape[0])
    if bad.any():
        i = int(np.argmax(bad))
        raise errors.InvalidArgumentError(
            None, None, f"Bad: indices[{i}] == {int(indices[i])} out of range "
            f"[0, {data.shape[0]})")
    if num_segments is None:
        rows = int(ids[-1]) + 1 if ids.size else 0
    else:
        rows = int(np.asarray(num_segments).reshape(-1)[0])
        if ids.size and ids[-1] >= rows:
            raise errors.InvalidArgumentError(
                None, None, f"segment ids must be < num_segments: {int(ids[-1])} >= {rows}")
    segment_ops.check_sorted_segment_ids(ids, rows)
    return indices.astype(np.int64), ids.astype(np.int64), rows


def _scale(kind, ids, rows, dtype):
    counts = np.bincount(ids, minlength=rows).astype(dtype)
    counts = np.maximum(counts, 1)
    return counts if kind == "mean" else np.sqrt(counts)


def _reduce(kind, data, indices, segment_ids, num_segments=None):
    indices, ids, rows = _check(data, indices, segment_ids, num_segments)
    acc = _acc(data.dtype)
    out = group_sum(ids, data[indices].astype(acc, copy=False), rows)
    if kind != "sum":
        scale = _scale(kind, ids, rows, acc)
        out = out / scale.reshape((rows,) + (1,) * (data.ndim - 1))
    return out.astype(data.dtype, copy=False)


def _segment_shape(data, indices, segment_ids, rows=None):
    indices.with_rank(1)
    segment_ids.with_rank(1)
    if data.ndims is None:
        return TensorShape(None)
    data = data.with_rank_at_least(1)
    return TensorShape([rows] + list(data._dim_list[1:]))


def _op(name, kind, types, with_num_segments):
    inputs = ["data: T", "indices: Tidx", "segment_ids: Tsegmentids"]
    attrs = [f"T: {types}", f"Tidx: {_INDEX}", f"Tsegmentids: {_INDEX}"]
    if with_num_segments:
        inputs.append("num_segments: Tnumsegments")
        attrs.append(f"Tnumsegments: {_INDEX}")
    op = define_op(name, inputs=inputs, outputs=["output: T"], attrs=attrs)
    if with_num_segments:
        @op.shape_fn(value_inputs=("num_segments",))
        def _shape(data, indices, segment_ids, num_segments):
            rows = None if num_segments is None else int(np.asarray(num_segments).reshape(-1)[0])
            return _segment_shape(data, indices, segment_ids, rows)

        @op.kernel
        def _kernel(data, indices, segment_ids, num_segments):
            return _reduce(kind, data, indices, segment_ids, num_segments)
    else:
        op.shape_fn(_segment_shape)

        @op.kernel
        def _kernel(data, indices, segment_ids):
            return _reduce(kind, data, indices, segment_ids)
    return op


SparseSegmentSum = _op("SparseSegmentSum", "sum", "{realnumbertype}", False)
SparseSegmentMean = _op("SparseSegmentMean", "mean", _FLOATS, False)
SparseSegmentSqrtN = _op("SparseSegmentSqrtN", "sqrtn", _FLOATS, False)
SparseSegmentSumWithNumSegments = _op("SparseSegmentSumWithNumSegments", "sum",
                                      "{realnumbertype}", True)
SparseSegmentMeanWithNumSegments = _op("SparseSegmentMeanWithNumSegments", "mean", _FLOATS,
                                       True)
SparseSegmentSqrtNWithNumSegments = _op("SparseSegmentSqrtNWithNumSegments", "sqrtn",
                                        _FLOATS, True)


def _check_grad_ids(grad, indices, ids, rows):
    """TF's checks: enough gradient rows for the segments, then per position i (in order)
    indices[i] in [0, output_dim0) and segment_ids[i] in [0, last id + 1)."""
    if indices.shape != ids.shape:
        raise errors.InvalidArgumentError(
            None, None, f"segment_ids and indices should have same size, got {ids.size} and "
                        f"{indices.size}")
    segments = int(ids[-1]) + 1 if ids.size else 0
    if segments > grad.shape[0]:
        raise errors.InvalidArgumentError(
            None, None, f"Invalid number of segments: the last segment id needs {segments} "
                        f"gradient rows, got {grad.shape[0]}")
    bad_index = (indices < 0) | (indices >= rows)
    bad_id = (ids < 0) | (ids >= segments)
    bad = bad_index | bad_id
    if bad.any():
        i = int(np.argmax(bad))
        if bad_index[i]:
            raise errors.InvalidArgumentError(
                None, None, f"Index {int(indices[i])} out of range [0, {rows}).")
        raise errors.InvalidArgumentError(
            None, None, f"Segment id {int(ids[i])} out of range [0, {segments}).")


def _grad_op(name, kind):
    op = define_op(name, inputs=["grad: T", "indices: Tidx", "segment_ids: Tsegmentids",
                                 "output_dim0: int32"], outputs=["output: T"],
                   attrs=[f"T: {_FLOATS}", f"Tidx: {_INDEX}", f"Tsegmentids: {_INDEX}"],
                   differentiable=False)

    @op.shape_fn(value_inputs=("output_dim0",))
    def _shape(grad, indices, segment_ids, output_dim0):
        rows = None if output_dim0 is None else int(np.asarray(output_dim0).reshape(-1)[0])
        return _segment_shape(grad, indices, segment_ids, rows)

    @op.kernel
    def _kernel(grad, indices, segment_ids, output_dim0):
        rows = int(np.asarray(output_dim0).reshape(-1)[0])
        indices = np.asarray(indices, np.int64).reshape(-1)
        ids = np.asarray(segment_ids, np.int64).reshape(-1)
        _check_grad_ids(grad, indices, ids, rows)
        acc = _acc(grad.dtype)
        scale = _scale(kind, ids, grad.shape[0], acc)
        scaled = grad.astype(acc, copy=False) / scale.reshape((-1,) + (1,) * (grad.ndim - 1))
        return group_sum(indices, scaled[ids], rows).astype(grad.dtype, copy=False)

    return op


SparseSegmentMeanGrad = _grad_op("SparseSegmentMeanGrad", "mean")
SparseSegmentSqrtNGrad = _grad_op("SparseSegmentSqrtNGrad", "sqrtn")


def _data_rows(data):
    return shape_ops.shape(data, out_type=dtypes.int32)[0]


def _sum_grad(op, grad):
    data, indices, segment_ids = op.inputs[:3]
    dense = segment_ops.unsorted_segment_sum(gather_ops.gather(grad, segment_ids), indices,
                                             _data_rows(data))
    return [dense, None, None] + [None] * (len(op.inputs) - 3)


def _scaled_grad(grad_op):
    def gradient(op, grad):
        data, indices, segment_ids = op.inputs[:3]
        dense = grad_op(grad, indices, segment_ids, _data_rows(data))
        return [dense, None, None] + [None] * (len(op.inputs) - 3)

    return gradient


SparseSegmentSum.gradient(_sum_grad)
SparseSegmentSumWithNumSegments.gradient(_sum_grad)
SparseSegmentMean.gradient(_scaled_grad(SparseSegmentMeanGrad))
SparseSegmentMeanWithNumSegments.gradient(_scaled_grad(SparseSegmentMeanGrad))
SparseSegmentSqrtN.gradient(_scaled_grad(SparseSegmentSqrtNGrad))
SparseSegmentSqrtNWithNumSegments.gradient(_scaled_grad(SparseSegmentSqrtNGrad))


def _call(plain, with_num, data, indices, segment_ids, name, num_segments):
    data = convert_to_tensor(data, name="data")
    if num_segments is not None:
        if isinstance(num_segments, (int, np.integer)) and num_segments < 0:
            raise ValueError(f"Cannot specify a negative value for num_segments, got "
                             f"{num_segments}")
        return with_num(data, indices, segment_ids, num_segments, name=name)
    return plain(data, indices, segment_ids, name=name)


def sparse_segment_sum(data, indices, segment_ids, name=None, num_segments=None):
    """Sums the rows `data[indices]` by (sorted) `segment_ids`.

    Example:
        >>> c = tf.constant([[1, 2, 3, 4], [-1, -2, -3, -4], [5, 6, 7, 8]])
        >>> tf.sparse_segment_sum(c, [0, 1], [0, 0])   # -> [[0, 0, 0, 0]]
        >>> tf.sparse_segment_sum(c, [0, 2], [0, 1])   # -> [[1, 2, 3, 4], [5, 6, 7, 8]]
    """
    return _call(SparseSegmentSum, SparseSegmentSumWithNumSegments, data, indices, segment_ids,
                 name, num_segments)


def sparse_segment_mean(data, indices, segment_ids, name=None, num_segments=None):
    """Mean of the rows `data[indices]` of each (sorted) segment; empty segments are 0."""
    return _call(SparseSegmentMean, SparseSegmentMeanWithNumSegments, data, indices,
                 segment_ids, name, num_segments)


def sparse_segment_sqrt_n(data, indices, segment_ids, name=None, num_segments=None):
    """Sum of the rows `data[indices]` of each segment divided by sqrt(segment size)."""
    return _call(SparseSegmentSqrtN, SparseSegmentSqrtNWithNumSegments, data, indices,
                 segment_ids, name, num_segments)


def sparse_segment_sum_with_num_segments(data, indices, segment_ids, num_segments, name=None):
    """`sparse_segment_sum` with `num_segments` output rows (TF 1.x math_ops name)."""
    return sparse_segment_sum(data, indices, segment_ids, name=name, num_segments=num_segments)


def sparse_segment_mean_with_num_segments(data, indices, segment_ids, num_segments, name=None):
    """`sparse_segment_mean` with `num_segments` output rows (TF 1.x math_ops name)."""
    return sparse_segment_mean(data, indices, segment_ids, name=name, num_segments=num_segments)


def sparse_segment_sqrt_n_with_num_segments(data, indices, segment_ids, num_segments,
                                            name=None):
    """`sparse_segment_sqrt_n` with `num_segments` output rows (TF 1.x math_ops name)."""
    return sparse_segment_sqrt_n(data, indices, segment_ids, name=name,
                                 num_segments=num_segments)
