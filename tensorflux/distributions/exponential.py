"""The Exponential distribution: a Gamma with concentration 1 (inherits Gamma's KL)."""

from __future__ import annotations

import numpy as np

from tensorflux.distributions.gamma import Gamma
from tensorflux.framework import dtypes, scopes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.random import stateful as random_ops

__all__ = ["Exponential"]


class Exponential(Gamma):
    """Exponential distributions with density rate * exp(-rate * x), x >= 0.

    Args:
        rate: floating `rate > 0`.
        validate_args: assert `rate > 0` at run time.
        allow_nan_stats: see `Distribution`.
        name: name scope.

    Example:
        >>> tf.distributions.Exponential(rate=2.0).cdf(1.0)  # -> 1 - exp(-2)
    """

    def __init__(self, rate, validate_args=False, allow_nan_stats=True, name="Exponential"):
        parameters = dict(locals())
        with scopes.name_scope(name, values=[rate]) as name:
            self._rate = convert_to_tensor(rate, name="rate")
        super().__init__(concentration=array_ops.ones_like(self._rate, name="concentration"),
                         rate=self._rate, allow_nan_stats=allow_nan_stats,
                         validate_args=validate_args, name=name)
        self._parameters = {k: v for k, v in parameters.items()
                            if k not in ("self", "__class__")}
        self._graph_parents = [self._rate]

    @staticmethod
    def _param_shapes(sample_shape):
        return {"rate": convert_to_tensor(sample_shape, dtype=dtypes.int32)}

    @property
    def rate(self):
        return self._rate

    def _log_survival_function(self, value):
        return -self._rate * value

    def _cdf(self, value):
        return -math_ops.expm1(-self._rate * value)

    def _log_prob(self, value):
        value = self._check_x(value)
        return math_ops.log(self._rate) - self._rate * value

    def _sample_n(self, n, seed=None):
        shape = array_ops.concat([[n], array_ops.shape(self._rate)], 0)
        # minval: the smallest positive float, so that log never sees 0.
        sampled = random_ops.random_uniform(shape, minval=np.finfo(self.dtype.as_numpy_dtype).tiny,
                                            maxval=1.0, seed=seed, dtype=self.dtype)
        return -math_ops.log(sampled) / self._rate
