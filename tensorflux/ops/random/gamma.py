"""RandomGammaGrad (d sample / d alpha of standard gamma draws) and reparameterized gamma
sampling for the distributions.

RandomGamma draws are not an explicit function of alpha, but the implicit function theorem
gives their pathwise derivative: x = F^-1(u; alpha) with F the regularized lower incomplete
gamma P(alpha, x), so dx/dalpha = -(dP/dalpha) / (dP/dx). With the series
P = x^a e^-x / Gamma(a + 1) * S, S = sum_n t_n, t_n = prod_{k<=n} x / (a + k), this is

    dx/da = -(x / a) * (S (log x - digamma(a + 1)) + S'),  S' = sum_n t_n d_n,
    d_n = -sum_{k<=n} 1 / (a + k),

evaluated in float64, vectorised over elements, one pass per series term until every
element's terms are negligible; for alpha >= 1e4 (where the series needs ~9 sqrt(alpha) terms)
the derivative of the Wilson-Hilferty approximation of the quantile is used instead.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.common_shapes import broadcast_shape
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.lib.numerics import erf_gamma
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.random import stateful as random_ops

__all__: list = []

_MAX_TERMS = 200000
_LARGE_ALPHA = 1e4

RandomGammaGrad = define_op(
    "RandomGammaGrad", inputs=["alpha: T", "sample: T"], outputs=["output: T"],
    attrs=["T: {float32, float64}"], differentiable=False)

RandomGammaGrad.shape_fn(broadcast_shape)


def _series_derivative(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dx/da from the series (1-D arrays of valid a > 0, x > 0)."""
    term = np.ones_like(a)
    series = np.ones_like(a)
    d_series = np.zeros_like(a)
    harmonic = np.zeros_like(a)
    # Terms grow while x > a + n, then shrink geometrically: stop once past the peak and
    # small relative to the sum everywhere.
    peak = float(np.max(x - a, initial=0.0))
    with np.errstate(over="ignore", invalid="ignore"):
        for n in range(1, _MAX_TERMS):
            term = term * x / (a + n)
            harmonic = harmonic - 1.0 / (a + n)
            d_term = term * harmonic
            series = series + term
            d_series = d_series + d_term
            if n > peak and np.all(np.abs(term) <= 1e-17 * series) and \
                    np.all(np.abs(d_term) <= 1e-17 * np.abs(d_series) + 1e-300):
                break
        return -(x / a) * (series * (np.log(x) - erf_gamma.digamma(a + 1.0)) + d_series)


def _wilson_hilferty_derivative(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dx/da at fixed z of the Wilson-Hilferty map x = a (1 - 1/(9a) + z / (3 sqrt(a)))^3,
    accurate to ~5e-7 relative for a >= 1e4 (where the series needs ~9 sqrt(a) terms)."""
    center = 1.0 - 1.0 / (9.0 * a)
    spread = 1.0 / (3.0 * np.sqrt(a))
    z = (np.cbrt(x / a) - center) / spread
    base = center + z * spread
    return base**3 + 3.0 * a * base**2 * (1.0 / (9.0 * a * a) - z / (6.0 * a**1.5))


def _gamma_sample_derivative(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dx/dalpha for standard gamma samples x (float64 arrays of one broadcast shape)."""
    valid = (alpha > 0) & (x > 0) & np.isfinite(x) & np.isfinite(alpha)
    large = valid & (alpha >= _LARGE_ALPHA)
    small = valid & ~large
    grad = np.zeros(np.shape(alpha), np.float64)
    grad[small] = _series_derivative(alpha[small], x[small])
    grad[large] = _wilson_hilferty_derivative(alpha[large], x[large])
    return grad


@RandomGammaGrad.kernel
def _random_gamma_grad_kernel(alpha, sample):
    alpha64, sample64 = np.broadcast_arrays(np.asarray(alpha, np.float64),
                                            np.asarray(sample, np.float64))
    return _gamma_sample_derivative(alpha64, sample64).astype(alpha.dtype)


def reparameterized_gamma(shape, alpha, beta=None, dtype=dtypes.float32, seed=None, name=None):
    """`tf.random_gamma` samples whose gradient reaches `alpha` (and `beta`).

    The forward value is RandomGamma's draw x; the gradient with respect to alpha is
    RandomGammaGrad(alpha, x), summed over the sample axes by the broadcast multiply.
    """
    dtype = dtypes.as_dtype(dtype)
    with graph_mod.get_default_graph().name_scope(name or "random_gamma"):
        shape_t = random_ops._shape_tensor(shape)
        alpha = convert_to_tensor(alpha, dtype=dtype, name="alpha")
        if beta is not None:
            beta = convert_to_tensor(beta, dtype=dtype, name="beta")
            alpha = alpha * array_ops.ones_like(beta)
        raw = random_ops.RandomGamma(shape_t, alpha, **random_ops._seed_attrs(seed))
        partial = array_ops.stop_gradient(RandomGammaGrad(alpha, raw))
        offset = alpha - array_ops.stop_gradient(alpha)  # zero, with gradient one
        sample = raw + partial * offset
        if beta is not None:
            sample = sample / beta
        tiny = convert_to_tensor(np.finfo(dtype.as_numpy_dtype).tiny, dtype=dtype)
        return math_ops.maximum(tiny, sample)
