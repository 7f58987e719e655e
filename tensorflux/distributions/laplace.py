"""The Laplace (double exponential) distribution, reparameterized by inverse-CDF sampling."""

from __future__ import annotations

import math

import numpy as np

from tensorflux.distributions.location_scale import LocationScale
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.random import stateful as random_ops

__all__ = ["Laplace"]


def _log_cdf_laplace(z):
    """log of the standard Laplace CDF, accurate in both tails."""
    lower = math.log(0.5) + z
    safe_exp = math_ops.exp(-math_ops.abs(z))
    upper = math_ops.log1p(-0.5 * safe_exp)
    return math_ops.where(z < 0.0, lower, upper)


class Laplace(LocationScale):
    """Laplace distributions: density exp(-|x - loc| / scale) / (2 scale).

    Args:
        loc: floating location (mean, median, mode).
        scale: floating positive scale.
        validate_args: assert `scale > 0` at run time.
        allow_nan_stats: see `Distribution`.
        name: name scope.

    Example:
        >>> tf.distributions.Laplace(loc=0., scale=1.).cdf(0.)  # -> 0.5
    """

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True, name="Laplace"):
        super().__init__(loc, scale, validate_args, allow_nan_stats, name, dict(locals()))

    def _sample_n(self, n, seed=None):
        shape = array_ops.concat([[n], self.batch_shape_tensor()], 0)
        np_dtype = self.dtype.as_numpy_dtype
        # minval just above -1: log1p(-|u|) stays finite.
        minval = np.nextafter(np_dtype(-1.0), np_dtype(0.0))
        uniform = random_ops.random_uniform(shape, minval=minval, maxval=1.0, dtype=self.dtype,
                                            seed=seed)
        return self.loc - (self.scale * math_ops.sign(uniform)
                           * math_ops.log1p(-math_ops.abs(uniform)))

    def _z(self, x):
        return (x - self.loc) / self.scale

    def _log_prob(self, x):
        return -math_ops.abs(self._z(x)) - (math.log(2.0) + math_ops.log(self.scale))

    def _prob(self, x):
        return 0.5 / self.scale * math_ops.exp(-math_ops.abs(self._z(x)))

    def _log_cdf(self, x):
        return _log_cdf_laplace(self._z(x))

    def _log_survival_function(self, x):
        return _log_cdf_laplace(-self._z(x))

    def _cdf(self, x):
        z = self._z(x)
        return 0.5 - 0.5 * math_ops.sign(z) * math_ops.expm1(-math_ops.abs(z))

    def _entropy(self):
        scale = self.scale + array_ops.zeros_like(self.loc)
        return math.log(2.0) + 1.0 + math_ops.log(scale)

    def _mean(self):
        return self.loc + array_ops.zeros_like(self.scale)

    def _stddev(self):
        return math.sqrt(2.0) * self.scale + array_ops.zeros_like(self.loc)

    def _median(self):
        return self._mean()

    def _mode(self):
        return self._mean()
