"""Compiled activation gradients: ReluGrad in one pass where NumPy makes two and a cast.

The reference (`ops/nn/activations.py`, kept as the fallback, see `jit.available()`) computes
`g * (f > 0)`: a boolean mask, then a product that casts it back to `g`'s dtype. Here each
element is `g * 1` or `g * 0` in `g`'s dtype, the same product, so results are bit-identical
(a NaN or inf gradient at f <= 0 gives NaN, a negative one -0.0; a NaN feature counts as
f <= 0).
"""

from __future__ import annotations

import numpy as np

from tensorflux.lib.numerics import jit as jit_mod

SUPPORTED_TYPES = (np.dtype(np.float32), np.dtype(np.float64))


def supports(g: np.ndarray, f: np.ndarray) -> bool:
    """True when the compiled kernel may run: numba on, one float dtype, one shape."""
    return (jit_mod.available() and g.dtype in SUPPORTED_TYPES and f.dtype == g.dtype
            and g.shape == f.shape)


def relu_grad(g: np.ndarray, f: np.ndarray) -> np.ndarray:
    """ReluGrad: `g` where the feature `f` is positive, else `g * 0`.

    Args:
        g: the gradient of Relu's output, float32 or float64.
        f: Relu's features (its input), of `g`'s dtype and shape.

    Returns:
        An array of `g`'s shape and dtype.

    Raises:
        ValueError: when the shapes differ.
    """
    if g.shape != f.shape:
        raise ValueError(f"ReluGrad: gradients and features must have one shape, got "
                         f"{list(g.shape)} and {list(f.shape)}")
    out = np.empty(g.shape, dtype=g.dtype)
    kind = g.dtype.type
    _relu_grad(np.ascontiguousarray(g).reshape(-1), np.ascontiguousarray(f).reshape(-1),
               kind(1), kind(0), out.reshape(-1))
    return out


@jit_mod.jit
def _relu_grad(g, f, one, zero, out):
    for i in range(g.shape[0]):
        out[i] = g[i] * (one if f[i] > 0 else zero)
