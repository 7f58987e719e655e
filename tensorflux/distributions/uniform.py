"""The continuous Uniform distribution on [low, high), reparameterized."""

from __future__ import annotations

import math

import tensorflux as tf
from tensorflux.distributions import util
from tensorflux.distributions.distribution import FULLY_REPARAMETERIZED, Distribution

__all__ = ["Uniform"]


class Uniform(Distribution):
    """Uniform distributions with density 1 / (high - low) on [low, high).

    Args:
        low: floating lower bounds (included).
        high: floating upper bounds (excluded); `low < high`.
        validate_args: assert `low < high` at run time.
        allow_nan_stats: see `Distribution`.
        name: name scope.

    Example:
        >>> tf.distributions.Uniform(low=0.0, high=[1.0, 2.0]).sample(3, seed=1)
    """

    def __init__(self, low=0.0, high=1.0, validate_args=False, allow_nan_stats=True,
                 name="Uniform"):
        parameters = dict(locals())
        with tf.name_scope(name, values=[low, high]) as name:
            low = tf.convert_to_tensor(low)
            high = tf.convert_to_tensor(high, preferred_dtype=low.dtype)
            checks = [tf.assert_less(low, high, message="uniform not defined when low >= high.")
                      ] if validate_args else []
            with tf.control_dependencies(checks):
                self._low = tf.identity(low, name="low")
                self._high = tf.identity(high, name="high")
                util.assert_same_float_dtype([self._low, self._high])
        super().__init__(dtype=self._low.dtype, reparameterization_type=FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._low, self._high],
                         name=name)

    @staticmethod
    def _param_shapes(sample_shape):
        shape = tf.convert_to_tensor(sample_shape, dtype=tf.int32)
        return {"low": shape, "high": shape}

    @property
    def low(self):
        """Lower boundary of the output interval."""
        return self._low

    @property
    def high(self):
        """Upper boundary of the output interval."""
        return self._high

    def range(self, name="range"):
        """`high - low`."""
        with self._name_scope(name):
            return self.high - self.low

    def _batch_shape_tensor(self):
        return tf.broadcast_dynamic_shape(tf.shape(self.low), tf.shape(self.high))

    def _batch_shape(self):
        return tf.broadcast_static_shape(self.low.shape, self.high.shape)

    def _sample_n(self, n, seed=None):
        shape = tf.concat([[n], self.batch_shape_tensor()], 0)
        samples = tf.random_uniform(shape=shape, dtype=self.dtype, seed=seed)
        return self.low + self.range() * samples

    def _prob(self, x):
        broadcasted_x = x * tf.ones(self.batch_shape_tensor(), dtype=x.dtype)
        zeros = tf.zeros_like(broadcasted_x)
        density = tf.ones_like(broadcasted_x) / self.range()
        outside = tf.logical_or(broadcasted_x < self.low, broadcasted_x >= self.high)
        return tf.where(tf.is_nan(broadcasted_x), broadcasted_x,
                        tf.where(outside, zeros, density))

    def _cdf(self, x):
        broadcast_shape = tf.broadcast_dynamic_shape(tf.shape(x), self.batch_shape_tensor())
        zeros = tf.zeros(broadcast_shape, dtype=self.dtype)
        ones = tf.ones(broadcast_shape, dtype=self.dtype)
        broadcasted_x = x * ones
        inside = (broadcasted_x - self.low) / self.range()
        return tf.where(broadcasted_x >= self.high, ones,
                        tf.where(broadcasted_x < self.low, zeros, inside))

    def _entropy(self):
        return tf.log(self.range())

    def _mean(self):
        return (self.low + self.high) / 2.0

    def _variance(self):
        return tf.square(self.range()) / 12.0

    def _stddev(self):
        return self.range() / math.sqrt(12.0)
