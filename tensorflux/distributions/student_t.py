"""Student's t distribution (df, loc, scale), reparameterized: loc + scale * N / sqrt(G / df)."""

from __future__ import annotations

import math

import numpy as np

from tensorflux.distributions import util
from tensorflux.distributions.distribution import FULLY_REPARAMETERIZED, Distribution
from tensorflux.framework import dtypes, scopes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.debug import checks as check_ops
from tensorflux.ops.math import nan_safe as math_nan_safe
from tensorflux.ops.math import special as special_math_ops
from tensorflux.ops.random import stateful as random_ops
from tensorflux.ops.random.gamma import reparameterized_gamma

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t distributions with `df` degrees of freedom, location and scale.

    Args:
        df: floating positive degrees of freedom.
        loc: floating location (the mean when df > 1).
        scale: floating scale (not the standard deviation).
        validate_args: assert `df > 0` at run time.
        allow_nan_stats: when False, `mean`/`variance` assert `df > 1` instead of NaN.
        name: name scope.

    Example:
        >>> tf.distributions.StudentT(df=3., loc=0., scale=1.).variance()  # -> 3
    """

    def __init__(self, df, loc, scale, validate_args=False, allow_nan_stats=True,
                 name="StudentT"):
        parameters = dict(locals())
        with scopes.name_scope(name, values=[df, loc, scale]) as name:
            checks = [check_ops.assert_positive(df)] if validate_args else []
            with scopes.control_dependencies(checks):
                self._df = array_ops.identity(df, name="df")
                self._loc = array_ops.identity(loc, name="loc")
                self._scale = array_ops.identity(scale, name="scale")
                util.assert_same_float_dtype([self._df, self._loc, self._scale])
        super().__init__(dtype=self._scale.dtype, reparameterization_type=FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters,
                         graph_parents=[self._df, self._loc, self._scale], name=name)

    @staticmethod
    def _param_shapes(sample_shape):
        shape = convert_to_tensor(sample_shape, dtype=dtypes.int32)
        return {"df": shape, "loc": shape, "scale": shape}

    @property
    def df(self):
        """Degrees of freedom in these Student's t distribution(s)."""
        return self._df

    @property
    def loc(self):
        """Locations of these Student's t distribution(s)."""
        return self._loc

    @property
    def scale(self):
        """Scaling factors of these Student's t distribution(s)."""
        return self._scale

    def _batch_shape_tensor(self):
        return array_ops.broadcast_dynamic_shape(
            array_ops.shape(self.df), array_ops.broadcast_dynamic_shape(array_ops.shape(self.loc),
                                                                        array_ops.shape(self.scale)))

    def _batch_shape(self):
        return array_ops.broadcast_static_shape(
            array_ops.broadcast_static_shape(self.df.shape, self.loc.shape), self.scale.shape)

    def _ones(self):
        return array_ops.ones(self.batch_shape_tensor(), dtype=self.dtype)

    def _sample_n(self, n, seed=None):
        shape = array_ops.concat([[n], self.batch_shape_tensor()], 0)
        normal = random_ops.random_normal(shape, dtype=self.dtype, seed=seed)
        df = self.df * self._ones()
        gamma = reparameterized_gamma([n], 0.5 * df, beta=0.5, dtype=self.dtype,
                                      seed=util.gen_new_seed(seed, "student_t"))
        samples = normal * math_ops.rsqrt(gamma / df)
        return samples * self.scale + self.loc

    def _log_prob(self, x):
        y = (x - self.loc) / self.scale
        log_unnormalized = -0.5 * (self.df + 1.0) * math_ops.log1p(math_ops.square(y) / self.df)
        log_normalization = (math_ops.log(math_ops.abs(self.scale)) + 0.5 * math_ops.log(self.df)
                             + 0.5 * math.log(math.pi) + math_ops.lgamma(0.5 * self.df)
                             - math_ops.lgamma(0.5 * (self.df + 1.0)))
        return log_unnormalized - log_normalization

    def _cdf(self, x):
        y = (x - self.loc) / self.scale
        x_t = self.df / (math_ops.square(y) + self.df)
        half_df, x_t, y = util.broadcast_tensors(0.5 * self.df, x_t, y)
        neg_cdf = 0.5 * special_math_ops.betainc(half_df, 0.5 * array_ops.ones_like(x_t), x_t)
        return math_ops.where(y < 0.0, neg_cdf, 1.0 - neg_cdf)

    def _entropy(self):
        v = self._ones()[..., array_ops.newaxis]
        u = v * self.df[..., array_ops.newaxis]
        beta_arg = array_ops.concat([u, v], -1) / 2.0
        return (math_ops.log(math_ops.abs(self.scale)) + 0.5 * math_ops.log(self.df)
                + math_nan_safe.lbeta(beta_arg)
                + 0.5 * (self.df + 1.0) * (math_ops.digamma(0.5 * (self.df + 1.0))
                                           - math_ops.digamma(0.5 * self.df)))

    def _mean(self):
        mean = self.loc * self._ones()
        if self.allow_nan_stats:
            return util.nan_where(self.df * self._ones() > 1.0, mean, name="mean")
        check = check_ops.assert_less(array_ops.ones([], self.dtype), self.df,
                                      message="mean not defined for components of df <= 1")
        with scopes.control_dependencies([check]):
            return array_ops.identity(mean)

    def _variance(self):
        df = self.df * self._ones()
        denom = math_ops.where(df > 2.0, df - 2.0, array_ops.ones_like(df))
        inf = array_ops.fill(array_ops.shape(df), array_ops.constant(np.inf, self.dtype))
        var = math_ops.square(self.scale) * self._ones() * math_ops.where(df > 2.0, df / denom, inf)
        if self.allow_nan_stats:
            return util.nan_where(df > 1.0, var, name="variance")
        check = check_ops.assert_less(array_ops.ones([], self.dtype), self.df,
                                      message="variance not defined for components of df <= 1")
        with scopes.control_dependencies([check]):
            return array_ops.identity(var)

    def _mode(self):
        return array_ops.identity(self.loc * self._ones())
