"""Compiled 2-D pooling (NHWC, float32/float64): one pass where NumPy makes one per offset.

Each function matches its NumPy reference in `conv2d.py` (kept as the reference and the
fallback, see `jit.available()`):

- `max_pool`: NaN propagates (as `np.maximum`); positions in the padding count as -inf.
- `max_pool_grad`: TF's scan rule: the window's first position is the candidate and a later
  one wins only when strictly greater, so ties go to the first maximum and a NaN wins only in
  first place; padding positions take part (as -inf) and a gradient routed there is dropped.
- `avg_pool` / `avg_pool_grad`: sums of the real (unpadded) inputs divided by their count.

- `max_pool_grad_relu`: MaxPoolGrad of `ReluGrad(g, pooled)` and that gradient's per-channel
  sum (the runtime's `_FusedMaxPoolGrad`: relu -> [bias] -> max_pool backward in one pass).

float32 `max_pool` and `max_pool_grad` with at least 16 channels (and 64 KiB) run on explicit
16-float vectors instead (`pool_vector_jit`: each window in registers), with the same bits as
the scalar kernels here.

Results are bit-identical to the references except where windows overlap (stride < window) in
the gradients, whose sums are added in another order (float rounding only), and the bias sum
of `max_pool_grad_relu` (float64 per image, then over images in order: float rounding only).
"""

from __future__ import annotations

import numpy as np

from tensorflux.lib.numerics import intra_op
from tensorflux.lib.numerics import jit as jit_mod

SUPPORTED_TYPES = (np.dtype(np.float32), np.dtype(np.float64))
# Inputs of at least this many bytes are pooled in batch ranges on the intra-op helpers (when
# the split is on); smaller ones are not worth a thread hand-off.
SPLIT_MIN_BYTES = 512 << 10


def supports(*arrays) -> bool:
    """True when the compiled kernels may run on these arrays (numba on, float dtypes)."""
    return jit_mod.available() and all(a.dtype in SUPPORTED_TYPES for a in arrays)


def _window(x_shape, geo):
    if len(x_shape) != 4:
        raise ValueError(f"pooling needs a 4-D input, got shape {list(x_shape)}")
    n, h, wd, c = x_shape
    out_hw, pads = geo.geometry(h, wd, *geo.ksize)
    return (geo.ksize[0], geo.ksize[1], geo.strides[0], geo.strides[1], pads[0], pads[2],
            out_hw[0], out_hw[1])


def _check_grad(g: np.ndarray, x_shape, oh: int, ow: int, what: str) -> None:
    """The compiled loops index without bounds checks: a gradient of the wrong shape must
    fail here, as a ValueError (the reference fails while broadcasting)."""
    want = (x_shape[0], oh, ow, x_shape[3])
    if g.shape != want:
        raise ValueError(f"{what}: the gradient must have the pooled shape {list(want)}, got "
                         f"{list(g.shape)}")


def _batches(fn, n: int, nbytes: int) -> None:
    """`fn(lo, hi)` over the whole batch, or over batch ranges on the intra-op helpers when
    the split is on (a loaded machine) or BLAS has several threads (a quiet one: these
    kernels call no BLAS, so they take its threads, `run_elementwise`) and the input is large.
    Every kernel here computes each batch item on its own, so ranges give the very values of
    one call."""
    split = intra_op.splits()
    threads = max(split, intra_op.elementwise_splits())
    if threads <= 1 or n <= 1 or nbytes < SPLIT_MIN_BYTES:
        fn(0, n)
        return
    ranges = intra_op.balanced_parts(n, threads * intra_op.CHUNKS_PER_THREAD)
    run = intra_op.run_parts if split > 1 else intra_op.run_elementwise
    run(lambda i: fn(*ranges[i]), len(ranges))


def max_pool(x: np.ndarray, geo) -> np.ndarray:
    """MaxPool of NHWC `x` (see `conv2d.max_pool`). float32 with at least 16 channels runs
    on explicit 16-float vectors (`pool_vector_jit`, the same bits)."""
    kh, kw, sh, sw, top, left, oh, ow = _window(x.shape, geo)
    out = np.empty((x.shape[0], oh, ow, x.shape[3]), dtype=x.dtype)
    x = np.ascontiguousarray(x)
    n, h, wd, c = x.shape
    if x.dtype == np.float32 and c >= VECTOR_MIN_CHANNELS and x.nbytes >= VECTOR_MIN_BYTES and \
            out.size:
        vector = _vector_kernels()
        offs, starts, _ = vector.window_offsets(h, wd, c, kh, kw, sh, sw, top, left, oh, ow)
        if np.diff(starts).min() > 0:  # every window holds a real position
            _batches(lambda lo, hi: vector.max_pool(x[lo:hi], offs, starts, out[lo:hi]),
                     n, x.nbytes)
            return out
    _batches(lambda lo, hi: _max_pool(x[lo:hi], kh, kw, sh, sw, top, left, out[lo:hi]),
             n, x.nbytes)
    return out


# float32 MaxPool inputs (and MaxPoolGrad ones of overlapping windows) with at least this many
# channels take `pool_vector_jit` (fewer would run its scalar channel tail only).
VECTOR_MIN_CHANNELS = 16
# ... and at least this many bytes: below, the window table and the call cost more (~15 us)
# than the vectors save.
VECTOR_MIN_BYTES = 64 << 10
_vector = []  # pool_vector_jit, once the first float32 max pooling runs (it imports numba)


def _vector_kernels():
    if not _vector:
        # deferred: pool_vector_jit imports numba and llvmlite at import
        from tensorflux.lib.numerics import pool_vector_jit
        _vector.append(pool_vector_jit)
    return _vector[0]


def max_pool_grad(x: np.ndarray, g: np.ndarray, geo) -> np.ndarray:
    """MaxPoolGrad: `g` routed to each window's first maximum of `x` (see module docstring)."""
    kh, kw, sh, sw, top, left, oh, ow = _window(x.shape, geo)
    _check_grad(g, x.shape, oh, ow, "MaxPoolGrad")
    n, h, wd, c = x.shape
    x, g = np.ascontiguousarray(x), np.ascontiguousarray(g)
    vector = _vector_grad(x, g, geo)
    if vector is not None:
        dx = np.empty(x.shape, dtype=g.dtype)
        _batches(lambda lo, hi: vector(x[lo:hi], g[lo:hi], dx[lo:hi]), n, x.nbytes)
        return dx
    if tiles(x.shape, geo):
        # Windows side by side, none in the padding: every input written once, no zeroing.
        dx = np.empty(x.shape, dtype=g.dtype)
        _batches(lambda lo, hi: _max_pool_grad_tiled(x[lo:hi], g[lo:hi], kh, kw, dx[lo:hi]),
                 n, x.nbytes)
        return dx
    dx = np.empty((n, h * wd, c), dtype=g.dtype)  # zeroed row by row in the kernel
    _batches(lambda lo, hi: _max_pool_grad(x[lo:hi], g[lo:hi], kh, kw, sh, sw, top, left,
                                           dx[lo:hi]), n, x.nbytes)
    return dx.reshape(x.shape)


def _vector_grad(x, g, geo):
    """`fn(x, g, dx)`: the vector MaxPoolGrad (`pool_vector_jit.max_pool_grad`, bit-identical
    to the scalar kernels, tiled or not) for these C-contiguous inputs of the pooled shapes,
    or None where it does not apply (not float32, few channels, small, an empty window)."""
    n, h, wd, c = x.shape
    if not (x.dtype == g.dtype == np.float32 and c >= VECTOR_MIN_CHANNELS and
            x.nbytes >= VECTOR_MIN_BYTES and g.size):
        return None
    kh, kw, sh, sw, top, left, oh, ow = _window(x.shape, geo)
    vector = _vector_kernels()
    offs, starts, padded = vector.window_offsets(h, wd, c, kh, kw, sh, sw, top, left, oh, ow)
    if np.diff(starts).min() <= 0:
        return None
    if c % vector.WIDTH == 0:  # whole vectors: picks first, then each input written once
        wins, slots, cstarts = vector.cell_windows(offs, starts, c, h * wd)
        return lambda xs, gs, dx: vector.max_pool_grad_gather(xs, gs, offs, starts, padded,
                                                              wins, slots, cstarts, dx)
    return lambda xs, gs, dx: vector.max_pool_grad(xs, gs, offs, starts, padded, oh, dx)


def tiles(x_shape, geo) -> bool:
    """True when the pooling windows lie side by side (stride = window), none in the padding."""
    kh, kw, sh, sw, top, left, oh, ow = _window(x_shape, geo)
    return (kh, kw) == (sh, sw) and not (top or left) and oh * kh <= x_shape[1] and \
        ow * kw <= x_shape[2]


def max_pool_grad_relu(x: np.ndarray, y: np.ndarray, g: np.ndarray, geo):
    """`(MaxPoolGrad(x, y, r), sum of r over all but the channel axis)` for
    `r = ReluGrad(g, y)` (`y`: the pooled output), in one pass over `x` and the gradients.

    Windows must tile (`tiles`). The routed gradient is bit-identical to the two unfused
    kernels'; the channel sums are taken in float64 per image, then over the images in order
    (the same values however the batch is split).

    Raises:
        ValueError: `y` or `g` is not of the pooled shape, or the windows do not tile.
    """
    kh, kw, sh, sw, top, left, oh, ow = _window(x.shape, geo)
    _check_grad(g, x.shape, oh, ow, "_FusedMaxPoolGrad")
    _check_grad(y, x.shape, oh, ow, "_FusedMaxPoolGrad (pooled output)")
    if not tiles(x.shape, geo):
        raise ValueError("_FusedMaxPoolGrad: the one-pass kernel needs windows side by side")
    n, c = x.shape[0], x.shape[3]
    x, y, g = np.ascontiguousarray(x), np.ascontiguousarray(y), np.ascontiguousarray(g)
    dx = np.empty(x.shape, dtype=g.dtype)
    sums = np.zeros((n, c), dtype=np.float64)
    _batches(lambda lo, hi: _max_pool_grad_relu_tiled(x[lo:hi], y[lo:hi], g[lo:hi], kh, kw,
                                                      dx[lo:hi], sums[lo:hi]), n, x.nbytes)
    return dx, sums.sum(axis=0).astype(g.dtype)


def avg_pool(x: np.ndarray, geo) -> np.ndarray:
    """AvgPool of NHWC `x`: each window's real inputs averaged (see `conv2d.avg_pool`)."""
    kh, kw, sh, sw, top, left, oh, ow = _window(x.shape, geo)
    out = np.empty((x.shape[0], oh, ow, x.shape[3]), dtype=x.dtype)
    x = np.ascontiguousarray(x)
    _batches(lambda lo, hi: _avg_pool(x[lo:hi], kh, kw, sh, sw, top, left, out[lo:hi]),
             x.shape[0], x.nbytes)
    return out


def avg_pool_grad(input_shape, g: np.ndarray, geo) -> np.ndarray:
    """AvgPoolGrad: each gradient shared equally among its window's real inputs."""
    kh, kw, sh, sw, top, left, oh, ow = _window(tuple(input_shape), geo)
    _check_grad(g, tuple(input_shape), oh, ow, "AvgPoolGrad")
    dx = np.zeros(tuple(input_shape), dtype=g.dtype)
    g = np.ascontiguousarray(g)
    _batches(lambda lo, hi: _avg_pool_grad(g[lo:hi], kh, kw, sh, sw, top, left, dx[lo:hi]),
             dx.shape[0], dx.nbytes)
    return dx


@jit_mod.jit
def _max_pool(x, kh, kw, sh, sw, top, left, out):
    n, h, wd, c = x.shape
    oh, ow = out.shape[1], out.shape[2]
    lowest = -np.inf
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                o = out[b, i, j]
                o[:] = lowest
                for di in range(kh):
                    r = i * sh - top + di
                    if r < 0 or r >= h:
                        continue
                    for dj in range(kw):
                        q = j * sw - left + dj
                        if q < 0 or q >= wd:
                            continue
                        row = x[b, r, q]
                        for ch in range(c):
                            v = row[ch]
                            if v > o[ch] or v != v:
                                o[ch] = v


@jit_mod.jit
def _max_pool_grad(x, g, kh, kw, sh, sw, top, left, dx):
    # dx is [n, h * wd, c]. Per window: the first maximum's window position per channel
    # (`pick`, -1: the padding), chosen by selects rather than branches, then one masked add
    # per window position (both loops run over contiguous channels, in vector registers);
    # windows add in the same order as one scattered add each (adding 0 changes no value).
    # dx may start uninitialised: each input row is zeroed right before the first output row
    # whose windows reach it (while it is in cache), the rows no window reaches at the end.
    n, h, wd, c = x.shape
    oh, ow = g.shape[1], g.shape[2]
    best = np.empty(c, dtype=x.dtype)
    pick = np.empty(c, dtype=np.int32)
    zero = dx.dtype.type(0)
    for b in range(n):
        zeroed = 0  # input rows of image b zeroed so far
        for i in range(oh):
            reach = min(h, max(0, i * sh - top + kh))
            if reach > zeroed:
                dx[b, zeroed * wd:reach * wd] = zero
                zeroed = reach
            for j in range(ow):
                best[:] = -np.inf
                pick[:] = -1
                for di in range(kh):
                    r = i * sh - top + di
                    for dj in range(kw):
                        q = j * sw - left + dj
                        if not (0 <= r < h and 0 <= q < wd):
                            continue  # a padding position (-inf) never wins after the first
                        k = np.int32(di * kw + dj)
                        row = x[b, r, q]
                        if k == 0:
                            for ch in range(c):
                                best[ch] = row[ch]
                                pick[ch] = 0
                        else:
                            for ch in range(c):
                                v = row[ch]
                                take = v > best[ch]
                                best[ch] = v if take else best[ch]
                                pick[ch] = k if take else pick[ch]
                grad = g[b, i, j]
                for di in range(kh):
                    r = i * sh - top + di
                    for dj in range(kw):
                        q = j * sw - left + dj
                        if not (0 <= r < h and 0 <= q < wd):
                            continue
                        k = np.int32(di * kw + dj)
                        out = dx[b, r * wd + q]
                        for ch in range(c):
                            out[ch] += grad[ch] if pick[ch] == k else zero
        dx[b, zeroed * wd:] = zero


@jit_mod.jit
def _window_argmax(x, b, r0, q0, kh, kw, best, pick):
    # Per channel, the first position (row-major in the kh x kw window at (r0, q0)) holding
    # the window's maximum, into `pick` (its value into `best`); NaN never wins a comparison.
    row = x[b, r0, q0]
    for ch in range(best.shape[0]):
        best[ch] = row[ch]
        pick[ch] = 0
    for k in range(1, kh * kw):
        row = x[b, r0 + k // kw, q0 + k % kw]
        for ch in range(best.shape[0]):
            v = row[ch]
            take = v > best[ch]
            best[ch] = v if take else best[ch]
            pick[ch] = k if take else pick[ch]


@jit_mod.jit
def _zero_unreached(dx, b, rows, cols):
    # Rows and columns of image `b` no window reaches (VALID with a remainder).
    zero = dx.dtype.type(0)
    for r in range(rows, dx.shape[1]):
        dx[b, r] = zero
    for r in range(rows):
        for q in range(cols, dx.shape[2]):
            dx[b, r, q] = zero


@jit_mod.jit
def _max_pool_grad_tiled(x, g, kh, kw, dx):
    # Windows tile the input (stride = window, no padding): each input is in one window at
    # most, so its gradient is written once (inputs past the last window get 0). Per window,
    # a vector pass per position finds each channel's first maximum (TF's scan rule), then one
    # per position writes its share: the window's gradient (+ 0.0, as the reference's sum
    # into zeros turns -0.0 into 0.0) or 0.
    n, h, wd, c = x.shape
    oh, ow = g.shape[1], g.shape[2]
    best = np.empty(c, dtype=x.dtype)
    pick = np.empty(c, dtype=np.int32)
    zero = dx.dtype.type(0)
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                r0 = i * kh
                q0 = j * kw
                _window_argmax(x, b, r0, q0, kh, kw, best, pick)
                grad = g[b, i, j]
                for k in range(kh * kw):
                    cell = dx[b, r0 + k // kw, q0 + k % kw]
                    for ch in range(c):
                        cell[ch] = grad[ch] + zero if pick[ch] == k else zero
        _zero_unreached(dx, b, oh * kh, ow * kw)


@jit_mod.jit
def _max_pool_grad_relu_tiled(x, y, g, kh, kw, dx, sums):
    # _max_pool_grad_tiled with each window's gradient first masked as ReluGrad does (`g * 1`
    # where the pooled output is positive, else `g * 0`) and summed per image and channel.
    n, h, wd, c = x.shape
    oh, ow = g.shape[1], g.shape[2]
    best = np.empty(c, dtype=x.dtype)
    pick = np.empty(c, dtype=np.int32)
    masked = np.empty(c, dtype=g.dtype)
    zero = dx.dtype.type(0)
    one = dx.dtype.type(1)
    for b in range(n):
        total = sums[b]
        for i in range(oh):
            for j in range(ow):
                r0 = i * kh
                q0 = j * kw
                _window_argmax(x, b, r0, q0, kh, kw, best, pick)
                grad = g[b, i, j]
                pooled = y[b, i, j]
                for ch in range(c):
                    m = grad[ch] * (one if pooled[ch] > 0 else zero)
                    masked[ch] = m
                    total[ch] += m
                for k in range(kh * kw):
                    cell = dx[b, r0 + k // kw, q0 + k % kw]
                    for ch in range(c):
                        cell[ch] = masked[ch] + zero if pick[ch] == k else zero
        _zero_unreached(dx, b, oh * kh, ow * kw)


@jit_mod.jit
def _avg_pool(x, kh, kw, sh, sw, top, left, out):
    n, h, wd, c = x.shape
    oh, ow = out.shape[1], out.shape[2]
    for b in range(n):
        for i in range(oh):
            r0 = max(i * sh - top, 0)
            r1 = min(i * sh - top + kh, h)
            for j in range(ow):
                q0 = max(j * sw - left, 0)
                q1 = min(j * sw - left + kw, wd)
                o = out[b, i, j]
                o[:] = 0
                for r in range(r0, r1):
                    for q in range(q0, q1):
                        row = x[b, r, q]
                        for ch in range(c):
                            o[ch] += row[ch]
                # NOTE: int count: the float64 quotient rounds to the float32 one exactly.
                count = (r1 - r0) * (q1 - q0)
                for ch in range(c):
                    o[ch] = o[ch] / count


@jit_mod.jit
def _avg_pool_grad(g, kh, kw, sh, sw, top, left, dx):
    n, h, wd, c = dx.shape
    oh, ow = g.shape[1], g.shape[2]
    share = np.empty(c, dtype=dx.dtype)
    for b in range(n):
        for i in range(oh):
            r0 = max(i * sh - top, 0)
            r1 = min(i * sh - top + kh, h)
            for j in range(ow):
                q0 = max(j * sw - left, 0)
                q1 = min(j * sw - left + kw, wd)
                count = (r1 - r0) * (q1 - q0)
                grad = g[b, i, j]
                for ch in range(c):
                    share[ch] = grad[ch] / count
                for r in range(r0, r1):
                    for q in range(q0, q1):
                        cell = dx[b, r, q]
                        for ch in range(c):
                            cell[ch] += share[ch]
