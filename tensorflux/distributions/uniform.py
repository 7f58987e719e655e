"""The continuous Uniform distribution on [low, high), reparameterized."""

from __future__ import annotations

import math

from tensorflux.distributions import util
from tensorflux.distributions.distribution import FULLY_REPARAMETERIZED, Distribution
from tensorflux.framework import dtypes, scopes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.debug import checks as check_ops
from tensorflux.ops.random import stateful as random_ops

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
        with scopes.name_scope(name, values=[low, high]) as name:
            low = convert_to_tensor(low)
            high = convert_to_tensor(high, preferred_dtype=low.dtype)
            checks = [check_ops.assert_less(low, high,
                                            message="uniform not defined when low >= high.")
                      ] if validate_args else []
            with scopes.control_dependencies(checks):
                self._low = array_ops.identity(low, name="low")
                self._high = array_ops.identity(high, name="high")
                util.assert_same_float_dtype([self._low, self._high])
        super().__init__(dtype=self._low.dtype, reparameterization_type=FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._low, self._high],
                         name=name)

    @staticmethod
    def _param_shapes(sample_shape):
        shape = convert_to_tensor(sample_shape, dtype=dtypes.int32)
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
        return array_ops.broadcast_dynamic_shape(array_ops.shape(self.low),
                                                 array_ops.shape(self.high))

    def _batch_shape(self):
        return array_ops.broadcast_static_shape(self.low.shape, self.high.shape)

    def _sample_n(self, n, seed=None):
        shape = array_ops.concat([[n], self.batch_shape_tensor()], 0)
        samples = random_ops.random_uniform(shape=shape, dtype=self.dtype, seed=seed)
        return self.low + self.range() * samples

    def _prob(self, x):
        broadcasted_x = x * array_ops.ones(self.batch_shape_tensor(), dtype=x.dtype)
        zeros = array_ops.zeros_like(broadcasted_x)
        density = array_ops.ones_like(broadcasted_x) / self.range()
        outside = math_ops.logical_or(broadcasted_x < self.low, broadcasted_x >= self.high)
        return math_ops.where(math_ops.is_nan(broadcasted_x), broadcasted_x,
                              math_ops.where(outside, zeros, density))

    def _cdf(self, x):
        broadcast_shape = array_ops.broadcast_dynamic_shape(array_ops.shape(x),
                                                            self.batch_shape_tensor())
        zeros = array_ops.zeros(broadcast_shape, dtype=self.dtype)
        ones = array_ops.ones(broadcast_shape, dtype=self.dtype)
        broadcasted_x = x * ones
        inside = (broadcasted_x - self.low) / self.range()
        return math_ops.where(broadcasted_x >= self.high, ones,
                              math_ops.where(broadcasted_x < self.low, zeros, inside))

    def _entropy(self):
        return math_ops.log(self.range())

    def _mean(self):
        return (self.low + self.high) / 2.0

    def _variance(self):
        return math_ops.square(self.range()) / 12.0

    def _stddev(self):
        return self.range() / math.sqrt(12.0)
