"""The Bernoulli distribution over {0, 1}, parameterized by `logits` or `probs`."""

from __future__ import annotations

import tensorflux as tf
from tensorflux.distributions import util
from tensorflux.distributions.distribution import NOT_REPARAMETERIZED, Distribution
from tensorflux.distributions.kullback_leibler import RegisterKL

__all__ = ["Bernoulli"]


class Bernoulli(Distribution):
    """Bernoulli distributions: P[X = 1] = probs = sigmoid(logits).

    Args:
        logits: floating log-odds; exactly one of `logits` and `probs` is given.
        probs: floating probabilities of 1, in [0, 1].
        dtype: the type of samples (default int32).
        validate_args: assert `0 <= probs <= 1` at run time.
        allow_nan_stats: see `Distribution`.
        name: name scope.

    Raises:
        ValueError: both or neither of `logits` and `probs` are given.

    Example:
        >>> tf.distributions.Bernoulli(probs=0.3).sample(10, seed=1)
    """

    def __init__(self, logits=None, probs=None, dtype=tf.int32, validate_args=False,
                 allow_nan_stats=True, name="Bernoulli"):
        parameters = dict(locals())
        with tf.name_scope(name) as name:
            self._logits, self._probs = util.get_logits_and_probs(
                logits=logits, probs=probs, validate_args=validate_args, name=name)
        super().__init__(dtype=dtype, reparameterization_type=NOT_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._logits, self._probs],
                         name=name)

    @staticmethod
    def _param_shapes(sample_shape):
        return {"logits": tf.convert_to_tensor(sample_shape, dtype=tf.int32)}

    @property
    def logits(self):
        """Log-odds of drawing a 1."""
        return self._logits

    @property
    def probs(self):
        """Probability of drawing a 1."""
        return self._probs

    def _batch_shape_tensor(self):
        return tf.shape(self._logits)

    def _batch_shape(self):
        return self._logits.shape

    def _sample_n(self, n, seed=None):
        shape = tf.concat([[n], self.batch_shape_tensor()], 0)
        uniform = tf.random_uniform(shape, seed=seed, dtype=self.probs.dtype)
        return tf.cast(tf.less(uniform, self.probs), self.dtype)

    def _log_prob(self, event):
        if self.validate_args:
            event = util.with_checks(
                [tf.assert_equal(tf.cast(tf.cast(event, tf.bool), event.dtype), event,
                                 message="event must be 0 or 1")], event, "event")
        event = tf.cast(event, self.logits.dtype)
        logits = self.logits
        if not (event.shape.is_fully_defined() and logits.shape.is_fully_defined()
                and event.shape == logits.shape):
            logits = tf.ones_like(event) * logits
            event = tf.ones_like(logits) * event
        return -tf.nn.sigmoid_cross_entropy_with_logits(labels=event, logits=logits)

    def _entropy(self):
        return -self.logits * (tf.sigmoid(self.logits) - 1.0) + tf.nn.softplus(-self.logits)

    def _mean(self):
        return tf.identity(self.probs)

    def _variance(self):
        return self._mean() * (1.0 - self.probs)

    def _mode(self):
        return tf.cast(self.probs > 0.5, self.dtype)


@RegisterKL(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(a, b, name=None):
    """KL(a || b) in terms of logits, stable for probabilities near 0 and 1."""
    with tf.name_scope(name, "kl_bernoulli_bernoulli", values=[a.logits, b.logits]):
        delta_probs0 = tf.nn.softplus(-b.logits) - tf.nn.softplus(-a.logits)
        delta_probs1 = tf.nn.softplus(b.logits) - tf.nn.softplus(a.logits)
        return tf.sigmoid(a.logits) * delta_probs0 + tf.sigmoid(-a.logits) * delta_probs1
