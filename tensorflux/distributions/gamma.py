"""The Gamma distribution (concentration alpha, rate beta) and its KL divergence.

Samples are reparameterized through RandomGammaGrad (implicit derivative of the draw).
"""

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

__all__ = ["Gamma"]


class Gamma(Distribution):
    """Gamma distributions: density x^(alpha - 1) e^(-beta x) beta^alpha / Gamma(alpha), x > 0.

    Args:
        concentration: floating `alpha > 0`.
        rate: floating `beta > 0` (inverse scale).
        validate_args: assert positive parameters, and positive `x` in log_prob.
        allow_nan_stats: when False, `mode` asserts `concentration > 1` instead of NaN.
        name: name scope.

    Example:
        >>> tf.distributions.Gamma(concentration=3.0, rate=2.0).mean()  # -> 1.5
    """

    def __init__(self, concentration, rate, validate_args=False, allow_nan_stats=True,
                 name="Gamma"):
        parameters = dict(locals())
        with scopes.name_scope(name, values=[concentration, rate]) as name:
            checks = [check_ops.assert_positive(concentration), check_ops.assert_positive(rate)
                      ] if validate_args else []
            with scopes.control_dependencies(checks):
                self._concentration = array_ops.identity(concentration, name="concentration")
                self._rate = array_ops.identity(rate, name="rate")
                util.assert_same_float_dtype([self._concentration, self._rate])
        super().__init__(dtype=self._concentration.dtype,
                         reparameterization_type=FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters,
                         graph_parents=[self._concentration, self._rate], name=name)

    @staticmethod
    def _param_shapes(sample_shape):
        shape = convert_to_tensor(sample_shape, dtype=dtypes.int32)
        return {"concentration": shape, "rate": shape}

    @property
    def concentration(self):
        """Concentration parameter (alpha)."""
        return self._concentration

    @property
    def rate(self):
        """Rate parameter (beta)."""
        return self._rate

    def _batch_shape_tensor(self):
        return array_ops.broadcast_dynamic_shape(array_ops.shape(self.concentration),
                                                 array_ops.shape(self.rate))

    def _batch_shape(self):
        return array_ops.broadcast_static_shape(self.concentration.shape, self.rate.shape)

    def _sample_n(self, n, seed=None):
        return reparameterized_gamma(shape=[n], alpha=self.concentration, beta=self.rate,
                                     dtype=self.dtype, seed=seed)

    def _check_x(self, x):
        if not self.validate_args:
            return x
        return util.with_checks([check_ops.assert_positive(x)], x, "x")

    def _log_prob(self, x):
        x = self._check_x(x)
        log_unnormalized = math_nan_safe.xlogy(self.concentration - 1.0, x) - self.rate * x
        log_normalization = math_ops.lgamma(self.concentration) - \
            self.concentration * math_ops.log(self.rate)
        return log_unnormalized - log_normalization

    def _cdf(self, x):
        x = self._check_x(x)
        concentration, scaled_x = util.broadcast_tensors(self.concentration, self.rate * x)
        return special_math_ops.igamma(concentration, scaled_x)

    def _entropy(self):
        return (self.concentration - math_ops.log(self.rate) + math_ops.lgamma(self.concentration)
                + (1.0 - self.concentration) * math_ops.digamma(self.concentration))

    def _mean(self):
        return self.concentration / self.rate

    def _variance(self):
        return self.concentration / math_ops.square(self.rate)

    def _stddev(self):
        return math_ops.sqrt(self.concentration) / self.rate

    def _mode(self):
        mode = (self.concentration - 1.0) / self.rate
        if self.allow_nan_stats:
            return util.nan_where(self.concentration * array_ops.ones_like(mode) > 1.0, mode,
                                  name="mode")
        one = array_ops.ones([], self.dtype)
        check = check_ops.assert_less(one, self.concentration,
                                      message="mode not defined when any concentration <= 1")
        with scopes.control_dependencies([check]):
            return array_ops.identity(mode)


@RegisterKL(Gamma, Gamma)
def _kl_gamma_gamma(g0, g1, name=None):
    """KL(g0 || g1) in closed form from digamma and lgamma of the concentrations."""
    with scopes.name_scope(name, "kl_gamma_gamma",
                           values=[g0.concentration, g0.rate, g1.concentration, g1.rate]):
        return ((g0.concentration - g1.concentration) * math_ops.digamma(g0.concentration)
                + math_ops.lgamma(g1.concentration) - math_ops.lgamma(g0.concentration)
                + g1.concentration * math_ops.log(g0.rate)
                - g1.concentration * math_ops.log(g1.rate)
                + g0.concentration * (g1.rate / g0.rate - 1.0))
