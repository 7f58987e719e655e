"""The Categorical distribution over class indices {0, ..., K - 1} (the last axis of logits)."""

from __future__ import annotations

from tensorflux.distributions import util
from tensorflux.distributions.distribution import NOT_REPARAMETERIZED, Distribution
from tensorflux.distributions.kullback_leibler import RegisterKL
from tensorflux.framework import dtypes, scopes
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import core as nn_core
from tensorflux.ops.nn import functions as nn_functions
from tensorflux.ops.random import stateful as random_ops

__all__ = ["Categorical"]


class Categorical(Distribution):
    """Categorical distributions: P[X = k] = softmax(logits)[..., k] = probs[..., k].

    Args:
        logits: `[..., K]` unnormalized log-probabilities; exactly one of `logits`, `probs`.
        probs: `[..., K]` probabilities summing to 1 over the last axis.
        dtype: the type of samples (default int32).
        validate_args: assert that `probs` is non-negative and sums to 1.
        allow_nan_stats: see `Distribution`.
        name: name scope.

    Example:
        >>> tf.distributions.Categorical(logits=[0.0, 1.0, 2.0]).sample(5, seed=1)
    """

    def __init__(self, logits=None, probs=None, dtype=dtypes.int32, validate_args=False,
                 allow_nan_stats=True, name="Categorical"):
        parameters = dict(locals())
        with scopes.name_scope(name, values=[logits, probs]) as name:
            self._logits, self._probs = util.get_logits_and_probs(
                logits=logits, probs=probs, validate_args=validate_args, multidimensional=True,
                name=name)
            static_rank = self._logits.shape.ndims
            if static_rank is not None and static_rank < 1:
                raise ValueError("logits/probs must have rank at least 1, got a scalar.")
            with scopes.name_scope("event_size"):
                last = self._logits.shape._dim_list[-1] if static_rank is not None else None
                if last is not None:
                    self._event_size = array_ops.constant(int(last), dtype=dtypes.int32,
                                                          name="event_size")
                else:
                    self._event_size = array_ops.shape(self._logits)[-1]
        super().__init__(dtype=dtype, reparameterization_type=NOT_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._logits, self._probs],
                         name=name)

    @property
    def event_size(self):
        """Scalar int32 tensor: the number of classes."""
        return self._event_size

    @property
    def logits(self):
        """Vector of coordinatewise logits."""
        return self._logits

    @property
    def probs(self):
        """Vector of coordinatewise probabilities."""
        return self._probs

    def _batch_shape_tensor(self):
        return array_ops.shape(self.logits)[:-1]

    def _batch_shape(self):
        return self.logits.shape[:-1]

    def _sample_n(self, n, seed=None):
        logits_2d = array_ops.reshape(self.logits, [-1, self.event_size])
        sample_dtype = dtypes.int64 if self.dtype.size > 4 else dtypes.int32
        draws = random_ops.multinomial(logits_2d, n, seed=seed, output_dtype=sample_dtype)
        draws = array_ops.reshape(array_ops.transpose(draws),
                                  array_ops.concat([[n], self.batch_shape_tensor()], 0))
        return math_ops.cast(draws, self.dtype)

    def _broadcast_k(self, k):
        """`k` as int32 and the logits, broadcast against each other's batch shapes."""
        k = math_ops.cast(k, dtypes.int32)
        logits = self.logits
        if not (k.shape.is_fully_defined() and logits.shape.is_fully_defined()
                and k.shape == logits.shape[:-1]):
            logits = logits * array_ops.ones_like(array_ops.expand_dims(k, -1), dtype=logits.dtype)
            k = k * array_ops.ones(array_ops.shape(logits)[:-1], dtype=k.dtype)
            k.set_shape(logits.shape[:-1])
        return k, logits

    def _cdf(self, k):
        """P[X < k]: the sum of the probabilities of the classes below k (as TF1)."""
        k, logits = self._broadcast_k(k)
        probs = nn_core.softmax(logits)
        flat_probs = array_ops.reshape(probs, [-1, self.event_size])
        flat_k = array_ops.reshape(k, [-1])
        to_sum = math_ops.where(array_ops.sequence_mask(flat_k, self.event_size), flat_probs,
                                array_ops.zeros_like(flat_probs))
        return array_ops.reshape(math_ops.reduce_sum(to_sum, axis=-1), array_ops.shape(k))

    def _log_prob(self, k):
        k, logits = self._broadcast_k(k)
        return -nn_functions.sparse_softmax_cross_entropy_with_logits(labels=k, logits=logits)

    def _entropy(self):
        return -math_ops.reduce_sum(nn_core.log_softmax(self.logits) * self.probs, axis=-1)

    def _mode(self):
        ret = math_ops.cast(math_ops.argmax(self.logits, axis=-1), self.dtype)
        ret.set_shape(self.batch_shape)
        return ret


@RegisterKL(Categorical, Categorical)
def _kl_categorical_categorical(a, b, name=None):
    """sum_k p_a(k) (log p_a(k) - log p_b(k)), from log-softmaxes of the logits."""
    with scopes.name_scope(name, "kl_categorical_categorical", values=[a.logits, b.logits]):
        delta_log_probs = nn_core.log_softmax(a.logits) - nn_core.log_softmax(b.logits)
        return math_ops.reduce_sum(nn_core.softmax(a.logits) * delta_log_probs, axis=-1)
