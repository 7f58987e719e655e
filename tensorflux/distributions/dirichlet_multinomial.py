"""The Dirichlet-Multinomial compound: Multinomial counts with Dirichlet class probabilities."""

from __future__ import annotations

from tensorflux.distributions import util
from tensorflux.distributions.distribution import NOT_REPARAMETERIZED, Distribution
from tensorflux.distributions.multinomial import check_counts, draw_counts
from tensorflux.framework import dtypes, scopes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.debug import checks as check_ops
from tensorflux.ops.math import nan_safe as math_nan_safe
from tensorflux.ops.random import stateful as random_ops

__all__ = ["DirichletMultinomial"]


class DirichletMultinomial(Distribution):
    """Counts of `total_count` draws whose class probabilities follow Dirichlet(concentration).

    Args:
        total_count: floating non-negative whole numbers: draws per distribution.
        concentration: `[..., K]` positive floating Dirichlet parameters.
        validate_args: assert valid parameters and counts at run time.
        allow_nan_stats: see `Distribution`.
        name: name scope.

    Example:
        >>> tf.distributions.DirichletMultinomial(4., [1., 2., 3.]).mean()
    """

    def __init__(self, total_count, concentration, validate_args=False, allow_nan_stats=True,
                 name="DirichletMultinomial"):
        parameters = dict(locals())
        with scopes.name_scope(name, values=[total_count, concentration]) as name:
            concentration = convert_to_tensor(concentration, name="concentration")
            total_count = convert_to_tensor(total_count, name="total_count",
                                            preferred_dtype=concentration.dtype)
            if validate_args:
                total_count = util.with_checks(util.check_nonnegative_integer_form(
                    total_count, "total_count must be non-negative integers."), total_count,
                                               "total_count")
                concentration = util.with_checks(
                    [check_ops.assert_positive(concentration)],
                    util.embed_check_categorical_event_shape(concentration), "concentration")
            self._total_count = total_count
            self._concentration = concentration
            self._total_concentration = math_ops.reduce_sum(concentration, -1)
        super().__init__(dtype=self._concentration.dtype,
                         reparameterization_type=NOT_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters,
                         graph_parents=[self._total_count, self._concentration], name=name)

    @property
    def total_count(self):
        """Number of trials used to construct a sample."""
        return self._total_count

    @property
    def concentration(self):
        """Concentration parameter; expected prior counts for that coordinate."""
        return self._concentration

    @property
    def total_concentration(self):
        """Sum of last dim of concentration parameter."""
        return self._total_concentration

    def _batch_shape_tensor(self):
        return array_ops.broadcast_dynamic_shape(array_ops.shape(self.total_count),
                                                 array_ops.shape(self.total_concentration))

    def _batch_shape(self):
        return array_ops.broadcast_static_shape(self.total_count.shape,
                                                self.total_concentration.shape)

    def _event_shape_tensor(self):
        return array_ops.shape(self.concentration)[-1:]

    def _event_shape(self):
        return self.concentration.shape.with_rank_at_least(1)[-1:]

    def _sample_n(self, n, seed=None):
        k = self.event_shape_tensor()[0]
        batch = self.batch_shape_tensor()
        concentration = self.concentration * array_ops.ones(array_ops.concat([batch, [1]], 0),
                                                            self.dtype)
        gamma = random_ops.random_gamma([n], concentration, dtype=self.dtype, seed=seed)
        logits = array_ops.reshape(math_ops.log(gamma), array_ops.stack([-1, k]))
        n_draws = math_ops.cast(self.total_count, dtypes.int32) * array_ops.ones(batch,
                                                                                 dtypes.int32)
        n_draws = array_ops.tile(array_ops.reshape(n_draws, [-1]), [n])
        counts = draw_counts(logits, n_draws, 1, util.gen_new_seed(seed, "dirichlet_multinomial"),
                             self.dtype)
        return array_ops.reshape(counts, array_ops.concat([[n], batch, [k]], 0))

    def _log_prob(self, counts):
        counts = check_counts(self, counts)
        ordered = (math_nan_safe.lbeta(self.concentration + counts)
                   - math_nan_safe.lbeta(self.concentration))
        return ordered + util.log_combinations(self.total_count, counts)

    def _prob(self, counts):
        return math_ops.exp(self._log_prob(counts))

    def _mean(self):
        return self.total_count[..., array_ops.newaxis] * (
            self.concentration / self.total_concentration[..., array_ops.newaxis])

    def _spread(self):
        """(n + a0) / (1 + a0): the variance inflation over a Multinomial's."""
        n = self.total_count[..., array_ops.newaxis]
        a0 = self.total_concentration[..., array_ops.newaxis]
        return (n + a0) / (1.0 + a0)

    def _variance(self):
        p = self.concentration / self.total_concentration[..., array_ops.newaxis]
        return self._mean() * (1.0 - p) * self._spread()

    def _covariance(self):
        p = self.concentration / self.total_concentration[..., array_ops.newaxis]
        outer = -math_ops.matmul(self._mean()[..., array_ops.newaxis], p[..., array_ops.newaxis, :])
        outer = outer * self._spread()[..., array_ops.newaxis]
        return array_ops.matrix_set_diag(outer, self._variance())
