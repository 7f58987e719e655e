"""The Bernoulli distribution over {0, 1}, parameterized by `logits` or `probs`."""

from __future__ import annotations

from tensorflux.distributions import util
from tensorflux.distributions.distribution import NOT_REPARAMETERIZED, Distribution
from tensorflux.distributions.kullback_leibler import RegisterKL
from tensorflux.framework import dtypes, scopes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.debug import checks as check_ops
from tensorflux.ops.nn import activations
from tensorflux.ops.nn import functions as nn_functions
from tensorflux.ops.random import stateful as random_ops

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

    def __init__(self, logits=None, probs=None, dtype=dtypes.int32, validate_args=False,
                 allow_nan_stats=True, name="Bernoulli"):
        parameters = dict(locals())
        with scopes.name_scope(name) as name:
            self._logits, self._probs = util.get_logits_and_probs(
                logits=logits, probs=probs, validate_args=validate_args, name=name)
        super().__init__(dtype=dtype, reparameterization_type=NOT_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._logits, self._probs],
                         name=name)

    @staticmethod
    def _param_shapes(sample_shape):
        return {"logits": convert_to_tensor(sample_shape, dtype=dtypes.int32)}

    @property
    def logits(self):
        """Log-odds of drawing a 1."""
        return self._logits

    @property
    def probs(self):
        """Probability of drawing a 1."""
        return self._probs

    def _batch_shape_tensor(self):
        return array_ops.shape(self._logits)

    def _batch_shape(self):
        return self._logits.shape

    def _sample_n(self, n, seed=None):
        shape = array_ops.concat([[n], self.batch_shape_tensor()], 0)
        uniform = random_ops.random_uniform(shape, seed=seed, dtype=self.probs.dtype)
        return math_ops.cast(math_ops.less(uniform, self.probs), self.dtype)

    def _log_prob(self, event):
        if self.validate_args:
            event = util.with_checks(
                [check_ops.assert_equal(math_ops.cast(math_ops.cast(event, dtypes.bool_),
                                                      event.dtype), event,
                                        message="event must be 0 or 1")], event, "event")
        event = math_ops.cast(event, self.logits.dtype)
        logits = self.logits
        if not (event.shape.is_fully_defined() and logits.shape.is_fully_defined()
                and event.shape == logits.shape):
            logits = array_ops.ones_like(event) * logits
            event = array_ops.ones_like(logits) * event
        return -nn_functions.sigmoid_cross_entropy_with_logits(labels=event, logits=logits)

    def _entropy(self):
        return (-self.logits * (math_ops.sigmoid(self.logits) - 1.0)
                + activations.softplus(-self.logits))

    def _mean(self):
        return array_ops.identity(self.probs)

    def _variance(self):
        return self._mean() * (1.0 - self.probs)

    def _mode(self):
        return math_ops.cast(self.probs > 0.5, self.dtype)


@RegisterKL(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(a, b, name=None):
    """KL(a || b) in terms of logits, stable for probabilities near 0 and 1."""
    with scopes.name_scope(name, "kl_bernoulli_bernoulli", values=[a.logits, b.logits]):
        delta_probs0 = activations.softplus(-b.logits) - activations.softplus(-a.logits)
        delta_probs1 = activations.softplus(b.logits) - activations.softplus(a.logits)
        return (math_ops.sigmoid(a.logits) * delta_probs0
                + math_ops.sigmoid(-a.logits) * delta_probs1)
