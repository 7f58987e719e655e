"""Gradients of the reductions, scans and segment reductions.

A reduction's gradient is reshaped to the "kept" shape (reduced axes of size 1) and broadcast
back. The kept shape is a constant when the input's shape and the axes are static; otherwise
it is `shape(x) * (1 - m) + m` with `m` the 0/1 mask of reduced axes (a constant when the rank
and axes are, else computed in the graph).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.tensor_conversion import constant_value
from tensorflux.ops.math import reduction as red
from tensorflux.ops.math import segment as seg
from tensorflux.ops.math.binary import AddV2, DivNoNan, Maximum, Mul, RealDiv, Sub
from tensorflux.ops.math.unary import Conj


def _array_ops():
    from tensorflux.ops import array as array_ops

    return array_ops


def _reduced_mask(x, axes_tensor):
    """(kept-shape list or None, 0/1 int32 mask tensor or ndarray) for reducing x over axes."""
    axes = constant_value(axes_tensor)
    rank = x.shape.ndims
    if axes is not None and rank is not None:
        reduced = {int(a) % rank for a in np.asarray(axes).reshape(-1)} if rank else set()
        mask = np.array([1 if i in reduced else 0 for i in range(rank)], np.int32)
        if x.shape.is_fully_defined():
            kept = [1 if m else d for m, d in zip(mask, x.shape.as_list())]
            return kept, mask
        return None, mask
    from tensorflux.ops.math.binary import FloorMod
    from tensorflux.ops.math.casting import cast
    from tensorflux.ops.math.comparison import Equal
    from tensorflux.ops.math.sequence import range as range_

    array_ops = _array_ops()
    r = array_ops.rank(x)
    positions = array_ops.reshape(range_(0, r), [1, -1])
    modulus = Maximum(r, np.int32(1))  # a scalar has no axes to reduce; avoid x % 0
    axes_t = array_ops.reshape(FloorMod(AddV2(cast(axes_tensor, dtypes.int32), r), modulus),
                               [-1, 1])
    hit = red.Any(Equal(positions, axes_t), [0])
    return None, cast(hit, dtypes.int32)


def _kept_shape(x, axes_tensor):
    """The keep_dims output shape of reducing x: a Python list or an int32 tensor."""
    kept, mask = _reduced_mask(x, axes_tensor)
    if kept is not None:
        return kept
    sx = _array_ops().shape(x)
    return AddV2(Mul(sx, Sub(np.int32(1), mask)), mask)


def _to_kept(op, grad):
    """`grad` reshaped to the keep_dims shape of op's reduction."""
    if op.get_attr("keep_dims"):
        return grad
    return _array_ops().reshape(grad, _kept_shape(op.inputs[0], op.inputs[1]))


def _output_kept(op):
    y = op.outputs[0]
    if op.get_attr("keep_dims"):
        return y
    return _array_ops().reshape(y, _kept_shape(op.inputs[0], op.inputs[1]))


def _broadcast_back(grad_kept, x):
    array_ops = _array_ops()
    target = x.shape.as_list() if x.shape.is_fully_defined() else array_ops.shape(x)
    if grad_kept.shape.is_fully_defined() and x.shape.is_fully_defined() and \
            grad_kept.shape.as_list() == x.shape.as_list():
        return grad_kept
    return array_ops.broadcast_to(grad_kept, target)


@red.Sum.gradient
def _sum_grad(op, grad):
    return _broadcast_back(_to_kept(op, grad), op.inputs[0]), None


def _count(x, y, dtype):
    """Number of input elements per output element, as a scalar of `dtype`."""
    nx, ny = x.shape.num_elements(), y.shape.num_elements()
    if nx is not None and ny is not None:
        return np.asarray(nx // max(ny, 1), dtype.as_numpy_dtype)
    from tensorflux.ops.math.binary import FloorDiv
    from tensorflux.ops.math.casting import cast

    array_ops = _array_ops()
    count = FloorDiv(array_ops.size(x), Maximum(array_ops.size(y), np.int32(1)))
    return cast(count, dtype)


@red.Mean.gradient
def _mean_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    total = _broadcast_back(_to_kept(op, grad), x)
    return RealDiv(total, _count(x, y, grad.dtype.base_dtype)), None


def _min_max_grad(op, grad):
    from tensorflux.ops.math.casting import cast
    from tensorflux.ops.math.comparison import Equal

    x, axes = op.inputs
    indicators = cast(Equal(_output_kept(op), x), grad.dtype.base_dtype)
    selected = red.Sum(indicators, axes, keep_dims=True)
    return Mul(RealDiv(indicators, selected), _to_kept(op, grad)), None


red.Max.gradient(_min_max_grad)
red.Min.gradient(_min_max_grad)


@red.Prod.gradient
def _prod_grad(op, grad):
    """Zero-safe: d prod / d x_i = product of the other elements, from exclusive cumprods."""
    x, axes_t = op.inputs
    axes = constant_value(axes_t)
    g = _to_kept(op, grad)
    if axes is None or x.shape.ndims is None:
        # NOTE: unknown axes or rank: fall back to y / x (not defined where x == 0).
        y = _output_kept(op)
        return _broadcast_back(Mul(g, Conj(RealDiv(y, x)) if x.dtype.is_complex else
                                   RealDiv(y, x)), x), None
    rank = x.shape.ndims
    order = sorted({int(a) % rank for a in np.asarray(axes).reshape(-1)}) if rank else []
    partials = [x]
    for axis in order:
        partials.append(red.Prod(partials[-1], [axis], keep_dims=True))
    for k in reversed(range(len(order))):
        z, axis = partials[k], order[k]
        others = Mul(red.Cumprod(z, axis, exclusive=True),
                     red.Cumprod(z, axis, exclusive=True, reverse=True))
        g = Mul(g, Conj(others) if x.dtype.is_complex else others)
    return _broadcast_back(g, x), None


@red.EuclideanNorm.gradient
def _euclidean_norm_grad(op, grad):
    x = op.inputs[0]
    return Mul(DivNoNan(x, _output_kept(op)), _to_kept(op, grad)), None


@red.Cumsum.gradient
def _cumsum_grad(op, grad):
    axis = op.inputs[1]
    return red.Cumsum(grad, axis, exclusive=op.get_attr("exclusive"),
                      reverse=not op.get_attr("reverse")), None


@red.Cumprod.gradient
def _cumprod_grad(op, grad):
    x, axis = op.inputs
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    prod = red.Cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    out = red.Cumsum(Mul(prod, grad), axis, exclusive=exclusive, reverse=not reverse)
    return DivNoNan(out, x), None


# -- segment reductions -----------------------------------------------------------------------

def _gather(params, indices):
    return _array_ops().gather(params, indices)


def _row_mask(mask, data):
    """A [n] or ids-shaped bool mask reshaped to broadcast against `data` (ids + row dims)."""
    array_ops = _array_ops()
    if data.shape.ndims is not None and mask.shape.ndims is not None:
        tail = data.shape.ndims - mask.shape.ndims
        if mask.shape.is_fully_defined():
            return array_ops.reshape(mask, mask.shape.as_list() + [1] * tail)
        ones = np.ones([tail], np.int32)
    else:
        ones = array_ops.fill(array_ops.reshape(Sub(array_ops.rank(data),
                                                    array_ops.rank(mask)), [1]), np.int32(1))
    return array_ops.reshape(mask, array_ops.concat([array_ops.shape(mask), ones], 0))


def _gather_drop_negatives(params, ids):
    """gather(params, ids) with zero rows where ids < 0; also returns the clipped ids."""
    from tensorflux.ops.math.comparison import GreaterEqual
    from tensorflux.ops.math.select import SelectV2

    zero = np.zeros([], ids.dtype.as_numpy_dtype)
    clipped = Maximum(ids, zero)
    gathered = _gather(params, clipped)
    keep = _row_mask(GreaterEqual(ids, zero), gathered)
    return SelectV2(keep, gathered, np.zeros([], params.dtype.as_numpy_dtype)), clipped


@seg.SegmentSum.gradient
def _segment_sum_grad(op, grad):
    return _gather(grad, op.inputs[1]), None


@seg.UnsortedSegmentSum.gradient
def _unsorted_segment_sum_grad(op, grad):
    return _gather_drop_negatives(grad, op.inputs[1])[0], None, None


@seg.SegmentMean.gradient
def _segment_mean_grad(op, grad):
    from tensorflux.ops.math.casting import cast
    from tensorflux.ops.math.comparison import GreaterEqual

    data, ids = op.inputs
    ones = cast(GreaterEqual(ids, np.zeros([], ids.dtype.as_numpy_dtype)), grad.dtype)
    counts = seg.SegmentSum(ones, ids)
    scaled = RealDiv(grad, _row_mask(counts, grad))
    return _gather(scaled, ids), None


def _segment_min_max_grad(op, grad, sorted_ids):
    from tensorflux.ops.math.casting import cast
    from tensorflux.ops.math.comparison import Equal, LogicalAnd
    from tensorflux.ops.math.select import SelectV2

    data, ids = op.inputs[0], op.inputs[1]
    zero = np.zeros([], grad.dtype.as_numpy_dtype)
    if sorted_ids:
        selected = Equal(data, _gather(op.outputs[0], ids))
        counts = seg.SegmentSum(cast(selected, grad.dtype), ids)
        weighted = RealDiv(grad, counts)
        return SelectV2(selected, _gather(weighted, ids), zero), None
    gathered, clipped = _gather_drop_negatives(op.outputs[0], ids)
    from tensorflux.ops.math.comparison import GreaterEqual

    positive = _row_mask(GreaterEqual(ids, np.zeros([], ids.dtype.as_numpy_dtype)), data)
    selected = LogicalAnd(Equal(data, gathered), positive)
    counts = seg.UnsortedSegmentSum(cast(selected, grad.dtype), ids, op.inputs[2])
    weighted = RealDiv(grad, counts)
    return SelectV2(selected, _gather(weighted, clipped), zero), None, None


seg.SegmentMax.gradient(lambda op, grad: _segment_min_max_grad(op, grad, True))
seg.SegmentMin.gradient(lambda op, grad: _segment_min_max_grad(op, grad, True))
seg.UnsortedSegmentMax.gradient(lambda op, grad: _segment_min_max_grad(op, grad, False))
seg.UnsortedSegmentMin.gradient(lambda op, grad: _segment_min_max_grad(op, grad, False))


def _segment_prod_grad(op, grad, sorted_ids):
    """Zero-safe: one zero in a segment -> its gradient is the product of the others."""
    from tensorflux.ops.math.casting import cast
    from tensorflux.ops.math.comparison import Equal, Greater
    from tensorflux.ops.math.select import SelectV2

    data, ids = op.inputs[0], op.inputs[1]
    zero = np.zeros([], data.dtype.as_numpy_dtype)
    one = np.ones([], data.dtype.as_numpy_dtype)
    is_zero = Equal(data, zero)
    if sorted_ids:
        zeros_per_segment = seg.SegmentSum(cast(is_zero, dtypes.int32), ids)
        nonzero_prod = seg.SegmentProd(SelectV2(is_zero, one, data), ids)
    else:
        num = op.inputs[2]
        zeros_per_segment = seg.UnsortedSegmentSum(cast(is_zero, dtypes.int32), ids, num)
        nonzero_prod = seg.UnsortedSegmentProd(SelectV2(is_zero, one, data), ids, num)
    grad = SelectV2(Greater(zeros_per_segment, np.int32(1)), zero, grad)
    if sorted_ids:
        clipped = ids
        gathered_grad = _gather(grad, ids)
    else:
        gathered_grad, clipped = _gather_drop_negatives(grad, ids)
    gathered_prod = _gather(op.outputs[0], clipped)
    gathered_nonzero = _gather(nonzero_prod, clipped)
    divided = DivNoNan(gathered_prod, data)
    partial = SelectV2(is_zero, gathered_nonzero, divided)
    result = Mul(gathered_grad, Conj(partial) if data.dtype.is_complex else partial)
    return (result, None) if sorted_ids else (result, None, None)


seg.SegmentProd.gradient(lambda op, grad: _segment_prod_grad(op, grad, True))
seg.UnsortedSegmentProd.gradient(lambda op, grad: _segment_prod_grad(op, grad, False))
