"""Stride-1 convolutions through discrete Fourier transforms done as matrix products.

In the frequency domain a stride-1 convolution is one small matmul per frequency bin over the
channels, `[n, in] @ [in, out]`. With the input, filter and output transforms that is about a
third of im2col's flops for a 5x5 filter on a 16x16 map, and more accurate in float32 (each
output sums a few dozen products per stage instead of `kh * kw * in` in one).

Spectra are real arrays holding complex numbers in block form: a bin's row is `[real parts |
imaginary parts]` over the channels, so the complex product `X V` is the real matmul
`[Xr Xi] @ [[Vr, Vi], [-Vi, Vr]]`. The transform along H keeps only the non-negative
frequencies (the data is real; the others are conjugates), the one along W keeps all. Each
1-D transform is a matmul with a DFT matrix: at these sizes (10-40 points) one BLAS call per
image beats NumPy's FFT, and padding and cropping cost nothing (the matrices simply start at
an offset and have as many columns or rows as there are real pixels).

The transform length per axis is the padded input size `out + (k - 1) * dilation`, so the
circular convolution equals the linear one on every output. `cost_ratio` estimates the flops
against im2col's; `conv_kernels` takes this path only when it wins clearly.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from tensorflux.lib.numerics import intra_op

# Spectra of at most about this many bytes are built at once (larger batches go in chunks).
_SPECTRUM_BYTES = 16 << 20


@dataclass(frozen=True)
class Plan:
    """The transform geometry of one stride-1 convolution (all sizes spatial, (h, w))."""

    in_hw: tuple
    out_hw: tuple
    k_hw: tuple
    dilations: tuple
    offsets: tuple  # (top, left): where the input sits in the padded frame

    @property
    def lengths(self) -> tuple:
        return tuple(o + (k - 1) * d for o, k, d in zip(self.out_hw, self.k_hw, self.dilations))

    @property
    def bins(self) -> int:
        lh, lw = self.lengths
        return (lh // 2 + 1) * lw


def cost_ratio(plan: Plan, in_depth: int, out_depth: int, op: str = "forward") -> float:
    """Estimated flops of the frequency-domain path over im2col's, per batch item, for the
    "forward" convolution, its "input" gradient or its "filter" gradient."""
    (h, w), (oh, ow) = plan.in_hw, plan.out_hw
    lh, lw = plan.lengths
    half = lh // 2 + 1

    def forward(rows, cols, depth):  # half transform along H, full complex one along W
        return 4 * half * rows * cols * depth + 8 * half * lw * cols * depth

    def inverse(rows, cols, depth):
        return 8 * half * cols * lw * depth + 4 * half * rows * cols * depth

    transforms = {
        "forward": forward(h, w, in_depth) + inverse(oh, ow, out_depth),
        "input": forward(oh, ow, out_depth) + inverse(h, w, in_depth),
        "filter": forward(h, w, in_depth) + forward(oh, ow, out_depth),
    }[op]
    products = 8 * plan.bins * in_depth * out_depth
    direct = 2 * oh * ow * plan.k_hw[0] * plan.k_hw[1] * in_depth * out_depth
    return (products + transforms) / direct


# -- the DFT matrices (cached per geometry and dtype) ----------------------------------------


def _phase(freqs: int, length: int, positions) -> np.ndarray:
    return (2 * np.pi / length) * np.outer(np.arange(freqs), positions)


def _half_weights(length: int) -> np.ndarray:
    """Bins strictly between 0 and L/2 of a half spectrum stand for their conjugates too."""
    weight = np.full(length // 2 + 1, 2.0)
    weight[0] = 1.0
    if length % 2 == 0:
        weight[-1] = 1.0
    return weight


@functools.lru_cache(maxsize=64)
def _half_forward(count: int, length: int, offset: int, dtype) -> np.ndarray:
    """[2 * half, count]: real samples at `offset + t` to (bin, re/im) rows, bins 0..L/2."""
    phase = _phase(length // 2 + 1, length, np.arange(count) + offset)
    return np.stack([np.cos(phase), -np.sin(phase)], axis=1).reshape(-1, count).astype(dtype)


@functools.lru_cache(maxsize=64)
def _full_forward(count: int, length: int, offset: int, dtype) -> np.ndarray:
    """[2 * L, 2 * count]: complex samples as (re/im, t) rows to (bin, re/im) rows."""
    phase = _phase(length, length, np.arange(count) + offset)
    c, s = np.cos(phase), -np.sin(phase)
    m = np.empty((length, 2, 2, count))
    m[:, 0, 0], m[:, 0, 1], m[:, 1, 0], m[:, 1, 1] = c, -s, s, c
    return m.reshape(2 * length, 2 * count).astype(dtype)


@functools.lru_cache(maxsize=64)
def _full_inverse(count: int, length: int, offset: int, dtype) -> np.ndarray:
    """[2 * count, 2 * L]: (bin, re/im) rows back to (re/im, t) rows for t = offset + 0.."""
    phase = _phase(length, length, np.arange(count) + offset).T
    c, s = np.cos(phase), np.sin(phase)
    m = np.empty((2, count, length, 2))
    m[0, :, :, 0], m[0, :, :, 1], m[1, :, :, 0], m[1, :, :, 1] = c, -s, s, c
    return m.reshape(2 * count, 2 * length).astype(dtype)


@functools.lru_cache(maxsize=64)
def _half_inverse(count: int, length: int, offset: int, scale: float, dtype) -> np.ndarray:
    """[count, 2 * half]: (bin, re/im) rows of a half spectrum to real samples, times `scale`."""
    phase = _phase(length // 2 + 1, length, np.arange(count) + offset).T
    weight = _half_weights(length) * scale
    m = np.stack([np.cos(phase), -np.sin(phase)], axis=2) * weight[None, :, None]
    return m.reshape(count, -1).astype(dtype)


@functools.lru_cache(maxsize=64)
def _tap_phases(plan: Plan, sign: float, dtype) -> np.ndarray:
    """[2, bins, kh * kw]: cos and sign * sin of each filter tap's phase at each bin."""
    (lh, lw), (kh, kw), (dh, dw) = plan.lengths, plan.k_hw, plan.dilations
    hf = np.arange(lh // 2 + 1)[:, None, None, None] * (np.arange(kh) * dh)[None, None, :, None]
    wf = np.arange(lw)[None, :, None, None] * (np.arange(kw) * dw)[None, None, None, :]
    phase = (2 * np.pi / lh) * hf + (2 * np.pi / lw) * wf
    taps = np.stack([np.cos(phase), sign * np.sin(phase)])
    return taps.reshape(2, plan.bins, kh * kw).astype(dtype)


# -- transforms -----------------------------------------------------------------------------


def spectrum(a: np.ndarray, plan: Plan, offsets, out=None) -> np.ndarray:
    """[n, bins, 2 * c] block spectrum of NHWC `a` placed at `offsets` in the padded frame
    (written into the C-contiguous `out` when given)."""
    n, h, w, c = a.shape
    lh, lw = plan.lengths
    half = lh // 2 + 1
    rows = np.matmul(_half_forward(h, lh, offsets[0], a.dtype), a.reshape(n, h, w * c))
    full = _full_forward(w, lw, offsets[1], a.dtype)
    if out is None:
        out = np.empty((n, half * lw, 2 * c), dtype=rows.dtype)
    np.matmul(full, rows.reshape(n * half, 2 * w, c), out=out.reshape(n * half, 2 * lw, c))
    return out


def inverse(spec: np.ndarray, plan: Plan, out_hw, offsets, out=None) -> np.ndarray:
    """The real NHWC `[n, *out_hw, c]` window at `offsets` of block spectrum [n, bins, 2 c]
    (written into `out` when given)."""
    n, _, c2 = spec.shape
    lh, lw = plan.lengths
    half = lh // 2 + 1
    c = c2 // 2
    cols = np.matmul(_full_inverse(out_hw[1], lw, offsets[1], spec.dtype),
                     spec.reshape(n * half, 2 * lw, c))
    back = _half_inverse(out_hw[0], lh, offsets[0], 1.0 / (lh * lw), spec.dtype)
    if out is None:
        out = np.empty((n, out_hw[0], out_hw[1], c), dtype=spec.dtype)
    np.matmul(back, cols.reshape(n, 2 * half, out_hw[1] * c),
                    out=out.reshape(n, out_hw[0], out_hw[1] * c))
    return out


def filter_blocks(w: np.ndarray, plan: Plan, conjugate: bool) -> np.ndarray:
    """[bins, 2 * in, 2 * out] block matrices of the filter's spectrum (or its conjugate)."""
    kh, kw, c_in, c_out = w.shape
    taps = _tap_phases(plan, 1.0 if conjugate else -1.0, w.dtype)
    v = np.matmul(taps.reshape(2 * plan.bins, kh * kw), w.reshape(kh * kw, c_in * c_out))
    v = v.reshape(2, plan.bins, c_in, c_out)
    blocks = np.empty((plan.bins, 2, c_in, 2, c_out), dtype=w.dtype)
    blocks[:, 0, :, 0] = v[0]
    blocks[:, 0, :, 1] = v[1]
    np.negative(v[1], out=blocks[:, 1, :, 0])
    blocks[:, 1, :, 1] = v[0]
    return blocks.reshape(plan.bins, 2 * c_in, 2 * c_out)


def _chunks(n: int, per_item_bytes: int):
    step = max(1, _SPECTRUM_BYTES // max(per_item_bytes, 1))
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)]


def _split(n: int, plan: Plan) -> tuple:
    """(item ranges, bin ranges) of a batch chunk of `n` items for the intra-op helpers, or
    None when the split is off (or there is one item).

    The transforms are per item and the products per bin: cutting either into ranges makes
    the very products of the unsplit loop, so split results equal unsplit ones.
    """
    threads = intra_op.splits()
    if threads <= 1 or n <= 1:
        return None
    parts = threads * intra_op.CHUNKS_PER_THREAD
    return intra_op.balanced_parts(n, parts), intra_op.balanced_parts(plan.bins, parts)


def _apply(a: np.ndarray, blocks: np.ndarray, plan: Plan, in_offsets, out_hw, out_offsets,
           out: np.ndarray, epilogue=None) -> np.ndarray:
    """out = inverse(spectrum(a) @ blocks) per batch chunk; `epilogue` runs on each chunk."""
    n = a.shape[0]
    c_out2 = blocks.shape[2]
    for lo, hi in _chunks(n, plan.bins * 2 * max(a.shape[3], c_out2 // 2) * a.itemsize):
        split = _split(hi - lo, plan)
        if split is not None:
            _apply_split(a[lo:hi], blocks, plan, in_offsets, out_hw, out_offsets, out[lo:hi],
                         epilogue, *split)
            continue
        spec = spectrum(a[lo:hi], plan, in_offsets)
        prod = np.empty((hi - lo, plan.bins, c_out2), dtype=a.dtype)
        np.matmul(spec.transpose(1, 0, 2), blocks, out=prod.transpose(1, 0, 2))
        inverse(prod, plan, out_hw, out_offsets, out=out[lo:hi])
        if epilogue is not None:
            epilogue(out[lo:hi])
    return out


def _apply_split(a, blocks, plan: Plan, in_offsets, out_hw, out_offsets, out, epilogue, items,
                 bins) -> None:
    """`_apply` of one batch chunk in three phases run on the intra-op helpers: transforms
    over item ranges, products over bin ranges, inverse transforms (and epilogues) over
    item ranges."""
    spec = np.empty((a.shape[0], plan.bins, 2 * a.shape[3]), dtype=a.dtype)
    prod = np.empty((a.shape[0], plan.bins, blocks.shape[2]), dtype=a.dtype)

    def transform(i: int) -> None:
        lo, hi = items[i]
        spectrum(a[lo:hi], plan, in_offsets, out=spec[lo:hi])

    def product(i: int) -> None:
        lo, hi = bins[i]
        np.matmul(spec[:, lo:hi].transpose(1, 0, 2), blocks[lo:hi],
                  out=prod[:, lo:hi].transpose(1, 0, 2))

    def back(i: int) -> None:
        lo, hi = items[i]
        inverse(prod[lo:hi], plan, out_hw, out_offsets, out=out[lo:hi])
        if epilogue is not None:
            epilogue(out[lo:hi])

    intra_op.run_parts(transform, len(items))
    intra_op.run_parts(product, len(bins))
    intra_op.run_parts(back, len(items))


# -- the three convolution ops --------------------------------------------------------------


def conv2d(x: np.ndarray, w: np.ndarray, plan: Plan, epilogue=None) -> np.ndarray:
    """NHWC stride-1 cross-correlation: the input spectrum times the filter's conjugate."""
    out = np.empty((x.shape[0], *plan.out_hw, w.shape[3]), dtype=x.dtype)
    return _apply(x, filter_blocks(w, plan, conjugate=True), plan, plan.offsets, plan.out_hw,
                  (0, 0), out, epilogue)


def conv2d_backprop_input(g: np.ndarray, w: np.ndarray, plan: Plan) -> np.ndarray:
    """The transposed convolution: the gradient's spectrum times the filter's (depths
    swapped), cropped back to the unpadded input."""
    w_t = np.ascontiguousarray(w.transpose(0, 1, 3, 2))
    out = np.empty((g.shape[0], *plan.in_hw, w.shape[2]), dtype=g.dtype)
    return _apply(g, filter_blocks(w_t, plan, conjugate=False), plan, (0, 0), plan.in_hw,
                  plan.offsets, out)


def conv2d_backprop_filter(x: np.ndarray, k_shape, g: np.ndarray, plan: Plan) -> np.ndarray:
    """Per bin, sum over the batch of X^T conj(G); each tap is then one inverse coefficient."""
    n, _, _, c_in = x.shape
    kh, kw, _, c_out = k_shape
    acc = np.zeros((plan.bins, 2 * c_in, 2 * c_out), dtype=x.dtype)
    part = np.empty_like(acc)
    for lo, hi in _chunks(n, plan.bins * 2 * max(c_in, c_out) * x.itemsize):
        split = _split(hi - lo, plan)
        if split is None:
            xs = spectrum(x[lo:hi], plan, plan.offsets)
            gs = spectrum(g[lo:hi], plan, (0, 0))
            np.matmul(xs.transpose(1, 2, 0), gs.transpose(1, 0, 2), out=part if lo else acc)
        else:
            _filter_product_split(x[lo:hi], g[lo:hi], plan, part if lo else acc, *split)
        if lo:
            acc += part
    p = acc.reshape(plan.bins, 2, c_in, 2, c_out)
    parts = np.empty((2, plan.bins, c_in, c_out), dtype=x.dtype)
    np.add(p[:, 0, :, 0], p[:, 1, :, 1], out=parts[0])
    np.subtract(p[:, 1, :, 0], p[:, 0, :, 1], out=parts[1])
    taps = _filter_inverse(plan, x.dtype)
    dw = np.matmul(taps, parts.reshape(2 * plan.bins, c_in * c_out))
    return dw.reshape(kh, kw, c_in, c_out)


@functools.lru_cache(maxsize=64)
def _filter_inverse(plan: Plan, dtype) -> np.ndarray:
    """[kh * kw, 2 * bins]: each tap as the real part of the inverse transform at its offset."""
    lh, lw = plan.lengths
    weight = np.repeat(_half_weights(lh), lw) / (lh * lw)
    taps = _tap_phases(plan, 1.0, np.float64)  # cos, sin of +phase
    m = np.concatenate([taps[0].T * weight, -taps[1].T * weight], axis=1)
    return m.astype(dtype)


def _filter_product_split(x, g, plan: Plan, out, items, bins) -> None:
    """`out[bin] = X[bin]^T conj-block G[bin]` of one batch chunk on the intra-op helpers:
    both transforms over item ranges, then the products over bin ranges."""
    xs = np.empty((x.shape[0], plan.bins, 2 * x.shape[3]), dtype=x.dtype)
    gs = np.empty((g.shape[0], plan.bins, 2 * g.shape[3]), dtype=g.dtype)

    def transform(i: int) -> None:
        lo, hi = items[i]
        spectrum(x[lo:hi], plan, plan.offsets, out=xs[lo:hi])
        spectrum(g[lo:hi], plan, (0, 0), out=gs[lo:hi])

    def product(i: int) -> None:
        lo, hi = bins[i]
        np.matmul(xs[:, lo:hi].transpose(1, 2, 0), gs[:, lo:hi].transpose(1, 0, 2),
                  out=out[lo:hi])

    intra_op.run_parts(transform, len(items))
    intra_op.run_parts(product, len(bins))
