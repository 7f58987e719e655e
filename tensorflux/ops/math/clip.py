"""Gradient clipping: by norm, by global norm, by average norm (composites of math ops)."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.math import select as select_ops

__all__ = ["clip_by_norm", "clip_by_global_norm", "global_norm", "clip_by_average_norm"]


def _values(t):
    return t.values if isinstance(t, IndexedSlices) else t


def _rewrap(original, values):
    if isinstance(original, IndexedSlices):
        return IndexedSlices(values, original.indices, original.dense_shape)
    return values


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """Scales `t` so its L2 norm (over `axes`) is at most `clip_norm`."""

    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "clip_by_norm") as scope:
        values = convert_to_tensor(_values(t))
        l2sum = math_ops.reduce_sum(values * values, axes, keepdims=True)
        pred = l2sum > 0
        safe = select_ops.where(pred, l2sum, array_ops.ones_like(l2sum))
        l2norm = select_ops.where(pred, math_ops.sqrt(safe), l2sum)
        clip_norm = _as_norm_dtype(clip_norm, values.dtype)
        clipped = values * clip_norm / math_ops.maximum(l2norm, clip_norm)
        clipped = array_ops.identity(clipped, name=scope)
        # As TF: a clip_norm that broadcasts `t` to another shape is rejected here.
        clipped.set_shape(values.shape)
        return _rewrap(t, clipped)


def global_norm(t_list, name=None):
    """sqrt(sum of squared L2 norms) of a list of tensors (None entries ignored)."""

    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "global_norm") as scope:
        squares = []
        for t in t_list:
            if t is None:
                continue
            values = convert_to_tensor(_values(t))
            squares.append(math_ops.reduce_sum(values * values))
        if not squares:
            return convert_to_tensor(0.0, name=scope)
        dtype = squares[0].dtype.base_dtype
        total = math_ops.add_n([math_ops.cast(s, dtype) for s in squares])
        return math_ops.sqrt(total, name=scope)


def _as_norm_dtype(value, dtype):
    """A Python number straight in `dtype` (no float32 rounding first); tensors are cast."""

    if isinstance(value, (int, float, np.floating, np.integer)):
        return convert_to_tensor(value, dtype=dtype)
    return math_ops.cast(value, dtype)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scales every tensor by clip_norm / max(global_norm, clip_norm).

    When the global norm is infinite (or NaN) every entry is set to NaN, as in TF.

    Returns:
        (list of clipped tensors, the global norm used).
    """

    if not isinstance(t_list, (list, tuple)):
        raise TypeError("t_list should be a sequence")
    t_list = list(t_list)
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "clip_by_global_norm"):
        norm = global_norm(t_list) if use_norm is None else convert_to_tensor(use_norm)
        clip_norm = _as_norm_dtype(clip_norm, norm.dtype)
        finite_scale = clip_norm * math_ops.minimum(1.0 / norm, 1.0 / clip_norm)
        # An infinite (or NaN) global norm sets every entry to NaN, signalling the error.
        scale = array_ops.where(math_ops.is_finite(norm), finite_scale,
                                array_ops.fill(array_ops.shape(norm),
                                               convert_to_tensor(float("nan"), norm.dtype)))
        clipped = []
        for t in t_list:
            if t is None:
                clipped.append(None)
                continue
            values = convert_to_tensor(_values(t))
            scaled = array_ops.identity(values * math_ops.cast(scale, values.dtype))
            clipped.append(_rewrap(t, scaled))
        return clipped, norm


def clip_by_average_norm(t, clip_norm, name=None):
    """Clips `t` so that its L2 norm divided by its number of elements is <= clip_norm."""

    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "clip_by_average_norm"):
        t = convert_to_tensor(t)
        count = math_ops.cast(array_ops.size(t), t.dtype)
        l2norm_inv = math_ops.rsqrt(math_ops.reduce_sum(t * t))
        scale = clip_norm * math_ops.minimum(l2norm_inv * count, 1.0 / clip_norm)
        return t * scale
