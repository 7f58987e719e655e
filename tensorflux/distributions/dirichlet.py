"""The Dirichlet distribution over the simplex (the last axis), sampled by normalized gammas."""

from __future__ import annotations

import numpy as np

from tensorflux.distributions import util
from tensorflux.distributions.distribution import FULLY_REPARAMETERIZED, Distribution
from tensorflux.distributions.kullback_leibler import RegisterKL
from tensorflux.framework import dtypes, scopes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.debug import checks as check_ops
from tensorflux.ops.math import nan_safe as math_nan_safe
from tensorflux.ops.random.gamma import reparameterized_gamma

__all__ = ["Dirichlet"]


class Dirichlet(Distribution):
    """Dirichlet distributions: density prod_j x_j^(c_j - 1) / B(c) on the simplex.

    Args:
        concentration: `[..., K]` floating, positive; the last axis is the event.
        validate_args: assert positive concentrations with K >= 2, and that `x` in log_prob
            is positive and sums to 1.
        allow_nan_stats: when False, `mode` asserts every concentration exceeds 1.
        name: name scope.

    Example:
        >>> tf.distributions.Dirichlet([1.0, 2.0, 3.0]).mean()  # -> [1/6, 1/3, 1/2]
    """

    def __init__(self, concentration, validate_args=False, allow_nan_stats=True,
                 name="Dirichlet"):
        parameters = dict(locals())
        with scopes.name_scope(name, values=[concentration]) as name:
            concentration = convert_to_tensor(concentration, name="concentration")
            checks = []
            if validate_args:
                util.embed_check_categorical_event_shape(concentration)
                checks = [check_ops.assert_positive(concentration), check_ops.assert_rank_at_least(
                    concentration, 1)]
            self._concentration = util.with_checks(checks, concentration, "concentration")
            util.assert_same_float_dtype([self._concentration])
            self._total_concentration = math_ops.reduce_sum(self._concentration, -1)
        super().__init__(dtype=self._concentration.dtype,
                         reparameterization_type=FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._concentration], name=name)

    @property
    def concentration(self):
        """Concentration parameter; expected counts for that coordinate."""
        return self._concentration

    @property
    def total_concentration(self):
        """Sum of last dim of concentration parameter."""
        return self._total_concentration

    def _batch_shape_tensor(self):
        return array_ops.shape(self.total_concentration)

    def _batch_shape(self):
        return self.total_concentration.shape

    def _event_shape_tensor(self):
        return array_ops.shape(self.concentration)[-1:]

    def _event_shape(self):
        return self.concentration.shape.with_rank_at_least(1)[-1:]

    def _event_size(self):
        return math_ops.cast(array_ops.shape(self.concentration)[-1], self.dtype)

    def _sample_n(self, n, seed=None):
        gamma_sample = reparameterized_gamma([n], self.concentration, dtype=self.dtype,
                                             seed=seed)
        return gamma_sample / math_ops.reduce_sum(gamma_sample, -1, keepdims=True)

    def _check_x(self, x):
        if not self.validate_args:
            return x
        tolerance = 10 * np.finfo(self.dtype.as_numpy_dtype).eps
        checks = [check_ops.assert_positive(x, message="samples must be positive"),
                  check_ops.assert_less_equal(math_ops.abs(math_ops.reduce_sum(x, -1) - 1.0),
                                              array_ops.constant(tolerance, self.dtype),
                                              message="sample last-dimension must sum to `1`")]
        return util.with_checks(checks, x, "x")

    def _log_prob(self, x):
        x = self._check_x(x)
        log_unnormalized = math_ops.reduce_sum(math_nan_safe.xlogy(self.concentration - 1.0, x), -1)
        return log_unnormalized - math_nan_safe.lbeta(self.concentration)

    def _prob(self, x):
        return math_ops.exp(self._log_prob(x))

    def _entropy(self):
        k = self._event_size()
        return (math_nan_safe.lbeta(self.concentration)
                + (self.total_concentration - k) * math_ops.digamma(self.total_concentration)
                - math_ops.reduce_sum(
                    (self.concentration - 1.0) * math_ops.digamma(self.concentration), -1))

    def _mean(self):
        return self.concentration / self.total_concentration[..., array_ops.newaxis]

    def _variance_scale(self):
        return 1.0 / (1.0 + self.total_concentration[..., array_ops.newaxis])

    def _covariance(self):
        mean = self._mean()
        scale = self._variance_scale()
        outer = -math_ops.matmul(mean[..., array_ops.newaxis], mean[..., array_ops.newaxis, :])
        return array_ops.matrix_set_diag(scale[..., array_ops.newaxis] * outer, self._variance())

    def _variance(self):
        mean = self._mean()
        return self._variance_scale() * mean * (1.0 - mean)

    def _mode(self):
        k = self._event_size()
        mode = (self.concentration - 1.0) / (self.total_concentration[..., array_ops.newaxis] - k)
        if self.allow_nan_stats:
            defined = math_ops.reduce_all(self.concentration > 1.0, axis=-1, keepdims=True)
            defined = math_ops.logical_and(defined, array_ops.ones_like(mode, dtype=dtypes.bool_))
            return util.nan_where(defined, mode, name="mode")
        check = check_ops.assert_less(array_ops.ones([], self.dtype), self.concentration,
                                      message="Mode undefined when any concentration <= 1")
        with scopes.control_dependencies([check]):
            return array_ops.identity(mode)


@RegisterKL(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(d1, d2, name=None):
    """KL(d1 || d2) = sum (c1 - c2)(digamma(c1) - digamma(sum c1)) - lbeta(c1) + lbeta(c2)."""
    with scopes.name_scope(name, "kl_dirichlet_dirichlet",
                           values=[d1.concentration, d2.concentration]):
        digamma_sum = math_ops.digamma(math_ops.reduce_sum(d1.concentration, -1, keepdims=True))
        digamma_diff = math_ops.digamma(d1.concentration) - digamma_sum
        concentration_diff = d1.concentration - d2.concentration
        return (math_ops.reduce_sum(concentration_diff * digamma_diff, -1)
                - math_nan_safe.lbeta(d1.concentration) + math_nan_safe.lbeta(d2.concentration))
