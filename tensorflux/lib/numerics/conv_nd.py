"""NumPy compute for N-D (1-, 2- and 3-D) convolution and pooling in channels-last layout.

Arrays are `[batch, *spatial, channels]`; filters `[*window, in_depth, out_depth]`. Windows
are described by a `WindowND` (sizes, strides, dilations and `(before, after)` paddings per
spatial dimension, decoded once by the op's kernel factory). Convolution is im2col: a strided
view of the padded input's windows, copied per batch chunk into one matrix and multiplied by
the filter in a single BLAS call; the filter gradient is `patches^T @ grad`, the input
gradient one matmul per window offset added back into the padded input. Pooling loops over
window offsets only, never over pixels.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorflux.lib.numerics import window as conv_util

# im2col matrices are built per batch chunk of about this many bytes (stays in cache).
_PATCH_BYTES = 6 << 20


@dataclass(frozen=True)
class WindowND:
    """Window attrs per spatial dimension (in spatial order), decoded from the op attrs."""

    ksize: tuple
    strides: tuple
    dilations: tuple
    padding: str

    def geometry(self, in_sizes, ksize=None):
        """(out_sizes, ((before, after), ...)) for known input sizes and window sizes."""
        ksize = self.ksize if ksize is None else ksize
        outs, pads = [], []
        for size, k, s, d in zip(in_sizes, ksize, self.strides, self.dilations):
            out, before, after = conv_util.output_size(size, k, s, d, self.padding)
            outs.append(out)
            pads.append((before, after))
        return tuple(outs), tuple(pads)


def spatial_attr(values, data_format: str, what: str, rank: int) -> tuple:
    """The spatial entries of a `rank + 2`-element attr laid out as `data_format`.

    Raises:
        ValueError: wrong length, a batch/channel entry other than 1, or a non-positive entry.
    """
    values = tuple(int(v) for v in values)
    if len(values) != rank + 2:
        raise ValueError(f"{what} must have {rank + 2} elements (one per dimension of "
                         f"{data_format}), got {len(values)}: {list(values)}")
    if data_format.startswith("NC"):
        outer, spatial = (values[0], values[1]), values[2:]
    else:
        outer, spatial = (values[0], values[-1]), values[1:-1]
    if outer != (1, 1):
        raise ValueError(f"{what} in the batch and depth dimensions must be 1 (only spatial "
                         f"{what} are supported), got {list(values)}")
    if min(spatial) < 1:
        raise ValueError(f"{what} must be positive, got {list(values)}")
    return spatial


def to_channels_last(x: np.ndarray, channels_last: bool) -> np.ndarray:
    return x if channels_last else np.moveaxis(x, 1, -1)


def from_channels_last(y: np.ndarray, channels_last: bool) -> np.ndarray:
    return y if channels_last else np.ascontiguousarray(np.moveaxis(y, -1, 1))


def pad(x: np.ndarray, pads, fill=0) -> np.ndarray:
    """x padded spatially by `pads` ((before, after) per spatial dim) with `fill`."""
    if not any(b or a for b, a in pads):
        return x
    spatial = x.shape[1:-1]
    shape = (x.shape[0], *(s + b + a for s, (b, a) in zip(spatial, pads)), x.shape[-1])
    out = np.full(shape, fill, dtype=x.dtype)
    out[_interior(spatial, pads)] = x
    return out


def _interior(sizes, pads) -> tuple:
    return (slice(None), *(slice(b, b + s) for s, (b, _) in zip(sizes, pads)), slice(None))


def unpad(buf: np.ndarray, sizes, pads) -> np.ndarray:
    if not any(b or a for b, a in pads):
        return buf
    return np.ascontiguousarray(buf[_interior(sizes, pads)])


def offset_slices(offset, out_sizes, win: WindowND) -> tuple:
    """Index of the padded-input pixels that window offset `offset` meets, per output."""
    return (slice(None),
            *(slice(o * d, o * d + s * (n - 1) + 1, s)
              for o, n, s, d in zip(offset, out_sizes, win.strides, win.dilations)),
            slice(None))


def window_offsets(ksize) -> list:
    """Every window offset, in row-major (scan) order."""
    return list(itertools.product(*(range(k) for k in ksize)))


def _patches(xp: np.ndarray, ksize, out_sizes, win: WindowND) -> np.ndarray:
    """A read-only `[n, *out, *window, c]` strided view of the windows of padded `xp`."""
    s_n, *s_sp, s_c = xp.strides
    shape = (xp.shape[0], *out_sizes, *ksize, xp.shape[-1])
    strides = (s_n, *(s * st for s, st in zip(s_sp, win.strides)),
               *(s * d for s, d in zip(s_sp, win.dilations)), s_c)
    return as_strided(xp, shape, strides, writeable=False)


def _patch_matrices(xp: np.ndarray, ksize, out_sizes, win: WindowND):
    """Yields (lo, hi, cols): the im2col matrix of each batch chunk, in one reused buffer."""
    n = xp.shape[0]
    rows = math.prod(out_sizes)
    per_item = rows * math.prod(ksize) * xp.shape[-1]
    step = max(1, _PATCH_BYTES // max(per_item * xp.itemsize, 1))
    buf = np.empty(min(n, step) * per_item, dtype=xp.dtype)
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        view = _patches(xp[lo:hi], ksize, out_sizes, win)
        cols = buf[:(hi - lo) * per_item].reshape(view.shape)
        np.copyto(cols, view)
        yield lo, hi, cols.reshape((hi - lo) * rows, -1)


# -- convolution ----------------------------------------------------------------------------


def conv(x: np.ndarray, w: np.ndarray, win: WindowND) -> np.ndarray:
    """Channels-last convolution of x `[n, *sp, c]` with w `[*window, c, out]`."""
    ksize, depth = w.shape[:-2], w.shape[-1]
    out_sizes, pads = win.geometry(x.shape[1:-1], ksize)
    xp = pad(x, pads)
    w2 = w.reshape(-1, depth)
    out = np.empty((x.shape[0], *out_sizes, depth), dtype=np.result_type(x, w))
    for lo, hi, cols in _patch_matrices(xp, ksize, out_sizes, win):
        np.matmul(cols, w2, out=out[lo:hi].reshape(-1, depth))
    return out


def conv_backprop_filter(x: np.ndarray, filter_shape, g: np.ndarray, win: WindowND):
    """d(conv)/d(filter) for output gradient g `[n, *out, out_depth]`."""
    ksize, depth = tuple(filter_shape[:-2]), filter_shape[-1]
    out_sizes, pads = win.geometry(x.shape[1:-1], ksize)
    _check_grad_shape(g, (x.shape[0], *out_sizes, depth))
    xp = pad(x, pads)
    dw = np.zeros((math.prod(ksize) * x.shape[-1], depth), dtype=g.dtype)
    for lo, hi, cols in _patch_matrices(xp, ksize, out_sizes, win):
        dw += cols.T @ g[lo:hi].reshape(-1, depth)
    return dw.reshape(tuple(filter_shape))


def conv_backprop_input(input_shape, w: np.ndarray, g: np.ndarray, win: WindowND):
    """d(conv)/d(input): per window offset, `g @ w[offset]^T` added into the padded input."""
    n, *sizes, c = input_shape
    ksize, depth = w.shape[:-2], w.shape[-1]
    out_sizes, pads = win.geometry(sizes, ksize)
    _check_grad_shape(g, (n, *out_sizes, depth))
    reach = [(k - 1) * d for k, d in zip(ksize, win.dilations)]
    full = [(r - b, r - a) for r, (b, a) in zip(reach, pads)]
    if set(win.strides) == {1} and min(min(p) for p in full) >= 0:
        # Stride 1: a VALID convolution of padded g with the flipped, depth-swapped filter.
        flipped = np.ascontiguousarray(
            np.swapaxes(w[(slice(None, None, -1),) * len(ksize)], -1, -2))
        valid = WindowND(ksize=ksize, strides=win.strides, dilations=win.dilations,
                         padding="VALID")
        return conv(pad(g, full), flipped, valid)
    buf = np.zeros((n, *(s + b + a for s, (b, a) in zip(sizes, pads)), c), dtype=g.dtype)
    g2 = g.reshape(-1, depth)
    for offset in window_offsets(ksize):
        part = (g2 @ w[offset].T).reshape(n, *out_sizes, c)
        view = buf[offset_slices(offset, out_sizes, win)]
        np.add(view, part, out=view)
    return unpad(buf, sizes, pads)


def _check_grad_shape(g: np.ndarray, expected) -> None:
    if tuple(g.shape) != tuple(expected):
        raise ValueError(f"out_backprop has shape {list(g.shape)} but the convolution's "
                         f"output shape is {list(expected)}")


# -- pooling --------------------------------------------------------------------------------


def lowest(dtype):
    if np.issubdtype(dtype, np.floating):
        return -np.inf
    return np.iinfo(dtype).min


def _pool_views(x: np.ndarray, win: WindowND, fill):
    out_sizes, pads = win.geometry(x.shape[1:-1])
    xp = pad(x, pads, fill)
    offsets = window_offsets(win.ksize)
    return out_sizes, pads, offsets, [xp[offset_slices(o, out_sizes, win)] for o in offsets]


def max_pool(x: np.ndarray, win: WindowND) -> np.ndarray:
    _, _, _, views = _pool_views(x, win, lowest(x.dtype))
    out = views[0].copy()
    for view in views[1:]:
        np.maximum(out, view, out=out)
    return out


def first_max_masks(x: np.ndarray, win: WindowND):
    """(out_sizes, pads, [(offset, hit)]): `hit` marks the outputs whose window has its first
    maximum (in scan order; ties go to the first) at that offset."""
    out_sizes, pads, offsets, views = _pool_views(x, win, lowest(x.dtype))
    best = views[0].copy()
    for view in views[1:]:
        np.maximum(best, view, out=best)
    taken = np.zeros(best.shape, dtype=bool)
    masks = []
    for offset, view in zip(offsets, views):
        hit = np.equal(view, best)
        np.greater(hit, taken, out=hit)
        np.logical_or(taken, hit, out=taken)
        masks.append((offset, hit))
    return out_sizes, pads, masks


def max_pool_grad(x: np.ndarray, g: np.ndarray, win: WindowND) -> np.ndarray:
    """Routes each output gradient to the first maximum of its window."""
    sizes = x.shape[1:-1]
    out_sizes, pads, masks = first_max_masks(x, win)
    _check_grad_shape(g, (x.shape[0], *out_sizes, x.shape[-1]))
    buf = np.zeros((x.shape[0], *(s + b + a for s, (b, a) in zip(sizes, pads)), x.shape[-1]),
                   dtype=g.dtype)
    zero = np.zeros((), dtype=g.dtype)
    for offset, hit in masks:
        view = buf[offset_slices(offset, out_sizes, win)]
        np.add(view, np.where(hit, g, zero), out=view)
    return unpad(buf, sizes, pads)


def max_pool_grad_all_maxima(x: np.ndarray, y: np.ndarray, g: np.ndarray, win: WindowND):
    """Routes each output gradient to every input of its window equal to the pooled `y`."""
    sizes = x.shape[1:-1]
    out_sizes, pads, offsets, views = _pool_views(x, win, lowest(x.dtype))
    _check_grad_shape(g, y.shape)
    buf = np.zeros((x.shape[0], *(s + b + a for s, (b, a) in zip(sizes, pads)), x.shape[-1]),
                   dtype=g.dtype)
    zero = np.zeros((), dtype=g.dtype)
    for offset, view in zip(offsets, views):
        target = buf[offset_slices(offset, out_sizes, win)]
        np.add(target, np.where(view == y, g, zero), out=target)
    return unpad(buf, sizes, pads)


def max_pool_grad_grad(x: np.ndarray, gg: np.ndarray, win: WindowND) -> np.ndarray:
    """For each output, the input-shaped `gg` at its window's first maximum."""
    out_sizes, pads, masks = first_max_masks(x, win)
    gp = pad(gg, pads)
    out = np.zeros(masks[0][1].shape, dtype=gg.dtype)
    for offset, hit in masks:
        np.copyto(out, gp[offset_slices(offset, out_sizes, win)], where=hit)
    return out


def avg_pool_divisors(sizes, out_sizes, pads, win: WindowND) -> np.ndarray:
    """`[*out, 1]` counts of real (unpadded) inputs in each window."""
    total = np.ones((), dtype=np.int64)
    for size, out, k, s, (before, _) in zip(sizes, out_sizes, win.ksize, win.strides, pads):
        start = np.arange(out) * s - before
        count = np.minimum(start + k, size) - np.maximum(start, 0)
        total = np.multiply.outer(total, count)
    return total[..., None]


def avg_pool(x: np.ndarray, win: WindowND) -> np.ndarray:
    out_sizes, pads, _, views = _pool_views(x, win, 0)
    acc_type = np.float32 if x.dtype in (np.float16,) else x.dtype
    out = views[0].astype(acc_type, copy=True)
    for view in views[1:]:
        out += view
    out /= avg_pool_divisors(x.shape[1:-1], out_sizes, pads, win).astype(acc_type)
    return out.astype(x.dtype, copy=False)


def avg_pool_grad(input_shape, g: np.ndarray, win: WindowND) -> np.ndarray:
    n, *sizes, c = input_shape
    out_sizes, pads = win.geometry(sizes)
    _check_grad_shape(g, (n, *out_sizes, c))
    share = g / avg_pool_divisors(sizes, out_sizes, pads, win).astype(g.dtype)
    buf = np.zeros((n, *(s + b + a for s, (b, a) in zip(sizes, pads)), c), dtype=g.dtype)
    for offset in window_offsets(win.ksize):
        view = buf[offset_slices(offset, out_sizes, win)]
        np.add(view, share, out=view)
    return unpad(buf, sizes, pads)


def max_pool_argmax(x: np.ndarray, win: WindowND, include_batch: bool, index_dtype):
    """(max-pooled x, flat argmax): the first maximum's index `((b * H + y) * W + x) * C + c`
    in the unpadded input, with the `b *` term only when `include_batch`."""
    n, *sizes, c = x.shape
    out_sizes, pads, masks = first_max_masks(x, win)
    argmax = np.zeros((n, *out_sizes, c), dtype=index_dtype)
    base = (np.arange(n) if include_batch else np.zeros(n, dtype=np.int64))
    for offset, hit in masks:
        index = base.reshape(-1, *([1] * (len(sizes) + 1)))
        for axis, (o, out, size, s, d, (before, _)) in enumerate(
                zip(offset, out_sizes, sizes, win.strides, win.dilations, pads)):
            coord = np.arange(out) * s + o * d - before
            shape = [1] * (len(sizes) + 2)
            shape[axis + 1] = out
            index = index * size + coord.reshape(shape)
        index = index * c + np.arange(c)
        np.copyto(argmax, index, where=hit, casting="unsafe")
    return max_pool(x, win), argmax
