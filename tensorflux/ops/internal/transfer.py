"""Ops the partitioner inserts around lossy transfers (`enable_bfloat16_sendrecv`).

`_PackBFloat16` keeps the top 16 bits of each float32 (sign, exponent, 7 mantissa bits: a
truncated bfloat16), so a transfer carries half the bytes; `_UnpackBFloat16` widens them back
to float32 with zero low bits. NaNs stay NaNs (a payload only in the dropped bits would
otherwise turn into an infinity).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework.op_def import define_op

__all__: list = []

PackBFloat16 = define_op("_PackBFloat16", inputs=["input: float"], outputs=["output: uint16"],
                         differentiable=False)


@PackBFloat16.shape_fn
def _pack_shape(input):
    return input


@PackBFloat16.kernel
def _pack_kernel(x):
    x = np.ascontiguousarray(x, dtype=np.float32)
    bits = (x.view(np.uint32) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FC0), bits).astype(np.uint16, copy=False)


UnpackBFloat16 = define_op("_UnpackBFloat16", inputs=["input: uint16"],
                           outputs=["output: float"], differentiable=False)


@UnpackBFloat16.shape_fn
def _unpack_shape(input):
    return input


@UnpackBFloat16.kernel
def _unpack_kernel(bits):
    return (np.asarray(bits, dtype=np.uint32) << 16).view(np.float32)
