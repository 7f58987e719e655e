"""NumPy compute for 2-D convolution and pooling, in NHWC with explicit paddings.

Convolution is im2col plus BLAS matmuls: the patches of the padded input are a strided view
(no Python loop over pixels) copied, one batch chunk of about `_PATCH_BYTES` at a time (bands
of output rows for a single image), into a reused `[pixels, kh * kw * in_depth]` matrix that
stays in cache while its matmul reads it. When the intra-op split is on (a loaded machine,
`intra_op.py`) the chunks are packed and multiplied at once on the helpers, each into its own
buffer; the chunks depend on the shapes only, so the values are the unsplit ones.
With few input channels the im2col rows cover several neighbouring outputs each
(`conv_grouped`: a wider product, fewer and longer copies); when the compiled kernels are on,
float32 ones with 16k output channels run the direct kernels of `conv_direct` instead.
The filter gradient is `patches^T @ grad`. The input gradient of a stride-1 convolution is the
convolution of the padded gradient with the flipped filter; otherwise it is `grad @ filter^T`
added back per kernel offset (or, for few channels, one matmul scattered back by col2im).
Max-pool gradients route through masks of each window's first maximum. Loops here only run
over batch chunks and the kh * kw window offsets, never over pixels.

`pads` is always `(top, bottom, left, right)` and `geo` the decoded `conv_util.Window2D`.
"""

from __future__ import annotations

import functools
import threading

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorflux.lib.numerics import conv_direct, conv_fft, conv_grouped, intra_op
from tensorflux.lib.numerics.window import Window2D

# im2col matrices are built per batch chunk of about this size, so they stay in (L2/L3) cache.
# NOTE: every chunk is one more BLAS call, and a multithreaded call stalls while one of its
# threads is descheduled by other load: 4-8 MB was measured best with 2 BLAS threads on a
# shared 2-core machine (2 MB lost to call overhead); with one BLAS thread per chunk (a loaded
# machine, intra-op split on) 1-2 MB chunks took 20-25% less CPU than 6 MB for the CNN
# benchmark's first layer (other processes evict a larger matrix between pack and product).
_PATCH_BYTES = 2 << 20
# ... and in at least this many chunks when each gets intra_op.MIN_CHUNK_FLOPS of work.
_MIN_CHUNKS = 4
# Input gradients with at least this many channels avoid col2im (see conv2d_backprop_input);
# strided ones use one matmul per kernel offset, each into a buffer of at most _OFFSET_BYTES.
_PER_OFFSET_MIN_DEPTH = 8
# Pooling makes one pass per window offset (its gradient about a dozen): done per batch
# chunk of about this size, the passes hit cache (max-pool gradient of the CNN benchmark's
# first layer 1.4-1.6x faster).
_POOL_CHUNK_BYTES = 1 << 20
_OFFSET_BYTES = 4 << 20
# Stride-1 float convolutions of at least this many flops per op go through the frequency
# domain (conv_fft) when its estimated flops are at most _FFT_MAX_RATIO of im2col's. Small
# ones stay on im2col, whose sums are exact for exactly representable data.
_FFT_MIN_FLOPS = 20e6
_FFT_MAX_RATIO = 0.6


def pad_nhwc(x: np.ndarray, pads, fill=0) -> np.ndarray:
    """x padded spatially by (top, bottom, left, right) with `fill` (x itself when no pad)."""
    top, bottom, left, right = pads
    if not (top or bottom or left or right):
        return x
    n, h, w, c = x.shape
    shape = (n, h + top + bottom, w + left + right, c)
    out = np.zeros(shape, dtype=x.dtype) if fill == 0 else np.full(shape, fill, dtype=x.dtype)
    out[:, top:top + h, left:left + w, :] = x
    return out


def offset_slices(i: int, j: int, out_hw, geo) -> tuple:
    """Index of the padded-input pixels that kernel offset (i, j) meets, for every output."""
    (sh, sw), (dh, dw) = geo.strides, geo.dilations
    oh, ow = out_hw
    rows = slice(i * dh, i * dh + sh * (oh - 1) + 1, sh)
    cols = slice(j * dw, j * dw + sw * (ow - 1) + 1, sw)
    return rows, cols


def patches(xp: np.ndarray, k_hw, out_hw, geo) -> np.ndarray:
    """A read-only `[n, oh, ow, kh, kw, c]` strided view of the windows of padded `xp`."""
    n, _, _, c = xp.shape
    s_n, s_h, s_w, s_c = xp.strides
    (sh, sw), (dh, dw) = geo.strides, geo.dilations
    shape = (n, out_hw[0], out_hw[1], k_hw[0], k_hw[1], c)
    strides = (s_n, s_h * sh, s_w * sw, s_h * dh, s_w * dw, s_c)
    return as_strided(xp, shape, strides, writeable=False)


def _batch_chunks(n: int, per_item_bytes: int, per_item_flops: int = 0):
    """Balanced batch chunks of about `_PATCH_BYTES` of patches at most, and at least
    `_MIN_CHUNKS` when the batch and the work allow (so the intra-op split has parts to share).
    They depend on the shapes only, never on the split: split and unsplit runs make the very
    same products, so their results are equal."""
    count = -(-n * per_item_bytes // _PATCH_BYTES)
    count = max(count, min(_MIN_CHUNKS, n * per_item_flops // intra_op.MIN_CHUNK_FLOPS))
    return intra_op.balanced_parts(n, count)


def _im2col_units(n: int, out_h: int, per_item_bytes: int, per_item_flops: int) -> list:
    """The `(lo, hi, r0, r1)` pieces (batch items `lo:hi`, output rows `r0:r1`) an im2col
    kernel packs and multiplies one at a time: batch chunks (`_batch_chunks`), or for a single
    image bands of output rows, chosen the same way. Each piece's rows of the output are
    contiguous (one image, or whole images)."""
    if n != 1:
        return [(lo, hi, 0, out_h) for lo, hi in _batch_chunks(n, per_item_bytes,
                                                               per_item_flops)]
    per_row = max(1, out_h)
    bands = _batch_chunks(out_h, per_item_bytes // per_row, per_item_flops // per_row)
    return [(0, 1, r0, r1) for r0, r1 in bands] or [(0, 1, 0, out_h)]


def _patch_matrix(x: np.ndarray, xp, unit, pads, k_hw, out_hw, geo, planar: bool,
                  buf: np.ndarray, group: int = 1) -> np.ndarray:
    """The im2col matrix of one piece `unit = (lo, hi, r0, r1)` of `x` (`xp`: `x` padded,
    unless `planar`), copied into `buf` (see `_patch_matrices`); with `group` > 1 the grouped
    one (`conv_grouped.patches`, one row per `group` outputs)."""
    lo, hi, r0, r1 = unit
    c = x.shape[3]
    if group > 1:
        view = conv_grouped.patches(xp[lo:hi], k_hw, out_hw, geo, group)[:, r0:r1]
        cols = buf[:view.size].reshape(view.shape)
        np.copyto(cols, view)
        return cols.reshape((hi - lo) * (r1 - r0) * (out_hw[1] // group), -1)
    if planar:
        view = _plane_patches(x[lo:hi], pads, k_hw, out_hw, geo)[:, :, :, :, r0:r1]
    else:
        view = patches(xp[lo:hi], k_hw, out_hw, geo)[:, r0:r1]
    cols = buf[:view.size].reshape(view.shape)
    np.copyto(cols, view)
    if planar:
        return cols.reshape(k_hw[0] * k_hw[1] * c, -1).T
    return cols.reshape((hi - lo) * (r1 - r0) * out_hw[1], -1)


def _patch_matrices(x: np.ndarray, pads, k_hw, out_hw, geo, units, planar: bool = False,
                    group: int = 1):
    """Yields (unit, cols): the `[pixels, kh * kw * c]` im2col matrix of each piece of
    `_im2col_units` of `x` padded by `pads`, copied into one reused buffer (small enough to
    stay in cache).

    `planar` builds the matrix transposed, one shifted output plane per (kernel offset,
    channel) from a channels-first copy of the chunk, and yields a transposed view: the copy
    moves runs of `ow` values instead of `kw * c`, which pays when window rows are short
    (the filter gradient's `cols.T @ g` then reads it in its natural layout; measured slower
    for the forward product, so conv2d does not ask for it).
    """
    buf = np.empty(_unit_size(units, out_hw, k_hw, x.shape[3], group), dtype=x.dtype)
    xp = None if planar else pad_nhwc(x, pads)
    for unit in units:
        yield unit, _patch_matrix(x, xp, unit, pads, k_hw, out_hw, geo, planar, buf, group)


def _unit_size(units, out_hw, k_hw, c: int, group: int = 1) -> int:
    """Items of the largest im2col matrix of `units` (grouped by `group`)."""
    rows = max(((hi - lo) * (r1 - r0) for lo, hi, r0, r1 in units), default=0)
    return rows * (out_hw[1] // group) * k_hw[0] * (k_hw[1] + group - 1) * c


def _rows_of(a: np.ndarray, unit) -> np.ndarray:
    """The `[pixels, depth]` matrix of an NHWC array's piece `unit` (a view: see
    `_im2col_units`)."""
    lo, hi, r0, r1 = unit
    return a[lo:hi, r0:r1].reshape(-1, a.shape[3])


_SCRATCH = threading.local()


def _scratch(size: int, dtype) -> np.ndarray:
    """A flat buffer of at least `size` items of `dtype`, reused by the calling thread (the
    intra-op helpers pack their pieces into their own)."""
    dtype = np.dtype(dtype)
    buffers = getattr(_SCRATCH, "buffers", None)
    if buffers is None:
        buffers = _SCRATCH.buffers = {}
    buf = buffers.get(dtype)
    if buf is None or buf.size < size:
        buf = buffers[dtype] = np.empty(size, dtype=dtype)
    return buf


def _plane_patches(x: np.ndarray, pads, k_hw, out_hw, geo) -> np.ndarray:
    """A read-only `[kh, kw, c, n, oh, ow]` view of the windows of `x`, padded channels-first."""
    n, h, wd, c = x.shape
    top, bottom, left, right = pads
    xc = np.zeros((n, c, h + top + bottom, wd + left + right), dtype=x.dtype)
    xc[:, :, top:top + h, left:left + wd] = x.transpose(0, 3, 1, 2)
    s_n, s_c, s_h, s_w = xc.strides
    (sh, sw), (dh, dw) = geo.strides, geo.dilations
    shape = (k_hw[0], k_hw[1], c, n, out_hw[0], out_hw[1])
    strides = (s_h * dh, s_w * dw, s_c, s_n, s_h * sh, s_w * sw)
    return as_strided(xc, shape, strides, writeable=False)


def fft_plan(input_shape, filter_shape, geo, dtype, op: str = "forward"):
    """The conv_fft.Plan for this convolution when the frequency domain is clearly cheaper
    (decided once per shapes and attrs: kernels call this every step)."""
    return _fft_plan(tuple(input_shape), tuple(filter_shape), geo, np.dtype(dtype), op,
                     _FFT_MIN_FLOPS, _FFT_MAX_RATIO)


@functools.lru_cache(maxsize=256)
def _fft_plan(input_shape, filter_shape, geo, dtype, op, min_flops, max_ratio):
    if geo.strides != (1, 1) or dtype not in (np.float32, np.float64):
        return None
    n, h, wd, c = input_shape
    kh, kw, _, depth = filter_shape
    out_hw, pads = geo.geometry(h, wd, kh, kw)
    if 2.0 * n * out_hw[0] * out_hw[1] * kh * kw * c * depth < min_flops:
        return None
    plan = conv_fft.Plan((h, wd), out_hw, (kh, kw), geo.dilations, (pads[0], pads[2]))
    return plan if conv_fft.cost_ratio(plan, c, depth, op) <= max_ratio else None


# -- Conv2D ---------------------------------------------------------------------------------


def conv2d(x: np.ndarray, w: np.ndarray, geo, epilogue=None) -> np.ndarray:
    """NHWC convolution of x [n, h, w, c] with w [kh, kw, c, out]; `epilogue(y)`, when given,
    updates each batch chunk of the result in place right after its matmul (while cached)."""
    if x.shape[3] == w.shape[2] and conv_direct.applies(np.result_type(x, w), x.shape[3],
                                                        w.shape[3]):
        return conv_direct.conv2d(x, w, geo, pad_nhwc, epilogue)
    with intra_op.own_kernel():
        return _conv2d_products(x, w, geo, epilogue)


def _conv2d_products(x: np.ndarray, w: np.ndarray, geo, epilogue) -> np.ndarray:
    """conv2d in the frequency domain or as im2col products (see `conv2d`)."""
    plan = fft_plan(x.shape, w.shape, geo, np.result_type(x, w))
    if plan is not None:
        return conv_fft.conv2d(x, w, plan, epilogue)
    n, h, wd, c = x.shape
    kh, kw, _, depth = w.shape
    out_hw, pads = geo.geometry(h, wd, kh, kw)
    group = conv_grouped.width_group(c, (kh, kw), depth, geo, out_hw[1],
                                     np.result_type(x, w))
    if group > 1 and not _exact_zero_products(x):
        group = 1  # an inf or NaN times a filter's padding zero would reach other outputs
    if group > 1:
        x = np.ascontiguousarray(x)  # conv_grouped.patches reads runs across pixels
    w2 = conv_grouped.wide_filter(w, group) if group > 1 else w.reshape(kh * kw * c, depth)
    out = np.empty((n, out_hw[0], out_hw[1], depth), dtype=np.result_type(x, w))
    per_item = out_hw[0] * out_hw[1] * kh * kw * c
    units = _im2col_units(n, out_hw[0], per_item * x.itemsize, 2 * per_item * depth)

    def finish(unit, cols) -> None:
        # NOTE: np.matmul, never a split product: the pieces are the split (equal values).
        rows = _rows_of(out, unit)
        np.matmul(cols, w2, out=rows.reshape(-1, group * depth) if group > 1 else rows)
        if epilogue is not None:
            lo, hi, r0, r1 = unit
            epilogue(out[lo:hi, r0:r1])

    _run_units(x, pads, (kh, kw), out_hw, geo, units, False, finish, group)
    return out


def _run_units(x, pads, k_hw, out_hw, geo, units, planar: bool, finish,
               group: int = 1) -> None:
    """`finish(unit, cols)` on the im2col matrix of every piece: one after another in one
    reused buffer, or at once on the intra-op helpers (each packing into its own buffer)."""
    if len(units) > 1 and intra_op.splits() > 1:
        xp = None if planar else pad_nhwc(x, pads)
        size = _unit_size(units, out_hw, k_hw, x.shape[3], group)

        def part(i: int) -> None:
            unit = units[i]
            finish(unit, _patch_matrix(x, xp, unit, pads, k_hw, out_hw, geo, planar,
                                       _scratch(size, x.dtype), group))

        intra_op.run_parts(part, len(units))
        return
    for unit, cols in _patch_matrices(x, pads, k_hw, out_hw, geo, units, planar, group):
        finish(unit, cols)


def conv2d_backprop_filter(x: np.ndarray, filter_shape, g: np.ndarray, geo) -> np.ndarray:
    """d(conv2d)/d(filter) for output gradient g [n, oh, ow, out]: patches^T @ g.

    One partial product per im2col piece, summed in the pieces' order (whether the pieces
    ran one after another or at once on the intra-op helpers)."""
    if x.shape[3] == filter_shape[2] and conv_direct.applies(np.result_type(x, g), x.shape[3],
                                                             filter_shape[3]):
        return conv_direct.conv2d_backprop_filter(x, filter_shape, g, geo, pad_nhwc)
    with intra_op.own_kernel():
        return _backprop_filter_products(x, filter_shape, g, geo)


def _backprop_filter_products(x: np.ndarray, filter_shape, g: np.ndarray, geo) -> np.ndarray:
    """conv2d_backprop_filter in the frequency domain or as im2col products."""
    plan = fft_plan(x.shape, filter_shape, geo, np.result_type(x, g), "filter")
    if plan is not None:
        return conv_fft.conv2d_backprop_filter(x, filter_shape, g, plan)
    n, h, wd, c = x.shape
    kh, kw, _, depth = filter_shape
    out_hw, pads = geo.geometry(h, wd, kh, kw)
    # Grouped (conv_grouped): the filter's padding entries of the wide gradient are dropped,
    # so an inf or NaN input reaches only the entries it does in the plain product.
    group = conv_grouped.width_group(c, (kh, kw), depth, geo, out_hw[1],
                                     np.result_type(x, g), filter_gradient=True)
    if group > 1:
        x = np.ascontiguousarray(x)  # conv_grouped.patches reads runs across pixels
    planar = group == 1 and kw * c < out_hw[1]  # short window rows (few channels)
    per_item = out_hw[0] * out_hw[1] * kh * kw * c
    units = _im2col_units(n, out_hw[0], per_item * x.itemsize, 2 * per_item * depth)
    partials = np.empty((len(units), kh * (kw + group - 1) * c, group * depth), dtype=g.dtype)
    index = {unit: i for i, unit in enumerate(units)}

    def finish(unit, cols) -> None:
        rows = _rows_of(g, unit)
        np.matmul(cols.T, rows.reshape(-1, group * depth) if group > 1 else rows,
                  out=partials[index[unit]])

    if not units:  # an empty batch
        return np.zeros((kh, kw, c, depth), dtype=g.dtype)
    _run_units(x, pads, (kh, kw), out_hw, geo, units, planar, finish, group)
    dw = partials[0]
    for partial in partials[1:]:
        dw += partial
    if group > 1:
        return conv_grouped.fold_filter(dw, (kh, kw), c, depth, group)
    return dw.reshape(kh, kw, c, depth)


def conv2d_backprop_input(input_shape, w: np.ndarray, g: np.ndarray, geo,
                          channels_first_out: bool = False) -> np.ndarray:
    """d(conv2d)/d(input); NHWC, or NCHW when `channels_first_out`.

    With enough input channels and stride 1 it is itself a convolution (of `g`, padded, with
    the filter flipped and its depths swapped: all the work in one chunked im2col matmul);
    with larger strides each kernel offset is its own matmul into a small buffer added back
    into the input gradient. With few channels those matmuls would be too thin, so one matmul
    makes all columns and col2im scatters them.
    """
    with intra_op.own_kernel():
        return _backprop_input(input_shape, w, g, geo, channels_first_out)


def _backprop_input(input_shape, w: np.ndarray, g: np.ndarray, geo,
                    channels_first_out: bool) -> np.ndarray:
    plan = fft_plan(input_shape, w.shape, geo, np.result_type(w, g), "input")
    if plan is not None:
        dx = conv_fft.conv2d_backprop_input(g, w, plan)
        return np.ascontiguousarray(dx.transpose(0, 3, 1, 2)) if channels_first_out else dx
    if input_shape[3] < _PER_OFFSET_MIN_DEPTH:
        return _backprop_input_col2im(input_shape, w, g, geo, channels_first_out)
    dx = _backprop_input_as_conv(input_shape, w, g, geo)
    if dx is None:
        dx = _backprop_input_per_offset(input_shape, w, g, geo)
    if channels_first_out:
        return np.ascontiguousarray(dx.transpose(0, 3, 1, 2))
    return dx


def _backprop_input_as_conv(input_shape, w: np.ndarray, g: np.ndarray, geo):
    """The input gradient of a stride-1 convolution as a VALID convolution of padded `g`
    (None when the convolution is strided or padded beyond its window)."""
    n, h, wd, c = input_shape
    kh, kw, _, depth = w.shape
    if geo.strides != (1, 1):
        return None
    _, (top, bottom, left, right) = geo.geometry(h, wd, kh, kw)
    reach_h = (kh - 1) * geo.dilations[0]
    reach_w = (kw - 1) * geo.dilations[1]
    pads = (reach_h - top, reach_h - bottom, reach_w - left, reach_w - right)
    if min(pads) < 0:
        return None
    flipped = np.ascontiguousarray(w[::-1, ::-1].transpose(0, 1, 3, 2))
    valid = Window2D(data_format="NHWC", dilations=geo.dilations)
    return conv2d(pad_nhwc(g, pads), flipped, valid)


def _backprop_input_per_offset(input_shape, w: np.ndarray, g: np.ndarray, geo) -> np.ndarray:
    n, h, wd, c = input_shape
    kh, kw, _, depth = w.shape
    out_hw, (top, bottom, left, right) = geo.geometry(h, wd, kh, kw)
    buf = np.zeros((n, h + top + bottom, wd + left + right, c), dtype=g.dtype)
    rows = out_hw[0] * out_hw[1]
    step = max(1, _OFFSET_BYTES // max(rows * c * g.itemsize, 1))
    part = np.empty((min(n, step) * rows, c), dtype=g.dtype)
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        g2 = g[lo:hi].reshape((hi - lo) * rows, depth)
        out = part[:(hi - lo) * rows]
        for i in range(kh):
            for j in range(kw):
                intra_op.matmul(g2, w[i, j].T, out=out)
                r, s = offset_slices(i, j, out_hw, geo)
                view = buf[lo:hi, r, s, :]
                np.add(view, out.reshape(hi - lo, out_hw[0], out_hw[1], c), out=view)
    if not (top or bottom or left or right):
        return buf
    return np.ascontiguousarray(buf[:, top:top + h, left:left + wd, :])


def _backprop_input_col2im(input_shape, w: np.ndarray, g: np.ndarray, geo,
                           channels_first_out: bool) -> np.ndarray:
    """The scatter runs in a `[c, n, h, w]` buffer so each strided add moves contiguous rows."""
    n, h, wd, c = input_shape
    kh, kw, _, depth = w.shape
    out_hw, pads = geo.geometry(h, wd, kh, kw)
    top, bottom, left, right = pads
    buf = np.zeros((c, n, h + top + bottom, wd + left + right), dtype=g.dtype)
    w2 = w.reshape(kh * kw * c, depth)
    per_item = out_hw[0] * out_hw[1] * kh * kw * c
    chunks = _batch_chunks(n, per_item * g.itemsize, 2 * per_item * depth)

    def chunk(k: int) -> None:  # each chunk scatters into its own images of `buf`
        lo, hi = chunks[k]
        cols = np.matmul(w2, g[lo:hi].reshape(-1, depth).T)
        cols = cols.reshape(kh, kw, c, hi - lo, *out_hw)
        for i in range(kh):
            for j in range(kw):
                r, s = offset_slices(i, j, out_hw, geo)
                buf[:, lo:hi, r, s] += cols[i, j]

    intra_op.run_parts(chunk, len(chunks))
    buf = buf[:, :, top:top + h, left:left + wd]
    order = (1, 0, 2, 3) if channels_first_out else (1, 2, 3, 0)
    return np.ascontiguousarray(buf.transpose(order))


# -- DepthwiseConv2dNative -------------------------------------------------------------------


def depthwise_conv2d(x: np.ndarray, w: np.ndarray, geo) -> np.ndarray:
    """out[..., c * m + k] = sum over the window of x[..., c] * w[i, j, c, k]."""
    n, h, wd, c = x.shape
    kh, kw, _, mult = w.shape
    out_hw, pads = geo.geometry(h, wd, kh, kw)
    xp = pad_nhwc(x, pads)
    out = np.zeros((n, out_hw[0], out_hw[1], c, mult), dtype=np.result_type(x, w))
    for i in range(kh):
        for j in range(kw):
            r, s = offset_slices(i, j, out_hw, geo)
            out += xp[:, r, s, :, None] * w[i, j]
    return out.reshape(n, out_hw[0], out_hw[1], c * mult)


def depthwise_backprop_filter(x: np.ndarray, filter_shape, g: np.ndarray, geo) -> np.ndarray:
    n, h, wd, c = x.shape
    kh, kw, _, mult = filter_shape
    out_hw, pads = geo.geometry(h, wd, kh, kw)
    xp = pad_nhwc(x, pads)
    g5 = g.reshape(-1, c, mult)
    dw = np.empty((kh, kw, c, mult), dtype=g.dtype)
    for i in range(kh):
        for j in range(kw):
            r, s = offset_slices(i, j, out_hw, geo)
            dw[i, j] = np.einsum("pc,pcm->cm", xp[:, r, s, :].reshape(-1, c), g5)
    return dw


def depthwise_backprop_input(input_shape, w: np.ndarray, g: np.ndarray, geo) -> np.ndarray:
    n, h, wd, c = input_shape
    kh, kw, _, mult = w.shape
    out_hw, pads = geo.geometry(h, wd, kh, kw)
    top, bottom, left, right = pads
    buf = np.zeros((n, h + top + bottom, wd + left + right, c), dtype=g.dtype)
    g5 = g.reshape(n, out_hw[0], out_hw[1], c, mult)
    for i in range(kh):
        for j in range(kw):
            r, s = offset_slices(i, j, out_hw, geo)
            buf[:, r, s, :] += np.einsum("nhwcm,cm->nhwc", g5, w[i, j])
    return np.ascontiguousarray(buf[:, top:top + h, left:left + wd, :])


# -- pooling --------------------------------------------------------------------------------


def _in_cache_chunks(kernel, x: np.ndarray, *batched, out_dtype) -> np.ndarray:
    """`kernel(x, *batched)` run per batch chunk of about `_POOL_CHUNK_BYTES` of `x`, so its
    dozen or so passes hit cache instead of memory, into one preallocated result."""
    n = x.shape[0]
    step = max(1, _POOL_CHUNK_BYTES // max(1, x[:1].nbytes))
    if step >= n:
        return kernel(x, *batched)
    out = None
    for lo in range(0, n, step):
        part = kernel(x[lo:lo + step], *(b[lo:lo + step] for b in batched))
        if out is None:
            out = np.empty((n, *part.shape[1:]), dtype=out_dtype)
        out[lo:lo + step] = part
    return out


def _lowest(dtype) -> object:
    if np.issubdtype(dtype, np.floating):
        return -np.inf
    return np.iinfo(dtype).min


def max_pool(x: np.ndarray, geo) -> np.ndarray:
    return _in_cache_chunks(lambda xs: _max_pool(xs, geo), x, out_dtype=x.dtype)


def _max_pool(x: np.ndarray, geo) -> np.ndarray:
    n, h, wd, c = x.shape
    out_hw, pads = geo.geometry(h, wd, *geo.ksize)
    xp = pad_nhwc(x, pads, _lowest(x.dtype))
    views = [xp[:, r, s, :] for r, s in _window_offsets(out_hw, geo)]
    if len(views) == 1:
        return views[0].copy()
    out = np.maximum(views[0], views[1])
    for view in views[2:]:
        np.maximum(out, view, out=out)
    return out


def _window_offsets(out_hw, geo) -> list:
    """(rows, cols) slices of every kernel offset, in row-major (scan) order."""
    return [offset_slices(i, j, out_hw, geo)
            for i in range(geo.ksize[0]) for j in range(geo.ksize[1])]


def first_max_masks(x: np.ndarray, geo):
    """(out_hw, pads, [((rows, cols), hit)]): `hit` marks the outputs whose window has its
    first maximum at that kernel offset.

    As TF's CPU kernel scans, a later offset wins only when strictly greater: ties go to the
    first maximum and a NaN wins only in first place. Masks come from comparisons with the
    window maximum (no masked copies, which NumPy runs slowly).
    """
    n, h, wd, c = x.shape
    out_hw, pads = geo.geometry(h, wd, *geo.ksize)
    xp = pad_nhwc(x, pads, _lowest(x.dtype))
    offsets = _window_offsets(out_hw, geo)
    views = [xp[:, r, s, :] for r, s in offsets]
    best = views[0].copy() if len(views) == 1 else np.maximum(views[0], views[1])
    for view in views[2:]:
        np.maximum(best, view, out=best)
    if np.issubdtype(best.dtype, np.inexact) and np.isnan(best).any():
        # Some window holds a NaN: the maximum ignoring NaNs, unless one comes first.
        best = views[0].copy() if len(views) == 1 else np.fmax(views[0], views[1])
        for view in views[2:]:
            np.fmax(best, view, out=best)
        first_nan = np.isnan(views[0])
        np.copyto(best, views[0], where=first_nan)
    masks = []
    taken = None
    for k, view in enumerate(views):
        if k == 0:
            hit = np.less(view, best)
            np.logical_not(hit, out=hit)
            taken = hit.copy()
        else:
            hit = np.equal(view, best)
            np.greater(hit, taken, out=hit)
            if k < len(views) - 1:
                np.logical_or(taken, hit, out=taken)
        masks.append((offsets[k], hit))
    return out_hw, pads, masks


def _windows_tile(h: int, wd: int, out_hw, pads, geo) -> bool:
    """True when the pooling windows cover the unpadded input exactly once."""
    return geo.ksize == geo.strides and not any(pads) and \
        out_hw[0] * geo.ksize[0] == h and out_hw[1] * geo.ksize[1] == wd


def _exact_zero_products(values: np.ndarray) -> bool:
    """True when `values * False` is exactly zero everywhere (no inf or NaN)."""
    return not np.issubdtype(values.dtype, np.inexact) or bool(np.isfinite(values).all())


def max_pool_grad(x: np.ndarray, g: np.ndarray, geo) -> np.ndarray:
    """Routes each output gradient to the first maximum of its window (TF's tie rule)."""
    return _in_cache_chunks(lambda xs, gs: _max_pool_grad(xs, gs, geo), x, g,
                            out_dtype=g.dtype)


def _max_pool_grad(x: np.ndarray, g: np.ndarray, geo) -> np.ndarray:
    n, h, wd, c = x.shape
    out_hw, (top, bottom, left, right), masks = first_max_masks(x, geo)
    routed = np.empty(g.shape, dtype=g.dtype)
    finite = _exact_zero_products(g)
    zero = np.zeros((), dtype=g.dtype)
    if finite and _windows_tile(h, wd, out_hw, (top, bottom, left, right), geo):
        # Every input is in exactly one window: write each offset's share once (adding 0.0
        # turns the -0.0 of a negative gradient times False into TF's 0.0).
        dx = np.empty(x.shape, dtype=g.dtype)
        for (r, s), hit in masks:
            np.multiply(g, hit, out=routed)
            np.add(routed, zero, out=dx[:, r, s, :])
        return dx
    buf = np.zeros((n, h + top + bottom, wd + left + right, c), dtype=g.dtype)
    for (r, s), hit in masks:
        view = buf[:, r, s, :]
        if finite:
            np.multiply(g, hit, out=routed)
            np.add(view, routed, out=view)
        else:
            np.add(view, np.where(hit, g, zero), out=view)
    if not (top or bottom or left or right):
        return buf
    return np.ascontiguousarray(buf[:, top:top + h, left:left + wd, :])


def max_pool_grad_grad(x: np.ndarray, gg: np.ndarray, geo) -> np.ndarray:
    """For each output, the input-shaped `gg` at its window's first maximum."""
    return _in_cache_chunks(lambda xs, gs: _max_pool_grad_grad(xs, gs, geo), x, gg,
                            out_dtype=gg.dtype)


def _max_pool_grad_grad(x: np.ndarray, gg: np.ndarray, geo) -> np.ndarray:
    out_hw, pads, masks = first_max_masks(x, geo)
    gp = pad_nhwc(gg, pads)
    out = np.zeros(masks[0][1].shape, dtype=gg.dtype)
    picked = np.empty(out.shape, dtype=gg.dtype)
    finite = _exact_zero_products(gg)
    for (r, s), hit in masks:
        if finite:
            np.multiply(gp[:, r, s, :], hit, out=picked)
            out += picked
        else:
            np.copyto(out, gp[:, r, s, :], where=hit)
    return out


def _window_counts(size: int, out: int, k: int, stride: int, before: int) -> np.ndarray:
    start = np.arange(out) * stride - before
    return np.minimum(start + k, size) - np.maximum(start, 0)


def avg_pool_divisors(h: int, wd: int, out_hw, pads, geo) -> np.ndarray:
    """[oh, ow, 1] counts of real (unpadded) inputs in each window, as TF divides by."""
    rows = _window_counts(h, out_hw[0], geo.ksize[0], geo.strides[0], pads[0])
    cols = _window_counts(wd, out_hw[1], geo.ksize[1], geo.strides[1], pads[2])
    return (rows[:, None] * cols[None, :])[:, :, None]


def avg_pool(x: np.ndarray, geo) -> np.ndarray:
    return _in_cache_chunks(lambda xs: _avg_pool(xs, geo), x, out_dtype=x.dtype)


def _avg_pool(x: np.ndarray, geo) -> np.ndarray:
    n, h, wd, c = x.shape
    out_hw, pads = geo.geometry(h, wd, *geo.ksize)
    xp = pad_nhwc(x, pads)
    out = np.zeros((n, out_hw[0], out_hw[1], c), dtype=x.dtype)
    for i in range(geo.ksize[0]):
        for j in range(geo.ksize[1]):
            r, s = offset_slices(i, j, out_hw, geo)
            out += xp[:, r, s, :]
    out /= avg_pool_divisors(h, wd, out_hw, pads, geo).astype(x.dtype)
    return out


def avg_pool_grad(input_shape, g: np.ndarray, geo) -> np.ndarray:
    n, h, wd, c = input_shape
    out_hw, pads = geo.geometry(h, wd, *geo.ksize)
    top, bottom, left, right = pads
    share = g / avg_pool_divisors(h, wd, out_hw, pads, geo).astype(g.dtype)
    buf = np.zeros((n, h + top + bottom, wd + left + right, c), dtype=g.dtype)
    for i in range(geo.ksize[0]):
        for j in range(geo.ksize[1]):
            r, s = offset_slices(i, j, out_hw, geo)
            buf[:, r, s, :] += share
    return np.ascontiguousarray(buf[:, top:top + h, left:left + wd, :])
