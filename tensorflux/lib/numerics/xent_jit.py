"""The compiled last pass of the sparse softmax cross-entropy (ops/nn/core.py).

The reference ends a block of rows with three NumPy passes over `[rows, classes]`: the
division of each exponential by its row's sum, `- 1` at each row's label (a fancy-indexed
update), and, for `_SparseSoftmaxCrossEntropyWithLogitsScaled`, the product with the row's
scale. `normalise_rows` does the three in one loop with the same operations in the same order
(`scale * ((e / sum) - 1)` at the label, `scale * (e / sum)` elsewhere; no fused
multiply-add: numba's `fastmath` is off), so the values are the reference's bit for bit; the
exponentials and their sums stay NumPy's (`np.exp`, `np.sum`'s pairwise order). On the LSTM
language model's 640 x 10000 logits the pass takes 0.8 ms instead of 1.5 (single thread).

Callers check `supports(...)` first: numba on, float32/float64, a C-contiguous 2-D block.

`softmax_rows` (float32) is the whole kernel in one compiled pass per row after NumPy's row
maxima: the exponentials of the shifted row with their sum, the loss, and the normalised,
labelled and scaled backprop (and the folded bias gradient's column sums), while the row (40 KB
at 10000 classes) is in cache. The reference's exponential is NumPy's SIMD `exp`, which numba
cannot call; `softmax_rows` computes its own, which LLVM vectorises: `exp(s) = 2^k * p(t)` with
`k = floor(s / ln 2 + 1/2)`, `t = s - k ln 2` (ln 2 in two parts, Cody and Waite) and Cephes'
`expf` polynomial (fused multiply-adds allowed), `2^k` built from its exponent bits.
Differences from the reference, all within float32 tolerance (tests compare the two on the same
inputs): the exponential is within 2 ulp of the correctly rounded one (NumPy's within 1);
exponentials below float32's smallest normal number (`s < -87.3`) are 0 (NumPy gives
subnormals, all below 1.2e-38); the row sums accumulate in float64 in any order (NumPy: pairwise
in float32); the backprop is `e * (1 / sum)` (NumPy: `e / sum`). A row whose maximum is NaN or
infinite is NaN throughout, loss included, as in the reference. On the LSTM language model's
640 x 10000 logits the op takes ~7.5 ms instead of ~10.5 (one thread, bias gradient folded):
the reference's five NumPy passes over each block are memory traffic.
"""

from __future__ import annotations

import numpy as np

from tensorflux.lib.numerics import jit as jit_mod

__all__ = ["supports", "normalise_rows", "supports_rows", "softmax_rows", "supports_dense",
           "softmax_dense_rows"]

SUPPORTED_TYPES = (np.dtype(np.float32), np.dtype(np.float64))
# Rows shorter than this stay on NumPy (a compiled call costs ~1 us of dispatch).
MIN_CLASSES = 64


def supports(backprop: np.ndarray) -> bool:
    """True when `normalise_rows` may run on the block `backprop`."""
    return (backprop.ndim == 2 and backprop.dtype in SUPPORTED_TYPES and
            backprop.shape[1] >= MIN_CLASSES and backprop.flags.c_contiguous and
            backprop.flags.writeable and jit_mod.available())


def supports_rows(features: np.ndarray, backprop: np.ndarray) -> bool:
    """True when `softmax_rows` may run on the block `features` into `backprop`."""
    return (FUSED_ROWS and features.dtype == np.float32 and supports(backprop) and
            features.ndim == 2 and features.strides[1] == features.itemsize)


# False: `supports_rows` declines, the NumPy passes and `normalise_rows` run instead
# (bench/ab_kernels.py --change xent_rows).
FUSED_ROWS = True


def supports_dense(features: np.ndarray, labels: np.ndarray) -> bool:
    """True when `softmax_dense_rows` may run on `features` and `labels` (same shape, float32,
    C-contiguous, at least `MIN_CLASSES` columns)."""
    return (FUSED_ROWS and features.dtype == np.float32 and labels.dtype == np.float32 and
            features.ndim == 2 and features.shape == labels.shape and
            features.shape[1] >= MIN_CLASSES and features.flags.c_contiguous and
            labels.flags.c_contiguous and jit_mod.available())


def normalise_rows(exps: np.ndarray, sums: np.ndarray, labels: np.ndarray,
                   scale: np.ndarray | None) -> None:
    """In place: `exps[r] / sums[r]`, minus 1 at `labels[r]`, times `scale[r]` when given.

    Args:
        exps: `[rows, classes]` exponentials of the shifted logits (`supports(exps)`); becomes
            the backprop.
        sums: `[rows]` or `[rows, 1]` row sums of `exps`, of its dtype.
        labels: `[rows]` class ids in `[0, classes)` (checked by the caller).
        scale: None, or `[rows]` / `[rows, 1]` per-row factors of `exps`' dtype.

    Raises:
        ValueError: when a row count differs.
    """
    rows = exps.shape[0]
    sums = np.ascontiguousarray(sums, dtype=exps.dtype).reshape(-1)
    labels = np.ascontiguousarray(labels).reshape(-1)
    scaled = scale is not None
    factors = np.ascontiguousarray(scale, dtype=exps.dtype).reshape(-1) if scaled else sums
    if sums.shape[0] != rows or labels.shape[0] != rows or factors.shape[0] != rows:
        raise ValueError(f"normalise_rows: {rows} rows, but {sums.shape[0]} sums, "
                         f"{labels.shape[0]} labels and {factors.shape[0]} scale values")
    _normalise_rows(exps, sums, labels.astype(np.int64, copy=False), factors, scaled,
                    exps.dtype.type(1))


@jit_mod.jit
def _normalise_rows(exps, sums, labels, factors, scaled, one):
    for r in range(exps.shape[0]):
        total = sums[r]
        label = labels[r]
        at_label = exps[r, label] / total - one
        row = exps[r]
        if scaled:
            factor = factors[r]
            for j in range(row.shape[0]):
                row[j] = factor * (row[j] / total)
            row[label] = factor * at_label
        else:
            for j in range(row.shape[0]):
                row[j] = row[j] / total
            row[label] = at_label


def softmax_rows(features: np.ndarray, labels: np.ndarray, backprop: np.ndarray,
                 loss: np.ndarray, scale: np.ndarray | None,
                 column_sums: np.ndarray | None = None) -> None:
    """The sparse softmax cross-entropy of a block of float32 rows, in one compiled pass per row.

    Args:
        features: `[rows, classes]` float32 logits, rows contiguous (`supports_rows`).
        labels: `[rows]` class ids in `[0, classes)` (checked by the caller).
        backprop: `[rows, classes]` C-contiguous float32 output: `softmax - onehot(label)`,
            times `scale[r]` when given.
        loss: `[rows]` float32 output: `log(sum(exp(shifted))) - shifted[label]`.
        scale: None, or `[rows]` / `[rows, 1]` float32 per-row factors of the backprop.
        column_sums: None, or a `[classes]` float32 output: the backprop's column sums (a
            BiasAddGrad of it; rows added in order, each while in cache).

    Raises:
        ValueError: when a row count or shape differs.
    """
    rows, classes = features.shape
    labels = np.ascontiguousarray(labels).reshape(-1)
    scaled = scale is not None
    factors = (np.ascontiguousarray(scale, dtype=np.float32).reshape(-1) if scaled
               else np.ones(rows, np.float32))
    if (backprop.shape != features.shape or loss.shape != (rows,) or
            labels.shape[0] != rows or factors.shape[0] != rows):
        raise ValueError(f"softmax_rows: features {features.shape}, backprop {backprop.shape}, "
                         f"loss {loss.shape}, {labels.shape[0]} labels and {factors.shape[0]} "
                         f"scale values")
    summed = column_sums is not None
    if summed and column_sums.shape != (classes,):
        raise ValueError(f"softmax_rows: column_sums of shape {column_sums.shape}, want "
                         f"({classes},)")
    bits = np.empty(classes, np.int32)
    tops = np.max(features, axis=1) if classes else np.empty(rows, np.float32)  # NumPy's SIMD
    _softmax_rows(features, tops, labels.astype(np.int64, copy=False), backprop, loss, factors,
                  scaled, bits, column_sums if summed else bits.view(np.float32), summed)


@jit_mod.jit
def _softmax_rows(features, tops, labels, backprop, loss, factors, scaled, bits, sums, summed):
    classes = features.shape[1]
    if summed:
        for j in range(classes):
            sums[j] = 0
    pow2 = bits.view(np.float32)
    one = np.float32(1)
    nan = np.float32(np.nan)
    for r in range(features.shape[0]):
        x = features[r]
        out = backprop[r]
        top = tops[r]
        if top != top or top - top != 0:  # NaN or infinite maximum: the reference's NaN row
            for j in range(classes):
                out[j] = nan
            loss[r] = nan
            if summed:
                for j in range(classes):
                    sums[j] += nan
            continue
        _exponentials(x, top, out, bits)
        total = np.float32(_sum_of_products(out, pow2))
        label = labels[r]
        loss[r] = np.log(total) - (x[label] - top)
        at_label = (out[label] * pow2[label]) / total - one
        inverse = one / total
        factor = factors[r] if scaled else one  # times 1 changes no value
        if summed:
            before = sums[label]
            for j in range(classes):
                v = factor * ((out[j] * pow2[j]) * inverse)
                out[j] = v
                sums[j] += v
            out[label] = factor * at_label
            sums[label] = before + out[label]
        else:
            for j in range(classes):
                out[j] = factor * ((out[j] * pow2[j]) * inverse)
            out[label] = factor * at_label


@jit_mod.jit(contract=True)
def _exponentials(x, top, out, bits):
    """`exp(x - top)` as `out * 2^k` (`out`: the polynomial, `bits`: the float32 bits of
    `2^k`); 0 in `out` below float32's smallest normal number. Multiply-adds may be fused."""
    lowest = np.float32(-87.33654)  # log of float32's smallest normal number
    one = np.float32(1)
    for j in range(x.shape[0]):
        s = x[j] - top
        c = s if s > lowest else lowest
        k = np.floor(c * np.float32(1.4426950408889634) + np.float32(0.5))
        t = c - k * np.float32(0.693359375)
        t = t - k * np.float32(-2.12194440e-4)
        p = np.float32(1.9875691500e-4)
        p = p * t + np.float32(1.3981999507e-3)
        p = p * t + np.float32(8.3334519073e-3)
        p = p * t + np.float32(4.1665795894e-2)
        p = p * t + np.float32(1.6666665459e-1)
        p = p * t + np.float32(5.0000001201e-1)
        p = p * t * t + t + one
        bits[j] = (np.int32(k) + np.int32(127)) << 23
        out[j] = p if s >= lowest else np.float32(0)


@jit_mod.jit(reassociate=True)
def _sum_of_products(out, pow2):
    """The float64 sum of `out * pow2` (exact products: powers of two times normal numbers), in
    any order (vectorised)."""
    total = 0.0
    for j in range(out.shape[0]):
        total += out[j] * pow2[j]
    return total


def softmax_dense_rows(features: np.ndarray, labels: np.ndarray) -> tuple:
    """SoftmaxCrossEntropyWithLogits' kernel on `supports_dense` operands, one compiled pass
    per row (the exponentials of `softmax_rows`): `loss = -sum(labels * log_probs)` (summed in
    float64) and `backprop = softmax - labels`, to float32 tolerance of the NumPy reference.

    Returns:
        (loss `[rows]`, backprop `[rows, classes]`), float32.
    """
    rows, classes = features.shape
    backprop = np.empty_like(features)
    loss = np.empty(rows, np.float32)
    if rows:
        tops = np.max(features, axis=1)
        _softmax_dense_rows(features, tops, labels, backprop, loss, np.empty(classes, np.int32))
    return loss, backprop


@jit_mod.jit
def _softmax_dense_rows(features, tops, labels, backprop, loss, bits):
    classes = features.shape[1]
    pow2 = bits.view(np.float32)
    one = np.float32(1)
    nan = np.float32(np.nan)
    for r in range(features.shape[0]):
        x = features[r]
        y = labels[r]
        out = backprop[r]
        top = tops[r]
        if top != top or top - top != 0:  # NaN or infinite maximum: the reference's NaN row
            for j in range(classes):
                out[j] = nan
            loss[r] = nan
            continue
        _exponentials(x, top, out, bits)
        total = np.float32(_sum_of_products(out, pow2))
        log_total = np.log(total)
        loss[r] = np.float32(-_label_log_prob_sum(x, y, top, log_total))
        inverse = one / total
        for j in range(classes):
            out[j] = (out[j] * pow2[j]) * inverse - y[j]


@jit_mod.jit(reassociate=True)
def _label_log_prob_sum(x, y, top, log_total):
    """The float64 sum of `y * ((x - top) - log_total)` (float32 terms), in any order."""
    total = 0.0
    for j in range(x.shape[0]):
        total += y[j] * ((x[j] - top) - log_total)
    return total
