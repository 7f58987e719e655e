"""Direct compiled convolution for few input channels (NHWC, float32): no im2col matrix.

A first convolution layer (5x5 over 3 channels) is a thin product (`[pixels, 75] @ [75, 32]`)
that OpenBLAS runs at half the core's speed behind an im2col copy. Here each output block of
P pixels x 16 V channels is summed in registers over the kh * kw * c window inputs, read from
the padded input directly (`conv_direct_jit.gather_tile`, 512-bit FMAs), and the filter gradient
sums blocks of T window inputs x 16 V channels over an output row at a time
(`conv_direct_jit.reduce_tile`), adding each row's sums to the batch part's gradient.

Used when the compiled kernels are on (`jit.available()`) on a CPU with 512-bit vectors
(AVX-512F; elsewhere the explicit vectors would be split in two and the register tiles
spill, so im2col stays), for float32 with up to MAX_CHANNELS input channels and output
channels a multiple of 16. The sums run in window
order (forward) or pixel order (filter gradient) with fused multiply-adds: within float32
tolerance of the im2col product (tests compare them). Batch parts (from the shapes only) run
on the intra-op helpers (as many as BLAS has threads on a quiet machine, the split's under
load); filter gradients of the parts are summed in part order, so values are the same split
or not.

Measured (thread CPU, interleaved with the im2col path in one process): see bench/
conv_direct_probe.py.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from tensorflux.lib.numerics import intra_op, jit

__all__ = ["applies", "wide_vectors", "conv2d", "conv2d_backprop_filter",
           "MAX_CHANNELS"]

MAX_CHANNELS = 4
_WIDTH = 16
# Batches are cut into up to _MAX_PARTS parts of at least _MIN_PART_FLOPS each (from the shapes
# only, so a filter gradient sums its parts in the same order whether they run split or not).
_MIN_PART_FLOPS = 20e6
_MAX_PARTS = 4
# Filter gradients sum blocks of output pixels whose gradient rows hold about this many floats
# (at least one output row), read once per block of window inputs while in L1 cache.
BLOCK_FLOATS = 4096

# Under load (the row split on, BLAS with one thread) the batch parts run on the intra-op
# helpers too, as the convolutions on BLAS do (False: inline, as run_elementwise keeps them).
SPLIT_UNDER_LOAD = True

_tiles = []  # conv_direct_jit, once the first direct convolution runs (it imports numba)


def applies(dtype, c: int, depth: int) -> bool:
    """True when the direct kernels take this convolution (compiled kernels on, a CPU with
    512-bit vectors, float32, 1..MAX_CHANNELS input channels, output channels a positive
    multiple of 16)."""
    return (np.dtype(dtype) == np.float32 and 0 < c <= MAX_CHANNELS and depth > 0
            and depth % _WIDTH == 0 and jit.available() and wide_vectors())


@functools.cache
def wide_vectors() -> bool:
    """True when numba compiles for this machine's CPU and it has AVX-512F (Linux's
    /proc/cpuinfo; False where it cannot be read or NUMBA_CPU_NAME picks another target)."""
    if os.environ.get("NUMBA_CPU_NAME", "host") != "host":
        return False
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith("flags"):
                    return "avx512f" in line.split()
    except OSError:
        pass
    return False


def _offsets(k_hw, c: int, row: int, geo) -> np.ndarray:
    """The flat offset of each (kh, kw, c) window input from its window's first input."""
    kh, kw = k_hw
    dh, dw = geo.dilations
    return (np.arange(kh)[:, None, None] * (dh * row) + np.arange(kw)[None, :, None] * (dw * c)
            + np.arange(c)[None, None, :]).reshape(-1).astype(np.int64)


def _parts(n: int, per_item_flops: float) -> list:
    """Batch parts `(lo, hi)`, from the shapes only."""
    return intra_op.balanced_parts(n, min(_MAX_PARTS, max(1, int(n * per_item_flops
                                                                 // _MIN_PART_FLOPS))))


def _layout(x: np.ndarray, k_hw, geo, pad):
    """(flat padded input, offsets, image size, row step, pixel step, out_hw)."""
    n, h, wd, c = x.shape
    out_hw, pads = geo.geometry(h, wd, k_hw[0], k_hw[1])
    xp = np.ascontiguousarray(pad(x.astype(np.float32, copy=False), pads))
    hp, wp = xp.shape[1], xp.shape[2]
    row = wp * c
    steps = (hp * row, geo.strides[0] * row, geo.strides[1] * c)
    return xp.reshape(-1), _offsets(k_hw, c, row, geo), steps, out_hw


def _run(part, parts: int) -> None:
    """The batch parts on the intra-op threads: the split's helpers when it is on (a loaded
    machine), else as many as BLAS has (`run_elementwise`: none call BLAS)."""
    if SPLIT_UNDER_LOAD and intra_op.splits() > 1:
        intra_op.run_parts(part, parts)
    else:
        intra_op.run_elementwise(part, parts)


def _kernels():
    if not _tiles:
        # deferred: conv_direct_jit imports numba (~0.5 s), paid at the first direct one
        from tensorflux.lib.numerics import conv_direct_jit
        _tiles.append(conv_direct_jit)
    return _tiles[0]


def conv2d(x: np.ndarray, w: np.ndarray, geo, pad, epilogue=None) -> np.ndarray:
    """NHWC convolution of x [n, h, w, c] with w [kh, kw, c, out] (see `applies`); `pad` is
    conv2d.pad_nhwc. `epilogue(y)`, when given, updates each batch part of the result in
    place right after it is computed."""
    kh, kw, c, depth = w.shape
    n = x.shape[0]
    s, offs, (image, rs, ps), out_hw = _layout(x, (kh, kw), geo, pad)
    tiles = _kernels()
    wm = tiles.pack_filter(w.reshape(-1, depth))
    out = np.empty((n, out_hw[0], out_hw[1], depth), dtype=np.float32)
    flat = out.reshape(-1)
    parts = _parts(n, 2.0 * out_hw[0] * out_hw[1] * offs.size * depth)

    def part(i: int) -> None:
        lo, hi = parts[i]
        tiles.forward(s, offs, wm, flat, lo, hi, image, rs, ps, out_hw[0], out_hw[1], depth)
        if epilogue is not None:
            epilogue(out[lo:hi])

    if out.size:
        _run(part, len(parts))
    return out


def conv2d_backprop_filter(x: np.ndarray, filter_shape, g: np.ndarray, geo, pad) -> np.ndarray:
    """d(conv2d)/d(filter) [kh, kw, c, out] for output gradient g [n, oh, ow, out] (see
    `applies`); `pad` is conv2d.pad_nhwc."""
    kh, kw, c, depth = (int(d) for d in filter_shape)
    n = x.shape[0]
    s, offs, (image, rs, ps), out_hw = _layout(x, (kh, kw), geo, pad)
    gf = np.ascontiguousarray(g, dtype=np.float32).reshape(-1)
    parts = _parts(n, 2.0 * out_hw[0] * out_hw[1] * offs.size * depth)
    pixels = (np.arange(out_hw[0])[:, None] * rs + np.arange(out_hw[1])[None, :] * ps)
    pixels = pixels.reshape(-1).astype(np.int64)
    block = max(out_hw[1], BLOCK_FLOATS // depth)
    partials = np.zeros((max(len(parts), 1), offs.size * depth), dtype=np.float32)
    tiles = _kernels()

    def part(i: int) -> None:
        lo, hi = parts[i]
        tiles.filter_gradient(s, offs, pixels, gf, partials[i], lo, hi, image, depth, block)

    if g.size:
        _run(part, len(parts))
    dw = partials[0]
    for partial in partials[1:]:
        dw += partial
    return dw.reshape(kh, kw, c, depth)
