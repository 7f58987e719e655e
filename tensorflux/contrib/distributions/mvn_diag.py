"""`tf.contrib.distributions.MultivariateNormalDiag`: multivariate normals with a diagonal scale.

Contract (TF 1.15): `loc` `[..., k]` and `scale_diag` `[..., k]` (optionally times a scalar
`scale_identity_multiplier`; either alone is allowed, the other defaults to zeros / ones) broadcast
to the batch shape `[...]`; the event shape is `[k]`. Samples are `loc + scale_diag * N(0, 1)`
(reparameterized). `log_prob`, `entropy` and the KL between two of them are the sums over the
event axis of the matching univariate normal quantities.
"""

from __future__ import annotations

import math

from tensorflux.distributions import util
from tensorflux.distributions.distribution import FULLY_REPARAMETERIZED, Distribution
from tensorflux.distributions.kullback_leibler import RegisterKL
from tensorflux.framework import scopes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.debug import checks as check_ops
from tensorflux.ops.random import stateful as random_ops

__all__ = ["MultivariateNormalDiag"]


class MultivariateNormalDiag(Distribution):
    """Multivariate normals `N(loc, diag(scale_diag)^2)` over the last axis.

    Args:
        loc: floating `[..., k]` means (default zeros).
        scale_diag: floating `[..., k]` positive diagonal of the scale (default ones).
        scale_identity_multiplier: optional floating scalar multiplying the scale.
        validate_args: assert a positive scale at run time.
        allow_nan_stats: see `Distribution`.
        name: name scope.

    Raises:
        ValueError: neither `loc` nor `scale_diag` is given, or the event size is unknown.

    Example:
        >>> mvn = tf.contrib.distributions.MultivariateNormalDiag([0., 1.], [1., 2.])
        >>> mvn.log_prob([[0.5, 0.5]])  # shape [1]
    """

    def __init__(self, loc=None, scale_diag=None, scale_identity_multiplier=None,
                 validate_args=False, allow_nan_stats=True, name="MultivariateNormalDiag"):
        parameters = dict(locals())
        if loc is None and scale_diag is None:
            raise ValueError("MultivariateNormalDiag needs `loc` or `scale_diag` (the event "
                             "size comes from their last dimension).")
        with scopes.name_scope(name, values=[loc, scale_diag,
                                             scale_identity_multiplier]) as name:
            loc = None if loc is None else convert_to_tensor(loc, name="loc")
            scale = None if scale_diag is None else convert_to_tensor(
                scale_diag, name="scale_diag", preferred_dtype=None if loc is None else loc.dtype)
            if loc is None:
                loc = array_ops.zeros_like(scale, name="loc")
            if scale is None:
                scale = array_ops.ones_like(loc, name="scale_diag")
            if scale_identity_multiplier is not None:
                scale = scale * convert_to_tensor(scale_identity_multiplier, dtype=scale.dtype,
                                                  name="scale_identity_multiplier")
            util.assert_same_float_dtype([loc, scale])
            checks = [check_ops.assert_positive(
                scale, message="Singular operator: Diagonal contained non-positive entries")
            ] if validate_args else []
            with scopes.control_dependencies(checks):
                self._loc = array_ops.identity(loc, name="loc")
                self._scale_diag = array_ops.identity(scale, name="scale_diag")
        event = self._loc.shape.with_rank_at_least(1)[-1:].merge_with(
            self._scale_diag.shape.with_rank_at_least(1)[-1:])
        self._static_event = event
        super().__init__(dtype=self._loc.dtype, reparameterization_type=FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._loc, self._scale_diag],
                         name=name)

    @property
    def loc(self):
        """The means, `[..., k]`."""
        return self._loc

    @property
    def scale_diag(self):
        """The diagonal of the scale, `[..., k]`."""
        return self._scale_diag

    def _full(self, tensor):
        return tensor * array_ops.ones_like(self._loc + self._scale_diag)

    def _batch_shape(self):
        return array_ops.broadcast_static_shape(self._loc.shape[:-1],
                                                self._scale_diag.shape[:-1])

    def _batch_shape_tensor(self):
        return array_ops.shape(self._full(self._loc))[:-1]

    def _event_shape(self):
        return self._static_event

    def _event_shape_tensor(self):
        return array_ops.shape(self._full(self._loc))[-1:]

    def _sample_n(self, n, seed=None):
        loc = self._full(self._loc)
        shape = array_ops.concat([[n], array_ops.shape(loc)], 0)
        eps = random_ops.random_normal(shape, dtype=self.dtype, seed=seed)
        return loc + self._scale_diag * eps

    def _log_prob(self, x):
        z = (x - self._loc) / self._scale_diag
        per_dim = -0.5 * math_ops.square(z) - math_ops.log(self._scale_diag) \
            - 0.5 * math.log(2.0 * math.pi)
        return math_ops.reduce_sum(per_dim, axis=-1)

    def _entropy(self):
        log_scale = math_ops.log(self._full(self._scale_diag))
        return math_ops.reduce_sum(log_scale + 0.5 * (1.0 + math.log(2.0 * math.pi)), axis=-1)

    def _mean(self):
        return self._full(self._loc)

    def _mode(self):
        return self._full(self._loc)

    def _stddev(self):
        return self._full(self._scale_diag)

    def _variance(self):
        return math_ops.square(self._full(self._scale_diag))

    def _covariance(self):
        return array_ops.matrix_diag(self._variance())


@RegisterKL(MultivariateNormalDiag, MultivariateNormalDiag)
def _kl_mvn_diag(a, b, name=None):
    """KL(a || b) = sum_k [(s_a/s_b)^2 + ((m_b - m_a)/s_b)^2 - 1 - 2 log(s_a/s_b)] / 2."""
    with scopes.name_scope(name, "kl_mvn_diag", [a.loc, b.loc]):
        ratio = a.scale_diag / b.scale_diag
        gap = (b.loc - a.loc) / b.scale_diag
        per_dim = 0.5 * (math_ops.square(ratio) + math_ops.square(gap) - 1.0) \
            - math_ops.log(ratio)
        return math_ops.reduce_sum(per_dim, axis=-1)
