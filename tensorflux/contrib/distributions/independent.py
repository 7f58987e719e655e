"""`tf.contrib.distributions.Independent`: batch dimensions of a distribution read as event ones.

Contract (TF 1.15): the rightmost `reinterpreted_batch_ndims` batch dimensions of `distribution`
(default: all but the first) become event dimensions; `log_prob` and `entropy` sum the base's over
those axes, `prob` multiplies; samples and the moments are the base's. KL between two
Independents with the same event rank is the base KL summed over the reinterpreted axes.
"""

from __future__ import annotations

from tensorflux.distributions.distribution import Distribution
from tensorflux.distributions.kullback_leibler import RegisterKL, kl_divergence
from tensorflux.framework import scopes
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops

__all__ = ["Independent"]


class Independent(Distribution):
    """Reinterprets batch dimensions of `distribution` as event dimensions.

    Args:
        distribution: the base `Distribution`.
        reinterpreted_batch_ndims: how many rightmost batch dimensions become event dimensions
            (a non-negative Python int; default: all batch dimensions but the first).
        validate_args: see `Distribution`.
        name: name scope (default "Independent" + the base's name).

    Raises:
        ValueError: `reinterpreted_batch_ndims` is negative or exceeds the batch rank, or the
            default is asked for while the batch rank is unknown.

    Example:
        >>> pixels = tf.contrib.distributions.Independent(tf.distributions.Bernoulli(logits), 2)
        >>> pixels.log_prob(images)  # one value per image, summed over the 2 pixel axes
    """

    def __init__(self, distribution, reinterpreted_batch_ndims=None, validate_args=False,
                 name=None):
        parameters = dict(locals())
        name = name or "Independent" + distribution.name.rstrip("/").split("/")[-1]
        batch_rank = distribution.batch_shape.ndims
        if reinterpreted_batch_ndims is None:
            if batch_rank is None:
                raise ValueError("reinterpreted_batch_ndims=None needs a distribution of known "
                                 "batch rank.")
            reinterpreted_batch_ndims = max(0, batch_rank - 1)
        reinterpreted_batch_ndims = int(reinterpreted_batch_ndims)
        if reinterpreted_batch_ndims < 0:
            raise ValueError("reinterpreted_batch_ndims must be non-negative, saw "
                             f"{reinterpreted_batch_ndims}")
        if batch_rank is not None and reinterpreted_batch_ndims > batch_rank:
            raise ValueError(f"reinterpreted_batch_ndims({reinterpreted_batch_ndims}) cannot "
                             f"exceed distribution.batch_ndims({batch_rank})")
        self._distribution = distribution
        self._ndims = reinterpreted_batch_ndims
        with scopes.name_scope(name) as scope:
            name = scope
        super().__init__(dtype=distribution.dtype,
                         reparameterization_type=distribution.reparameterization_type,
                         validate_args=validate_args,
                         allow_nan_stats=distribution.allow_nan_stats,
                         parameters=parameters, graph_parents=distribution.graph_parents,
                         name=name)

    @property
    def distribution(self):
        """The base distribution."""
        return self._distribution

    @property
    def reinterpreted_batch_ndims(self) -> int:
        return self._ndims

    def _batch_shape(self):
        shape = self._distribution.batch_shape
        if shape.ndims is None:
            return shape
        return shape[:shape.ndims - self._ndims]

    def _batch_shape_tensor(self):
        shape = self._distribution.batch_shape_tensor()
        return shape[:array_ops.size(shape) - self._ndims]

    def _event_shape(self):
        shape = self._distribution.batch_shape
        if shape.ndims is None:
            return shape
        return shape[shape.ndims - self._ndims:].concatenate(self._distribution.event_shape)

    def _event_shape_tensor(self):
        shape = self._distribution.batch_shape_tensor()
        return array_ops.concat([shape[array_ops.size(shape) - self._ndims:],
                                 self._distribution.event_shape_tensor()], 0)

    def _sample_n(self, n, seed=None):
        return self._distribution.sample(n, seed=seed)

    def _log_prob(self, x):
        return self._sum_over_event(self._distribution.log_prob(x))

    def _prob(self, x):
        return self._prod_over_event(self._distribution.prob(x))

    def _sum_over_event(self, tensor):
        return tensor if self._ndims == 0 else math_ops.reduce_sum(
            tensor, axis=list(range(-self._ndims, 0)))

    def _prod_over_event(self, tensor):
        return tensor if self._ndims == 0 else math_ops.reduce_prod(
            tensor, axis=list(range(-self._ndims, 0)))

    def _entropy(self):
        return self._sum_over_event(self._distribution.entropy())

    def _mean(self):
        return self._distribution.mean()

    def _mode(self):
        return self._distribution.mode()

    def _stddev(self):
        return self._distribution.stddev()

    def _variance(self):
        return self._distribution.variance()


@RegisterKL(Independent, Independent)
def _kl_independent(a, b, name=None):
    """The base KL summed over the reinterpreted axes (equal event shapes required)."""
    if a.event_shape.ndims is not None and b.event_shape.ndims is not None and \
            a.event_shape.ndims != b.event_shape.ndims:
        raise ValueError(f"Event shapes do not match: {a.event_shape} vs {b.event_shape}")
    if a.reinterpreted_batch_ndims != b.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independents with different reinterpreted "
                                  "batch ndims is not implemented.")
    with scopes.name_scope(name, "kl_independent"):
        return a._sum_over_event(kl_divergence(a.distribution, b.distribution))
