"""Rank-generic pooling wrappers: tf.nn.pool and tf.nn.max_pool_v2 / avg_pool_v2.

1-D pooling is nn_conv1d's max_pool1d / avg_pool1d (2-D pooling of a height-1 image).
`tf.nn.pool` with a dilation rate above 1 pools VALID windows of the space-to-batch
rearranged input (SpaceToBatchND, pool, BatchToSpaceND); like TensorFlow it rejects dilation
with SAME padding, and dilation together with strides above 1.
"""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.framework.graph import get_default_graph
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.array import space_batch as space_batch_ops
from tensorflux.ops.nn import conv1d as nn_conv1d
from tensorflux.ops.nn import pool3d as pool3d_ops
from tensorflux.ops.nn import pooling as pooling_ops

__all__ = ["pool", "max_pool_v2", "avg_pool_v2"]


def _spatial_rank(input, data_format, what: str) -> int:
    rank = input.shape.ndims
    if rank is None:
        if data_format is None:
            raise ValueError(f"{what}: the input rank must be known or data_format given")
        rank = len(data_format)
    if rank not in (3, 4, 5):
        raise ValueError(f"{what}: input must be 3-D, 4-D or 5-D (1 to 3 spatial dimensions), "
                         f"got rank {rank}")
    return rank - 2


def _pool_nd(kind: str, input, ksize, strides, padding, data_format, name):
    n = _spatial_rank(input, data_format, f"{kind}_pool")
    if n == 1:
        op = nn_conv1d.max_pool1d if kind == "max" else nn_conv1d.avg_pool1d
        return op(input, ksize, strides, padding, data_format=data_format or "NWC", name=name)
    if n == 2:
        op = pooling_ops.max_pool2d if kind == "max" else pooling_ops.avg_pool2d
        return op(input, ksize, strides, padding, data_format=data_format or "NHWC", name=name)
    op = pool3d_ops.max_pool3d if kind == "max" else pool3d_ops.avg_pool3d
    return op(input, ksize, strides, padding, data_format=data_format or "NDHWC", name=name)


def max_pool_v2(input, ksize, strides, padding, data_format=None, name=None):
    """Max pooling over 1, 2 or 3 spatial dimensions, chosen by the input's rank.

    Args:
        input: `[batch, *spatial, channels]` (or channels first with `data_format`).
        ksize, strides: an int or 1, N or N + 2 ints.
        padding: 'SAME' or 'VALID'.
        data_format: 'NWC'/'NCW', 'NHWC'/'NCHW' or 'NDHWC'/'NCDHW'; channels last by default.

    Returns:
        The pooled tensor.

    Example: `tf.nn.max_pool_v2(x, ksize=2, strides=2, padding="SAME")`.
    """
    input = convert_to_tensor(input)
    return _pool_nd("max", input, ksize, strides, padding, data_format, name)


def avg_pool_v2(input, ksize, strides, padding, data_format=None, name=None):
    """Average pooling over 1, 2 or 3 spatial dimensions, chosen by the input's rank.

    Example: `tf.nn.avg_pool_v2(x, ksize=[2, 2], strides=[2, 2], padding="VALID")`.
    """
    input = convert_to_tensor(input)
    return _pool_nd("avg", input, ksize, strides, padding, data_format, name)


def _formats(n: int, data_format):
    last = {1: "NWC", 2: "NHWC", 3: "NDHWC"}[n]
    first = {1: "NCW", 2: "NCHW", 3: "NCDHW"}[n]
    if data_format is None:
        return last, False
    if data_format not in (last, first):
        raise ValueError(f"pool: data_format must be {last!r} or {first!r} for {n} spatial "
                         f"dimensions, got {data_format!r}")
    return data_format, data_format == first


def pool(input, window_shape, pooling_type, padding, dilation_rate=None, strides=None,
         name=None, data_format=None, dilations=None):
    """N-D (1 to 3 spatial dimensions) max or average pooling with optional dilation.

    Args:
        input: `[batch, *spatial, channels]` (or channels first with `data_format`).
        window_shape: N ints.
        pooling_type: 'MAX' or 'AVG'.
        padding: 'SAME' or 'VALID' ('SAME' only without dilation).
        dilation_rate, dilations: N ints (default 1); give one of them.
        strides: N ints (default 1); strides above 1 need dilation 1.

    Returns:
        The pooled tensor.

    Raises:
        ValueError: bad pooling_type, ranks, or strides/padding combined with dilation.

    Example: `tf.nn.pool(x, [2, 2], "MAX", "VALID", dilation_rate=[2, 2])`.
    """
    if dilation_rate is not None and dilations is not None:
        raise ValueError("Cannot specify both 'dilation_rate' and 'dilations'.")
    dilation_rate = dilation_rate if dilation_rate is not None else dilations
    window_shape = [int(v) for v in window_shape]
    n = len(window_shape)
    if n not in (1, 2, 3):
        raise ValueError(f"pool: window_shape must have 1 to 3 entries, got {window_shape}")
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError(f"pool: pooling_type must be 'MAX' or 'AVG', got {pooling_type!r}")
    padding = padding.decode() if isinstance(padding, bytes) else padding
    padding = padding.upper()
    dilation_rate = [1] * n if dilation_rate is None else [int(v) for v in dilation_rate]
    strides = [1] * n if strides is None else [int(v) for v in strides]
    if len(dilation_rate) != n or len(strides) != n:
        raise ValueError(f"pool: dilation_rate {dilation_rate} and strides {strides} must "
                         f"have {n} entries (one per window dimension)")
    if min(dilation_rate) < 1 or min(strides) < 1:
        raise ValueError("pool: dilation_rate and strides must be positive")
    dilated = any(r != 1 for r in dilation_rate)
    if dilated and any(s != 1 for s in strides):
        raise ValueError("pool: strides > window_shape not supported due to inconsistency "
                         "between CPU and GPU implementations; strides above 1 require "
                         f"dilation_rate 1, got strides={strides}, "
                         f"dilation_rate={dilation_rate}")
    if dilated and padding == "SAME":
        raise ValueError("pooling with 'SAME' padding is not implemented for `dilation_rate` "
                         f"> 1. Received: padding={padding} and dilation_rate={dilation_rate}")
    kind = "max" if pooling_type == "MAX" else "avg"
    input = convert_to_tensor(input)
    if input.shape.ndims is not None and input.shape.ndims != n + 2:
        raise ValueError(f"pool: input must have rank {n + 2} for a {n}-D window, got rank "
                         f"{input.shape.ndims}")
    data_format, channels_first = _formats(n, data_format)
    with get_default_graph().name_scope(name or f"{kind}_pool"):
        if not dilated:
            return _pool_nd(kind, input, window_shape, strides, padding, data_format, None)
        if channels_first:
            perm = [0, *range(2, n + 2), 1]
            input = shape_ops.transpose(input, perm)
        out = _dilated_valid(kind, input, window_shape, dilation_rate)
        if channels_first:
            out = shape_ops.transpose(out, [0, n + 1, *range(1, n + 1)])
        return out


def _dilated_valid(kind: str, input, window_shape, rates):
    """VALID dilated pooling of channels-last `input`: each of the prod(rates) phases of the
    input is pooled with a dense window, then the phases are interleaved back."""
    n = len(window_shape)
    rates_t = convert_to_tensor(rates, dtype=dtypes.int32)
    sizes = array_ops.shape(input, out_type=dtypes.int32)[1:n + 1]
    extra = math_ops.floormod(-sizes, rates_t)
    zeros = array_ops.zeros_like(extra)
    paddings = array_ops.stack([zeros, extra], axis=1)
    crops = array_ops.stack([zeros, extra], axis=1)
    batched = space_batch_ops.space_to_batch_nd(input, rates_t, paddings)
    pooled = _pool_nd(kind, batched, window_shape, 1, "VALID", None, None)
    return space_batch_ops.batch_to_space_nd(pooled, rates_t, crops)
