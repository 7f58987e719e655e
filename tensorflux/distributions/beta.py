"""The Beta distribution on (0, 1), sampled as G1 / (G1 + G0) of reparameterized gammas."""

from __future__ import annotations

import tensorflux as tf
from tensorflux.distributions import util
from tensorflux.distributions.distribution import FULLY_REPARAMETERIZED, Distribution
from tensorflux.distributions.kullback_leibler import RegisterKL
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
        with tf.name_scope(name, values=[concentration1, concentration0]) as name:
            c1 = tf.convert_to_tensor(concentration1, name="concentration1")
            c0 = tf.convert_to_tensor(concentration0, name="concentration0",
                                      preferred_dtype=c1.dtype)
            checks = [tf.assert_positive(c1), tf.assert_positive(c0)] if validate_args else []
            with tf.control_dependencies(checks):
                self._concentration1 = tf.identity(c1, name="concentration1")
                self._concentration0 = tf.identity(c0, name="concentration0")
            util.assert_same_float_dtype([self._concentration1, self._concentration0])
            self._total_concentration = self._concentration1 + self._concentration0
        super().__init__(dtype=self._total_concentration.dtype,
                         reparameterization_type=FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters,
                         graph_parents=[self._concentration1, self._concentration0], name=name)

    @staticmethod
    def _param_shapes(sample_shape):
        shape = tf.convert_to_tensor(sample_shape, dtype=tf.int32)
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
        return tf.shape(self.total_concentration)

    def _batch_shape(self):
        return self.total_concentration.shape

    def _sample_n(self, n, seed=None):
        expanded1 = tf.ones_like(self.total_concentration) * self.concentration1
        expanded0 = tf.ones_like(self.total_concentration) * self.concentration0
        gamma1 = reparameterized_gamma([n], expanded1, dtype=self.dtype, seed=seed)
        gamma2 = reparameterized_gamma([n], expanded0, dtype=self.dtype,
                                       seed=util.gen_new_seed(seed, "beta"))
        return gamma1 / (gamma1 + gamma2)

    def _check_x(self, x):
        if not self.validate_args:
            return x
        checks = [tf.assert_positive(x, message="sample must be positive"),
                  tf.assert_less(x, tf.ones([], self.dtype),
                                 message="sample must be less than `1`.")]
        return util.with_checks(checks, x, "x")

    def _log_normalization(self):
        return (tf.lgamma(self.concentration1) + tf.lgamma(self.concentration0)
                - tf.lgamma(self.total_concentration))

    def _log_prob(self, x):
        x = self._check_x(x)
        log_unnormalized = (tf.math.xlogy(self.concentration1 - 1.0, x)
                            + (self.concentration0 - 1.0) * tf.log1p(-x))
        return log_unnormalized - self._log_normalization()

    def _prob(self, x):
        return tf.exp(self._log_prob(x))

    def _cdf(self, x):
        x = self._check_x(x)
        c1, c0, x = util.broadcast_tensors(self.concentration1, self.concentration0, x)
        return tf.math.betainc(c1, c0, x)

    def _log_cdf(self, x):
        return tf.log(self._cdf(x))

    def _entropy(self):
        return (self._log_normalization()
                - (self.concentration1 - 1.0) * tf.digamma(self.concentration1)
                - (self.concentration0 - 1.0) * tf.digamma(self.concentration0)
                + (self.total_concentration - 2.0) * tf.digamma(self.total_concentration))

    def _mean(self):
        return self._concentration1 / self._total_concentration

    def _variance(self):
        mean = self._mean()
        return mean * (1.0 - mean) / (1.0 + self.total_concentration)

    def _mode(self):
        mode = (self.concentration1 - 1.0) / (self.total_concentration - 2.0)
        if self.allow_nan_stats:
            defined = tf.logical_and(self.concentration1 * tf.ones_like(mode) > 1.0,
                                     self.concentration0 * tf.ones_like(mode) > 1.0)
            return util.nan_where(defined, mode, name="mode")
        one = tf.ones([], self.dtype)
        checks = [tf.assert_less(one, self.concentration1,
                                 message="Mode undefined for concentration1 <= 1."),
                  tf.assert_less(one, self.concentration0,
                                 message="Mode undefined for concentration0 <= 1.")]
        with tf.control_dependencies(checks):
            return tf.identity(mode)


@RegisterKL(Beta, Beta)
def _kl_beta_beta(d1, d2, name=None):
    """KL(d1 || d2) from the log-normalizers and digammas of d1's concentrations."""
    with tf.name_scope(name, "kl_beta_beta", values=[d1.concentration1, d1.concentration0,
                                                     d2.concentration1, d2.concentration0]):
        return (d2._log_normalization() - d1._log_normalization()
                + (d1.concentration1 - d2.concentration1) * tf.digamma(d1.concentration1)
                + (d1.concentration0 - d2.concentration0) * tf.digamma(d1.concentration0)
                + (d2.total_concentration - d1.total_concentration)
                * tf.digamma(d1.total_concentration))
