"""Compiled activations and their gradients where NumPy makes several passes (and, on the
small tensors of an RNN cell, pays ~2 us of dispatch per pass).

- ReluGrad: the reference (`ops/nn/activations.py`, kept as the fallback, see
  `jit.available()`) computes `g * (f > 0)`: a boolean mask, then a product that casts it back
  to `g`'s dtype. Here each element is `g * 1` or `g * 0` in `g`'s dtype, the same product, so
  results are bit-identical (a NaN or inf gradient at f <= 0 gives NaN, a negative one -0.0; a
  NaN feature counts as f <= 0).
- Sigmoid: the reference (`ops/math/unary.py`) is `where(x >= 0, 1 / (1 + e), e / (1 + e))`
  with `e = exp(-|x|)`; NumPy's `where` alone costs 4 ns an element. Here `e` still comes from
  NumPy's `exp` (so the transcendental is the reference's, bit for bit) and one compiled loop
  does the rest with the same divisions: 59 -> 14 us on an LSTM gate of 32x256.
- SigmoidGrad `(dy * y) * (1 - y)` and TanhGrad `dy * (1 - y * y)`: one loop, the reference's
  operations in its order (no fused multiply-add: fastmath is off), bit-identical.
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
    kernel = _relu_grad_held if jit_mod.holds_gil(g.size) else _relu_grad
    kernel(np.ascontiguousarray(g).reshape(-1), np.ascontiguousarray(f).reshape(-1),
               kind(1), kind(0), out.reshape(-1))
    return out


def supports_float(x: np.ndarray) -> bool:
    """True when the compiled Sigmoid may run on `x`: numba on, float32 or float64."""
    return x.dtype in SUPPORTED_TYPES and jit_mod.available()


def sigmoid(x: np.ndarray) -> np.ndarray:
    """Sigmoid of a float32/float64 array (`supports_float(x)`), bit-identical to the reference.

    Args:
        x: any shape (views too).

    Returns:
        A new C-contiguous array of `x`'s shape and dtype.
    """
    out = np.empty(x.shape, dtype=x.dtype)
    x = np.ascontiguousarray(x).reshape(-1)
    e = np.abs(x)
    np.negative(e, out=e)
    np.exp(e, out=e)  # NumPy's exp, as the reference's
    _sigmoid_select(x, e, x.dtype.type(1), out.reshape(-1))
    return out


def sigmoid_grad(y: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """SigmoidGrad `(dy * y) * (1 - y)` for `supports(dy, y)` operands."""
    return _binary(_sigmoid_grad_held if jit_mod.holds_gil(y.size) else _sigmoid_grad, y, dy,
                   "SigmoidGrad")


def tanh_grad(y: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """TanhGrad `dy * (1 - y * y)` for `supports(dy, y)` operands."""
    return _binary(_tanh_grad_held if jit_mod.holds_gil(y.size) else _tanh_grad, y, dy,
                   "TanhGrad")


def _binary(loop, y, dy, what):
    if y.shape != dy.shape:
        raise ValueError(f"{what}: y and dy must have one shape, got {list(y.shape)} and "
                         f"{list(dy.shape)}")
    out = np.empty(y.shape, dtype=y.dtype)
    loop(np.ascontiguousarray(y).reshape(-1), np.ascontiguousarray(dy).reshape(-1),
         y.dtype.type(1), out.reshape(-1))
    return out


@jit_mod.jit
def _sigmoid_select(x, e, one, out):
    for i in range(x.shape[0]):
        d = one + e[i]
        out[i] = one / d if x[i] >= 0 else e[i] / d


@jit_mod.jit
def _sigmoid_grad(y, dy, one, out):
    for i in range(y.shape[0]):
        out[i] = (dy[i] * y[i]) * (one - y[i])


@jit_mod.jit
def _tanh_grad(y, dy, one, out):
    for i in range(y.shape[0]):
        out[i] = dy[i] * (one - y[i] * y[i])


@jit_mod.jit
def _relu_grad(g, f, one, zero, out):
    for i in range(g.shape[0]):
        out[i] = g[i] * (one if f[i] > 0 else zero)


# Twins keeping the GIL for small operands (`jit.holds_gil`): the same loops.

@jit_mod.jit(nogil=False)
def _relu_grad_held(g, f, one, zero, out):
    _relu_grad(g, f, one, zero, out)


@jit_mod.jit(nogil=False)
def _sigmoid_grad_held(y, dy, one, out):
    _sigmoid_grad(y, dy, one, out)


@jit_mod.jit(nogil=False)
def _tanh_grad_held(y, dy, one, out):
    _tanh_grad(y, dy, one, out)
