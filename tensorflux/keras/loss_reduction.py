"""`tf.keras.losses.Loss` (TF 1.13+): the loss object base class and its `Reduction` modes.

A loss object computes per-sample losses with `call(y_true, y_pred)`, weights them by
`sample_weight` (broadcast to the losses' shape) and reduces: `SUM_OVER_BATCH_SIZE` (also
`AUTO`) is the weighted sum divided by the number of loss elements, `SUM` the weighted sum,
`NONE` the weighted losses themselves.
"""

from __future__ import annotations

from tensorflux.framework import scopes, tensor_conversion
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops

__all__ = ["Reduction", "Loss", "LossFunctionWrapper", "compute_weighted_loss"]


class Reduction:
    """How a loss object reduces its weighted per-sample losses."""

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key):
        """Raises ValueError unless `key` is one of `Reduction.all()`."""
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}. Expected one of {cls.all()}.")


def _match_rank(weights, losses):
    """`weights` squeezed or expanded by one trailing axis to the rank of `losses`."""
    w_rank, l_rank = weights.get_shape().ndims, losses.get_shape().ndims
    if w_rank is None or l_rank is None:
        return weights
    if w_rank == l_rank + 1 and weights.get_shape().as_list()[-1] == 1:
        return array_ops.squeeze(weights, [-1])
    while w_rank < l_rank and w_rank > 0:
        weights = array_ops.expand_dims(weights, -1)
        w_rank += 1
    return weights


def compute_weighted_loss(losses, sample_weight=None, reduction=Reduction.SUM_OVER_BATCH_SIZE,
                          name=None):
    """`losses * sample_weight` reduced by `reduction` (AUTO is SUM_OVER_BATCH_SIZE)."""
    Reduction.validate(reduction)
    losses = tensor_conversion.convert_to_tensor(losses)
    # recorded for `tf.distribute.get_loss_reduction` (SUM losses are summed across replicas)
    losses.graph._loss_reduction = "sum" if reduction == Reduction.SUM else reduction
    if sample_weight is not None:
        weights = math_ops.cast(sample_weight, losses.dtype.base_dtype)
        losses = losses * _match_rank(weights, losses)
    if reduction == Reduction.NONE:
        return losses
    total = math_ops.reduce_sum(losses)
    if reduction == Reduction.SUM:
        return total
    return total / math_ops.cast(array_ops.size(losses), losses.dtype)


class Loss:
    """Base of loss objects: subclasses define `call(y_true, y_pred)` (per-sample losses).

    Args:
        reduction: one of `Reduction` (default AUTO: the mean over all loss elements).
        name: the name scope of the loss ops.
    """

    def __init__(self, reduction=Reduction.AUTO, name=None):
        Reduction.validate(reduction)
        self.reduction = reduction
        self.name = name

    def call(self, y_true, y_pred):
        raise NotImplementedError("Must be implemented in subclasses.")

    def __call__(self, y_true, y_pred, sample_weight=None):
        """The reduced weighted loss of (y_true, y_pred)."""
        with scopes.name_scope(self.name or type(self).__name__):
            losses = self.call(y_true, y_pred)
            return compute_weighted_loss(losses, sample_weight, self.reduction)

    def get_config(self):
        return {"reduction": self.reduction, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class LossFunctionWrapper(Loss):
    """A loss object around a per-sample function `fn(y_true, y_pred, **kwargs)`."""

    def __init__(self, fn, reduction=Reduction.AUTO, name=None, **kwargs):
        super().__init__(reduction=reduction, name=name)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        return dict(self._fn_kwargs, **super().get_config())
