"""The compiled loops of conv_direct (see there): output blocks and filter-gradient blocks
of `simd_tiles` over a batch part. Importing this module imports numba."""

from __future__ import annotations

import numpy as np

from tensorflux.lib.numerics import jit
from tensorflux.lib.numerics.simd_tiles import gather_tile, reduce_tile

__all__ = ["forward", "filter_gradient"]


@jit.jit
def forward(s, offs, wm, out, lo, hi, image, rs, ps, oh, ow, depth):
    """Output images lo..hi: P x V blocks (V = 4, 2 or 1 vectors), then single pixels."""
    taps = offs.shape[0]
    for b in range(lo, hi):
        for i in range(oh):
            sb = b * image + i * rs
            ob = (b * oh + i) * ow * depth
            if depth % 64 == 0:
                j = 0
                while j + 6 <= ow:
                    for d in range(0, depth, 64):
                        gather_tile(s, sb + j * ps, ps, offs, d, wm, depth, ob + j * depth + d,
                                    out, depth, taps, 6, 4)
                    j += 6
                while j < ow:
                    for d in range(0, depth, 64):
                        gather_tile(s, sb + j * ps, ps, offs, d, wm, depth, ob + j * depth + d,
                                    out, depth, taps, 1, 4)
                    j += 1
            elif depth % 32 == 0:
                j = 0
                while j + 8 <= ow:
                    for d in range(0, depth, 32):
                        gather_tile(s, sb + j * ps, ps, offs, d, wm, depth, ob + j * depth + d,
                                    out, depth, taps, 8, 2)
                    j += 8
                while j < ow:
                    for d in range(0, depth, 32):
                        gather_tile(s, sb + j * ps, ps, offs, d, wm, depth, ob + j * depth + d,
                                    out, depth, taps, 1, 2)
                    j += 1
            else:
                j = 0
                while j + 12 <= ow:
                    for d in range(0, depth, 16):
                        gather_tile(s, sb + j * ps, ps, offs, d, wm, depth, ob + j * depth + d,
                                    out, depth, taps, 12, 1)
                    j += 12
                while j < ow:
                    for d in range(0, depth, 16):
                        gather_tile(s, sb + j * ps, ps, offs, d, wm, depth, ob + j * depth + d,
                                    out, depth, taps, 1, 1)
                    j += 1


@jit.jit
def filter_gradient(s, offs, pixels, g, dw, lo, hi, image, depth, block):
    """Adds the images lo..hi to dw [taps * depth]: per block of `block` output pixels (at
    offsets `pixels` in their image), T x V blocks (V = 4, 2 or 1 vectors), then single
    window inputs; summed per image, then into dw (shorter float sums)."""
    taps = offs.shape[0]
    count = pixels.shape[0]
    image_dw = np.empty_like(dw)
    for b in range(lo, hi):
        image_dw[:] = 0
        sb = b * image
        for p in range(0, count, block):
            n = min(block, count - p)
            at = pixels[p:]
            gb = (b * count + p) * depth
            if depth % 64 == 0:
                k = 0
                while k + 6 <= taps:
                    for d in range(0, depth, 64):
                        reduce_tile(s, sb, at, offs[k:], gb + d, g, depth, k * depth + d,
                                    image_dw, depth, n, 6, 4)
                    k += 6
                while k < taps:
                    for d in range(0, depth, 64):
                        reduce_tile(s, sb, at, offs[k:], gb + d, g, depth, k * depth + d,
                                    image_dw, depth, n, 1, 4)
                    k += 1
            elif depth % 32 == 0:
                k = 0
                while k + 8 <= taps:
                    for d in range(0, depth, 32):
                        reduce_tile(s, sb, at, offs[k:], gb + d, g, depth, k * depth + d,
                                    image_dw, depth, n, 8, 2)
                    k += 8
                while k < taps:
                    for d in range(0, depth, 32):
                        reduce_tile(s, sb, at, offs[k:], gb + d, g, depth, k * depth + d,
                                    image_dw, depth, n, 1, 2)
                    k += 1
            else:
                k = 0
                while k + 8 <= taps:
                    for d in range(0, depth, 16):
                        reduce_tile(s, sb, at, offs[k:], gb + d, g, depth, k * depth + d,
                                    image_dw, depth, n, 8, 1)
                    k += 8
                while k < taps:
                    for d in range(0, depth, 16):
                        reduce_tile(s, sb, at, offs[k:], gb + d, g, depth, k * depth + d,
                                    image_dw, depth, n, 1, 1)
                    k += 1
        dw += image_dw
