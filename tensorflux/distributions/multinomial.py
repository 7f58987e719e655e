"""The Multinomial distribution: counts of `total_count` categorical draws over K classes."""

from __future__ import annotations

from tensorflux.distributions import util
from tensorflux.distributions.distribution import NOT_REPARAMETERIZED, Distribution
from tensorflux.framework import dtypes, scopes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.debug import checks as check_ops
from tensorflux.ops.nn import core as nn_core
from tensorflux.ops.random import stateful as random_ops

__all__ = ["Multinomial"]


def draw_counts(logits, counts, n, seed, dtype):
    """`[n, B, K]` class counts: for each of n samples and B rows, `counts[b]` categorical draws
    from `logits[b]` (logits `[B, K]`, counts `[B]` int32), one vectorised multinomial draw of
    max(counts) per row with the extra draws masked out."""
    k = array_ops.shape(logits)[-1]
    max_draws = math_ops.maximum(math_ops.reduce_max(array_ops.concat([counts, [0]], 0)), 0)
    rows = array_ops.tile(logits, [n, 1])
    draws = random_ops.multinomial(rows, max_draws, seed=seed, output_dtype=dtypes.int32)
    keep = math_ops.cast(array_ops.sequence_mask(array_ops.tile(counts, [n]), max_draws), dtype)
    one_hot = array_ops.one_hot(draws, depth=k, dtype=dtype)
    total = math_ops.reduce_sum(one_hot * keep[..., array_ops.newaxis], axis=-2)
    return array_ops.reshape(total, array_ops.stack([n, array_ops.shape(counts)[0], k]))


def check_counts(dist, counts):
    """With validate_args: `counts` are non-negative whole numbers summing to total_count."""
    if not dist.validate_args:
        return counts
    checks = util.check_nonnegative_integer_form(counts)
    checks.append(check_ops.assert_equal(dist.total_count, math_ops.reduce_sum(counts, -1),
                                         message="counts must sum to `self.total_count`"))
    return util.with_checks(checks, counts, "counts")


class Multinomial(Distribution):
    """Multinomial distributions over count vectors summing to `total_count`.

    Args:
        total_count: floating non-negative whole numbers: draws per distribution.
        logits: `[..., K]` unnormalized log-probabilities; exactly one of `logits`, `probs`.
        probs: `[..., K]` class probabilities summing to 1.
        validate_args: assert valid parameters and counts at run time.
        allow_nan_stats: see `Distribution`.
        name: name scope.

    Example:
        >>> tf.distributions.Multinomial(total_count=5., probs=[0.2, 0.3, 0.5]).mean()
    """

    def __init__(self, total_count, logits=None, probs=None, validate_args=False,
                 allow_nan_stats=True, name="Multinomial"):
        parameters = dict(locals())
        with scopes.name_scope(name, values=[total_count, logits, probs]) as name:
            self._logits, self._probs = util.get_logits_and_probs(
                logits=logits, probs=probs, multidimensional=True, validate_args=validate_args,
                name=name)
            total_count = convert_to_tensor(total_count, name="total_count",
                                            preferred_dtype=self._probs.dtype)
            if validate_args:
                total_count = util.with_checks(util.check_nonnegative_integer_form(
                    total_count, "total_count must be non-negative integers."), total_count,
                                               "total_count")
            self._total_count = total_count
            self._mean_val = self._total_count[..., array_ops.newaxis] * self._probs
        super().__init__(dtype=self._probs.dtype, reparameterization_type=NOT_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters,
                         graph_parents=[self._total_count, self._logits, self._probs],
                         name=name)

    @property
    def total_count(self):
        """Number of trials used to construct a sample."""
        return self._total_count

    @property
    def logits(self):
        """Vector of coordinatewise logits."""
        return self._logits

    @property
    def probs(self):
        """Probability of drawing a `1` in that coordinate."""
        return self._probs

    def _batch_shape_tensor(self):
        return array_ops.shape(self._mean_val)[:-1]

    def _batch_shape(self):
        return self._mean_val.shape.with_rank_at_least(1)[:-1]

    def _event_shape_tensor(self):
        return array_ops.shape(self._mean_val)[-1:]

    def _event_shape(self):
        return self._mean_val.shape.with_rank_at_least(1)[-1:]

    def _sample_n(self, n, seed=None):
        k = self.event_shape_tensor()[0]
        n_draws = math_ops.cast(self.total_count,
                                dtypes.int32) * array_ops.ones(self.batch_shape_tensor(),
                                                               dtypes.int32)
        logits = self.logits * array_ops.ones_like(self._mean_val)
        counts = draw_counts(array_ops.reshape(logits, array_ops.stack([-1, k])),
                             array_ops.reshape(n_draws, [-1]),
                             n, seed, self.dtype)
        return array_ops.reshape(counts, array_ops.concat([[n], self.batch_shape_tensor(), [k]], 0))

    def _log_prob(self, counts):
        counts = check_counts(self, counts)
        log_unnormalized = math_ops.reduce_sum(counts * nn_core.log_softmax(self.logits), -1)
        return log_unnormalized + util.log_combinations(self.total_count, counts)

    def _mean(self):
        return array_ops.identity(self._mean_val)

    def _variance(self):
        p = self.probs * array_ops.ones_like(self.total_count)[..., array_ops.newaxis]
        return self._mean_val - self._mean_val * p

    def _covariance(self):
        p = self.probs * array_ops.ones_like(self.total_count)[..., array_ops.newaxis]
        outer = -math_ops.matmul(self._mean_val[..., array_ops.newaxis],
                                 p[..., array_ops.newaxis, :])
        return array_ops.matrix_set_diag(outer, self._variance())
