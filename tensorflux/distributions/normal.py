"""The Normal (Gaussian) distribution, reparameterized: samples are loc + scale * N(0, 1)."""

from __future__ import annotations

import math

from tensorflux.distributions import util
from tensorflux.distributions.kullback_leibler import RegisterKL
from tensorflux.distributions.location_scale import LocationScale
from tensorflux.framework import scopes
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.math import nan_safe as math_nan_safe
from tensorflux.ops.random import stateful as random_ops

__all__ = ["Normal"]


class Normal(LocationScale):
    """Normal distributions with mean `loc` and standard deviation `scale` (broadcast).

    Args:
        loc: floating tensor of means.
        scale: floating tensor of standard deviations (must be positive).
        validate_args: assert `scale > 0` at run time.
        allow_nan_stats: see `Distribution`.
        name: name scope.

    Example:
        >>> dist = tf.distributions.Normal(loc=0.0, scale=[1.0, 2.0])
        >>> dist.log_prob(1.0)  # shape [2]
    """

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True, name="Normal"):
        super().__init__(loc, scale, validate_args, allow_nan_stats, name, dict(locals()))

    def _sample_n(self, n, seed=None):
        shape = array_ops.concat([[n], self.batch_shape_tensor()], 0)
        sampled = random_ops.random_normal(shape, mean=0.0, stddev=1.0, dtype=self.loc.dtype,
                                           seed=seed)
        return sampled * self.scale + self.loc

    def _z(self, x):
        with scopes.name_scope("standardize", values=[x]):
            return (x - self.loc) / self.scale

    def _log_prob(self, x):
        log_normalization = 0.5 * math.log(2.0 * math.pi) + math_ops.log(self.scale)
        return -0.5 * math_ops.square(self._z(x)) - log_normalization

    def _log_cdf(self, x):
        return util.log_ndtr(self._z(x))

    def _cdf(self, x):
        return util.ndtr(self._z(x))

    def _log_survival_function(self, x):
        return util.log_ndtr(-self._z(x))

    def _survival_function(self, x):
        return util.ndtr(-self._z(x))

    def _quantile(self, p):
        return math_nan_safe.ndtri(p) * self.scale + self.loc

    def _entropy(self):
        scale = self.scale * array_ops.ones_like(self.loc)
        return 0.5 * math.log(2.0 * math.pi * math.e) + math_ops.log(scale)

    def _mean(self):
        return self.loc * array_ops.ones_like(self.scale)

    def _stddev(self):
        return self.scale * array_ops.ones_like(self.loc)

    def _mode(self):
        return self._mean()


@RegisterKL(Normal, Normal)
def _kl_normal_normal(n_a, n_b, name=None):
    """KL(n_a || n_b) = (mu_a - mu_b)^2 / (2 s_b^2) + (r - 1 - log r) / 2, r = s_a^2 / s_b^2."""
    with scopes.name_scope(name, "kl_normal_normal", [n_a.loc, n_b.loc]):
        s_a_squared = math_ops.square(n_a.scale)
        s_b_squared = math_ops.square(n_b.scale)
        ratio = s_a_squared / s_b_squared
        return (math_ops.square(n_a.loc - n_b.loc) / (2.0 * s_b_squared)
                + 0.5 * (ratio - 1.0 - math_ops.log(ratio)))
