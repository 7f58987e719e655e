"""The Laplace (double exponential) distribution, reparameterized by inverse-CDF sampling."""

from __future__ import annotations

import math

import numpy as np

import tensorflux as tf
from tensorflux.distributions.location_scale import LocationScale

__all__ = ["Laplace"]


def _log_cdf_laplace(z):
    """log of the standard Laplace CDF, accurate in both tails."""
    lower = math.log(0.5) + z
    safe_exp = tf.exp(-tf.abs(z))
    upper = tf.log1p(-0.5 * safe_exp)
    return tf.where(z < 0.0, lower, upper)


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
        shape = tf.concat([[n], self.batch_shape_tensor()], 0)
        np_dtype = self.dtype.as_numpy_dtype
        # minval just above -1: log1p(-|u|) stays finite.
        minval = np.nextafter(np_dtype(-1.0), np_dtype(0.0))
        uniform = tf.random_uniform(shape, minval=minval, maxval=1.0, dtype=self.dtype,
                                    seed=seed)
        return self.loc - self.scale * tf.sign(uniform) * tf.log1p(-tf.abs(uniform))

    def _z(self, x):
        return (x - self.loc) / self.scale

    def _log_prob(self, x):
        return -tf.abs(self._z(x)) - (math.log(2.0) + tf.log(self.scale))

    def _prob(self, x):
        return 0.5 / self.scale * tf.exp(-tf.abs(self._z(x)))

    def _log_cdf(self, x):
        return _log_cdf_laplace(self._z(x))

    def _log_survival_function(self, x):
        return _log_cdf_laplace(-self._z(x))

    def _cdf(self, x):
        z = self._z(x)
        return 0.5 - 0.5 * tf.sign(z) * tf.expm1(-tf.abs(z))

    def _entropy(self):
        scale = self.scale + tf.zeros_like(self.loc)
        return math.log(2.0) + 1.0 + tf.log(scale)

    def _mean(self):
        return self.loc + tf.zeros_like(self.scale)

    def _stddev(self):
        return math.sqrt(2.0) * self.scale + tf.zeros_like(self.loc)

    def _median(self):
        return self._mean()

    def _mode(self):
        return self._mean()
