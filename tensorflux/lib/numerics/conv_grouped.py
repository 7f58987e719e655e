"""Grouped im2col for convolutions with few input channels (NHWC, stride and dilation 1
along the width).

A convolution with short window rows (kw * c up to MAX_RUN, K = kh * kw * c up to MAX_DEPTH)
and few output channels makes a thin product (the CNN benchmark's conv1: [pixels, 75] @
[75, 32]) that OpenBLAS runs at ~60% of its speed on wider ones, behind an im2col copy of
15-float runs. Here each im2col row covers G neighbouring outputs of a row (`patches`: the
kh * (kw + G - 1) * c inputs they read together) against a `[K', G * out]` filter holding
zeros where a pixel's window does not reach (`wide_filter`), up to MAX_COLS product columns
and 1.6x the flops ((kw + G - 1) / kw): a wider product, whose result rows are the NHWC
output itself, and G times fewer, longer copies. The filter gradient is the same product transposed
(`patches^T @ g` with `g` in its natural layout) folded back by `fold_filter`.

Measured (one BLAS thread, thread CPU, interleaved, machine load 8-12; forward / filter
gradient, ms plain -> grouped): the CNN benchmark's conv1 64x32x32x3 * 5x5x3x32 (G = 4)
8.5 -> 7.2 / 8.6 -> 7.6 (G = 2 about the same, G = 8 no better than plain); 5x5x3x16
11.5 -> 8.0 / 10.5 -> 8.1; the CIFAR-10 tutorial's 128x24x24x3 * 5x5x3x64 (G = 2) 23.0 ->
20.7 / 22.8 -> 22.4; 64x28x28x1 * 5x5x1x32 4.7 -> 3.5 forward, but its filter gradient (and
3x3x3 ones) 2-13% slower than the planar one: filter gradients group from MIN_FILTER_DEPTH
window inputs. Longer window rows (kw * c = 24, 30) and 2x the flops (3x3, G = 4) lost.
Sums run in another order than the plain im2col's (float rounding), and a zero filter entry
times an inf or NaN input would reach outputs whose windows do not hold it, so the forward
product is grouped only for finite inputs (conv2d checks).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

MAX_DEPTH = 96
MAX_COLS = 128
MAX_RUN = 16  # longer window rows (kw * c) copy well enough already
MIN_FILTER_DEPTH = 48  # smaller filter gradients are faster planar (conv2d)
_BLAS_TYPES = (np.dtype(np.float32), np.dtype(np.float64))


def patches(xp: np.ndarray, k_hw, out_hw, geo, group: int) -> np.ndarray:
    """A read-only `[n, oh, ow / group, kh, (kw + group - 1) * c]` strided view: for each run
    of `group` neighbouring outputs of a row (stride and dilation 1 along the width), the
    window rows they read together. Each pixel's channels must follow the previous pixel's
    (C-contiguous rows), or the runs would read other memory.

    Raises:
        ValueError: the rows of `xp` are not contiguous.
    """
    n, _, _, c = xp.shape
    s_n, s_h, s_w, _ = xp.strides  # (a channel stride of a 1-channel array may be anything)
    if s_w != c * xp.itemsize:
        raise ValueError(f"grouped im2col needs contiguous image rows, got strides {xp.strides}")
    sh, dh = geo.strides[0], geo.dilations[0]
    shape = (n, out_hw[0], out_hw[1] // group, k_hw[0], (k_hw[1] + group - 1) * c)
    strides = (s_n, s_h * sh, s_w * group, s_h * dh, xp.itemsize)
    return as_strided(xp, shape, strides, writeable=False)


def width_group(c: int, k_hw, depth: int, geo, out_w: int, dtype=np.float32,
                filter_gradient: bool = False) -> int:
    """G of the grouped im2col (see the module docstring): 1 when it does not apply (also
    for dtypes without BLAS products, where the extra flops would not pay, and for filter
    gradients of fewer than MIN_FILTER_DEPTH window inputs)."""
    kw = k_hw[1]
    depth_in = k_hw[0] * kw * c
    if np.dtype(dtype) not in _BLAS_TYPES or geo.strides[1] != 1 or geo.dilations[1] != 1 or \
            kw < 2 or kw * c > MAX_RUN or depth_in > MAX_DEPTH or \
            (filter_gradient and depth_in < MIN_FILTER_DEPTH):
        return 1
    for group in (4, 2):
        if group * depth <= MAX_COLS and out_w % group == 0 and \
                (kw + group - 1) * 5 <= kw * 8:  # at most 1.6x the flops
            return group
    return 1


def wide_filter(w: np.ndarray, group: int) -> np.ndarray:
    """The `[kh * (kw + group - 1) * c, group * out]` filter of the grouped im2col: column
    block g holds `w` shifted by g window columns, zeros elsewhere."""
    kh, kw, c, depth = w.shape
    wide = np.zeros((kh, kw + group - 1, c, group, depth), dtype=w.dtype)
    for g in range(group):
        wide[:, g:g + kw, :, g, :] = w
    return wide.reshape(kh * (kw + group - 1) * c, group * depth)


def fold_filter(wide: np.ndarray, k_hw, c: int, depth: int, group: int):
    """The `[kh, kw, c, out]` filter gradient from the grouped one (`wide_filter`'s
    adjoint: the G shifted blocks summed)."""
    kh, kw = k_hw
    wide = wide.reshape(kh, kw + group - 1, c, group, depth)
    dw = wide[:, 0:kw, :, 0, :].copy()
    for g in range(1, group):
        dw += wide[:, g:g + kw, :, g, :]
    return dw
