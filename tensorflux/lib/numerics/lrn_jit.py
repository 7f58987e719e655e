"""Compiled local response normalization (LRN and its gradient) over the last axis.

NumPy's LRN (`ops/nn/normalization.py`, kept as the reference and the fallback, see
`jit.available()`) makes about ten memory passes over the input: square, cumulative sum, two
gathers of the window ends, scale, power, product (and as many again for the gradient). These
kernels make one pass over each row of `depth` values, with the window sums kept in a scratch
row, and compute each value the same way and in the same order as the reference:

- the window sum over [d - radius, d + radius] (clipped at the edges) is the difference of two
  entries of the running sum of the row, added left to right in the input's dtype, as
  `np.cumsum` does; NaN and inf therefore spread exactly as in the reference;
- `norm = bias + alpha * window`, `y = x * norm ** -beta`, scalars in the input's dtype;
- the gradient `dx = dy * norm ** -beta - (2 alpha beta) * x * window(dy * y / norm)`.

Results equal the reference's except for the power `norm ** -beta`, which NumPy computes with
its own (vectorised, not always correctly rounded) routine. Here float32 inputs with the common
betas 0.5, 0.75 and 1 take it in float64 from square roots and a division (which vectorise) and
round once, so it is correctly rounded but for a tie; other betas and float64 call libm's `pow`.
The two differ by at most an ulp or so.

Rows are independent, so a large input runs in row ranges on the intra-op threads when the
budget splits kernels (`intra_op.run_parts` under load, `intra_op.run_elementwise` on a quiet
machine), as the compiled pooling and epilogue kernels do: each row is computed by the same loop
whichever thread runs it, so split results equal one call's bit for bit.
"""

from __future__ import annotations

import numpy as np

from tensorflux.lib.numerics import intra_op
from tensorflux.lib.numerics import jit as jit_mod

# Inputs smaller than this (elements) run in one call: a split costs a thread hand-off.
SPLIT_ELEMENTS = 1 << 18

SUPPORTED_TYPES = (np.dtype(np.float32), np.dtype(np.float64))


def supports(*arrays) -> bool:
    """True when the compiled kernels may run on these arrays (numba on, one float dtype)."""
    return (jit_mod.available() and arrays[0].dtype in SUPPORTED_TYPES
            and all(a.dtype == arrays[0].dtype for a in arrays))


def _rows(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).reshape(-1, a.shape[-1])


_GENERAL, _BETA_3_4, _BETA_1_2, _BETA_1 = range(4)
_SQRT_MODES = {0.75: _BETA_3_4, 0.5: _BETA_1_2, 1.0: _BETA_1}


def _row_ranges(fn, rows: int, elements: int) -> None:
    """`fn(lo, hi)` over all rows: in one call, or in row ranges on the intra-op threads."""
    split = intra_op.splits()
    threads = split if split > 1 else intra_op.elementwise_splits()
    if threads <= 1 or rows <= 1 or elements < SPLIT_ELEMENTS:
        fn(0, rows)
        return
    ranges = intra_op.balanced_parts(rows, threads * intra_op.CHUNKS_PER_THREAD)
    run = intra_op.run_parts if split > 1 else intra_op.run_elementwise
    run(lambda i: fn(*ranges[i]), len(ranges))


def _scalars(dtype, radius, bias, alpha, beta):
    kind = dtype.type
    mode = _SQRT_MODES.get(float(beta), _GENERAL) if dtype == np.float32 else _GENERAL
    # NOTE: 2 * alpha * beta in double first, as the reference's Python-float product.
    return (int(radius), kind(bias), kind(alpha), kind(-beta), mode, kind(2 * alpha * beta))


def lrn(x: np.ndarray, depth_radius: int, bias: float, alpha: float,
        beta: float) -> np.ndarray:
    """LRN of `x` over its last axis: `x / (bias + alpha * window sum of x**2) ** beta`.

    Args:
        x: float32 or float64 array (NHWC: the window runs over channels).
        depth_radius, bias, alpha, beta: the LRN attrs.

    Returns:
        An array of `x`'s shape and dtype.
    """
    radius, bias_, alpha_, power, mode, _ = _scalars(x.dtype, depth_radius, bias, alpha, beta)
    out = np.empty(x.shape, dtype=x.dtype)
    if x.size:
        rows, out_rows = _rows(x), out.reshape(-1, x.shape[-1])
        _row_ranges(lambda lo, hi: _lrn(rows[lo:hi], radius, bias_, alpha_, power, mode,
                                        out_rows[lo:hi]), rows.shape[0], x.size)
    return out


def lrn_grad(dy: np.ndarray, x: np.ndarray, y: np.ndarray, depth_radius: int, bias: float,
             alpha: float, beta: float) -> np.ndarray:
    """LRNGrad: the gradient of `lrn` at `x` (output `y`) for the output gradient `dy`.

    Raises:
        ValueError: when `dy`, `x` and `y` differ in shape.
    """
    if not dy.shape == x.shape == y.shape:
        raise ValueError(f"LRNGrad: input_grads, input_image and output_image must have one "
                         f"shape, got {list(dy.shape)}, {list(x.shape)}, {list(y.shape)}")
    radius, bias_, alpha_, power, mode, scale = _scalars(x.dtype, depth_radius, bias, alpha,
                                                         beta)
    out = np.empty(x.shape, dtype=x.dtype)
    if x.size:
        dy_rows, x_rows, y_rows = _rows(dy), _rows(x), _rows(y)
        out_rows = out.reshape(-1, x.shape[-1])
        _row_ranges(lambda lo, hi: _lrn_grad(dy_rows[lo:hi], x_rows[lo:hi], y_rows[lo:hi],
                                             radius, bias_, alpha_, power, mode, scale,
                                             out_rows[lo:hi]), x_rows.shape[0], x.size)
    return out


@jit_mod.jit
def _window_norm(row, radius, bias, alpha, running, norm):
    # running[d] = row[0]**2 + ... + row[d-1]**2, added left to right (as np.cumsum).
    depth = row.shape[0]
    running[0] = 0
    for d in range(depth):
        running[d + 1] = running[d] + row[d] * row[d]
    for d in range(depth):
        norm[d] = bias + alpha * (running[min(d + radius + 1, depth)]
                                  - running[max(d - radius, 0)])


@jit_mod.jit
def _inverse_power(norm, power, mode, out):
    # out = norm ** power (power = -beta); the float64 forms round once when stored.
    # NOTE: `v + 0.0` turns -0.0 into +0.0: pow(-0.0, -0.5) is +inf, 1 / sqrt(-0.0) is -inf.
    if mode == 1:
        for d in range(norm.shape[0]):
            v = np.float64(norm[d]) + 0.0
            root = np.sqrt(v)
            out[d] = 1.0 / (root * np.sqrt(root))
    elif mode == 2:
        for d in range(norm.shape[0]):
            out[d] = 1.0 / np.sqrt(np.float64(norm[d]) + 0.0)
    elif mode == 3:
        for d in range(norm.shape[0]):
            out[d] = 1.0 / np.float64(norm[d])
    else:
        for d in range(norm.shape[0]):
            out[d] = norm[d] ** power


@jit_mod.jit
def _lrn(x, radius, bias, alpha, power, mode, out):
    rows, depth = x.shape
    running = np.empty(depth + 1, dtype=x.dtype)
    norm = np.empty(depth, dtype=x.dtype)
    for r in range(rows):
        row = x[r]
        _window_norm(row, radius, bias, alpha, running, norm)
        o = out[r]
        _inverse_power(norm, power, mode, o)
        for d in range(depth):
            o[d] = row[d] * o[d]


@jit_mod.jit
def _lrn_grad(dy, x, y, radius, bias, alpha, power, mode, scale, out):
    rows, depth = x.shape
    running = np.empty(depth + 1, dtype=x.dtype)
    norm = np.empty(depth, dtype=x.dtype)
    for r in range(rows):
        row = x[r]
        _window_norm(row, radius, bias, alpha, running, norm)
        g = dy[r]
        yr = y[r]
        running[0] = 0
        for d in range(depth):
            running[d + 1] = running[d] + g[d] * yr[d] / norm[d]
        o = out[r]
        _inverse_power(norm, power, mode, o)
        for d in range(depth):
            spread = running[min(d + radius + 1, depth)] - running[max(d - radius, 0)]
            o[d] = g[d] * o[d] - scale * row[d] * spread
