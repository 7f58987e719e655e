"""The Beta distribution on (0, 1), sampled as G1 / (G1 + G0) of reparameterized gammas."""

from __future__ import annotations

from tensorflux.distributions import util
from tensorflux.distributions.distribution import FULLY_REPARAMETERIZED, Distribution
from tensorflux.distributions.kullback_leibler import RegisterKL
from tensorflux.framework import dtypes, scopes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.debug import checks as check_ops
from tensorflux.ops.math import nan_safe as math_nan_safe
from tensorflux.ops.math import special as special_math_ops
from tensorflux.ops.random.gamma import reparameterized_gamma

__all__ = ["Beta"]


class Beta(Distribution):
    """Beta distributions: density x^(c1 - 1) (1 - x)^(c0 - 1) / B(c1, c0) on (0, 1).

    Args:
        concentration1: floating `c1 > 0` (the "alpha", pulls mass towards 1).
        concentration0: floating `c0 > 0` (the "beta", pulls mass towards 0).
        validate_args: assert positive parameters, and `0 < x < 1` in log_prob.
        allow_nan_stats: when False, `mode` asserts both concentrations exceed 1.
        name: name scope.

    Example:
        >>> tf.distributions.Beta(2.0, 3.0).mean()  # -> 0.4
    """

    def __init__(self, concentration1=None, concentration0=None, validate_args=False,
                 allow_nan_stats=True, name="Beta"):
        parameters = dict(locals())
        with scopes.name_scope(name, values=[concentration1, concentration0]) as name:
            c1 = convert_to_tensor(concentration1, name="concentration1")
            c0 = convert_to_tensor(concentration0, name="concentration0",
                                   preferred_dtype=c1.dtype)
            checks = [check_ops.assert_positive(c1),
                      check_ops.assert_positive(c0)] if validate_args else []
            with scopes.control_dependencies(checks):
                self._concentration1 = array_ops.identity(c1, name="concentration1")
                self._concentration0 = array_ops.identity(c0, name="concentration0")
            util.assert_same_float_dtype([self._concentration1, self._concentration0])
            self._total_concentration = self._concentration1 + self._concentration0
        super().__init__(dtype=self._total_concentration.dtype,
                         reparameterization_type=FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters,
                         graph_parents=[self._concentration1, self._concentration0], name=name)

    @staticmethod
    def _param_shapes(sample_shape):
        shape = convert_to_tensor(sample_shape, dtype=dtypes.int32)
        return {"concentration1": shape, "concentration0": shape}

    @property
    def concentration1(self):
        """Concentration parameter associated with a `1` outcome."""
        return self._concentration1

    @property
    def concentration0(self):
        """Concentration parameter associated with a `0` outcome."""
        return self._concentration0

    @property
    def total_concentration(self):
        """Sum of concentration parameters."""
        return self._total_concentration

    def _batch_shape_tensor(self):
        return array_ops.shape(self.total_concentration)

    def _batch_shape(self):
        return self.total_concentration.shape

    def _sample_n(self, n, seed=None):
        expanded1 = array_ops.ones_like(self.total_concentration) * self.concentration1
        expanded0 = array_ops.ones_like(self.total_concentration) * self.concentration0
        gamma1 = reparameterized_gamma([n], expanded1, dtype=self.dtype, seed=seed)
        gamma2 = reparameterized_gamma([n], expanded0, dtype=self.dtype,
                                       seed=util.gen_new_seed(seed, "beta"))
        return gamma1 / (gamma1 + gamma2)

    def _check_x(self, x):
        if not self.validate_args:
            return x
        checks = [check_ops.assert_positive(x, message="sample must be positive"),
                  check_ops.assert_less(x, array_ops.ones([], self.dtype),
                                        message="sample must be less than `1`.")]
        return util.with_checks(checks, x, "x")

    def _log_normalization(self):
        return (math_ops.lgamma(self.concentration1) + math_ops.lgamma(self.concentration0)
                - math_ops.lgamma(self.total_concentration))

    def _log_prob(self, x):
        x = self._check_x(x)
        log_unnormalized = (math_nan_safe.xlogy(self.concentration1 - 1.0, x)
                            + (self.concentration0 - 1.0) * math_ops.log1p(-x))
        return log_unnormalized - self._log_normalization()

    def _prob(self, x):
        return math_ops.exp(self._log_prob(x))

    def _cdf(self, x):
        x = self._check_x(x)
        c1, c0, x = util.broadcast_tensors(self.concentration1, self.concentration0, x)
        return special_math_ops.betainc(c1, c0, x)

    def _log_cdf(self, x):
        return math_ops.log(self._cdf(x))

    def _entropy(self):
        return (self._log_normalization()
                - (self.concentration1 - 1.0) * math_ops.digamma(self.concentration1)
                - (self.concentration0 - 1.0) * math_ops.digamma(self.concentration0)
                + (self.total_concentration - 2.0) * math_ops.digamma(self.total_concentration))

    def _mean(self):
        return self._concentration1 / self._total_concentration

    def _variance(self):
        mean = self._mean()
        return mean * (1.0 - mean) / (1.0 + self.total_concentration)

    def _mode(self):
        mode = (self.concentration1 - 1.0) / (self.total_concentration - 2.0)
        if self.allow_nan_stats:
            defined = math_ops.logical_and(self.concentration1 * array_ops.ones_like(mode) > 1.0,
                                           self.concentration0 * array_ops.ones_like(mode) > 1.0)
            return util.nan_where(defined, mode, name="mode")
        one = array_ops.ones([], self.dtype)
        checks = [check_ops.assert_less(one, self.concentration1,
                                        message="Mode undefined for concentration1 <= 1."),
                  check_ops.assert_less(one, self.concentration0,
                                        message="Mode undefined for concentration0 <= 1.")]
        with scopes.control_dependencies(checks):
            return array_ops.identity(mode)


@RegisterKL(Beta, Beta)
def _kl_beta_beta(d1, d2, name=None):
    """KL(d1 || d2) from the log-normalizers and digammas of d1's concentrations."""
    with scopes.name_scope(name, "kl_beta_beta", values=[d1.concentration1, d1.concentration0,
                                                         d2.concentration1, d2.concentration0]):
        return (d2._log_normalization() - d1._log_normalization()
                + (d1.concentration1 - d2.concentration1) * math_ops.digamma(d1.concentration1)
                + (d1.concentration0 - d2.concentration0) * math_ops.digamma(d1.concentration0)
                + (d2.total_concentration - d1.total_concentration)
                * math_ops.digamma(d1.total_concentration))
