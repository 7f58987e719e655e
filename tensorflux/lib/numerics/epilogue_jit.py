"""Compiled epilogues of fused products: bias plus activation in one pass, in place.

`_FusedConv2D` / `_FusedMatMul` (ops/internal/fused.py) add the bias and apply the activation
to each chunk of the product while it is in cache; NumPy needs one pass per step (and ~0.4 ms
per 2.6 MB chunk for two of them), this loop one (4-6x faster measured). Large products take
it in row ranges on the intra-op threads (`intra_op.run_elementwise`). The arithmetic is
the unfused ops': `y + bias` in the product's dtype, then `np.maximum(y, 0)` (NaN stays NaN)
or `np.clip(y, 0, 6)`, so results are bit-identical.
"""

from __future__ import annotations

import numpy as np

from tensorflux.lib.numerics import intra_op
from tensorflux.lib.numerics import jit as jit_mod

SPLIT_ELEMENTS = 1 << 18  # smaller products take their epilogue on the calling thread
SUPPORTED_TYPES = (np.dtype(np.float32), np.dtype(np.float64))
ACTIVATIONS = {None: 0, "Relu": 1, "Relu6": 2}


def supports(y: np.ndarray) -> bool:
    """True when the compiled epilogue may run on `y` (numba on, float, C-contiguous)."""
    return y.dtype in SUPPORTED_TYPES and y.flags.c_contiguous and jit_mod.available()


def bias_activation(y: np.ndarray, bias: np.ndarray, activation=None) -> None:
    """`y = activation(y + bias)` in place; `bias` runs along `y`'s last dimension.

    Args:
        y: the product, C-contiguous, of a float dtype (`supports(y)`).
        bias: a vector with one value per entry of `y`'s last dimension, of `y`'s dtype.
        activation: None, "Relu" or "Relu6".

    Raises:
        ValueError: the bias does not match `y`'s last dimension.
    """
    if y.ndim < 1 or bias.shape != y.shape[-1:]:
        raise ValueError(f"the bias must have one value per entry of the last dimension "
                         f"{list(y.shape[-1:])}, got shape {list(bias.shape)}")
    rows = y.reshape(-1, y.shape[-1]) if y.size else y.reshape(0, bias.shape[0])
    bias = np.ascontiguousarray(bias, dtype=y.dtype)
    code = ACTIVATIONS[activation]
    if y.size < SPLIT_ELEMENTS or intra_op.elementwise_splits() <= 1:
        (_bias_activation_held if jit_mod.holds_gil(y.size) else _bias_activation)(rows, bias,
                                                                                   code)
        return
    # Row ranges on the intra-op threads (the same arithmetic per element).
    ranges = intra_op.balanced_parts(rows.shape[0], intra_op.elementwise_splits() *
                                     intra_op.CHUNKS_PER_THREAD)
    intra_op.run_elementwise(lambda i: _bias_activation(rows[ranges[i][0]:ranges[i][1]], bias,
                                                        code), len(ranges))


@jit_mod.jit
def _bias_activation(y, bias, code):
    rows, c = y.shape
    for i in range(rows):
        row = y[i]
        if code == 0:
            for k in range(c):
                row[k] = row[k] + bias[k]
        elif code == 1:
            for k in range(c):
                v = row[k] + bias[k]
                row[k] = v if (v >= 0 or v != v) else 0
        else:
            for k in range(c):
                v = row[k] + bias[k]
                row[k] = v if v != v else min(max(v, 0), 6)


@jit_mod.jit(nogil=False)
def _bias_activation_held(y, bias, code):
    """`_bias_activation` keeping the GIL, for small products (`jit.holds_gil`)."""
    _bias_activation(y, bias, code)
