"""`tf.contrib.seq2seq.sequence_loss` (and the `SequenceLoss` object): weighted cross-entropy
over [batch, time] targets."""

from __future__ import annotations

from tensorflux.framework import scopes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.math import casting as cast_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.nn import functions as nn_impl

__all__ = ["sequence_loss", "SequenceLoss"]


def sequence_loss(logits, targets, weights, average_across_timesteps=True,
                  average_across_batch=True, sum_over_timesteps=False, sum_over_batch=False,
                  softmax_loss_function=None, name=None):
    """Weighted cross-entropy of `logits` [batch, time, classes] for int `targets`
    [batch, time] with `weights` [batch, time].

    Averaging divides the weighted sum by the sum of the weights over the reduced axes;
    summing divides it by the number of non-zero weights (as TF 1.15 does). With no
    reduction the result is [batch, time]; with one it is [time] (over the batch) or
    [batch] (over time); with both a scalar.

    Raises:
        ValueError: wrong ranks, or averaging and summing requested for the same axis.
    """
    logits = convert_to_tensor(logits, name="logits")
    targets = convert_to_tensor(targets, name="targets")
    weights = convert_to_tensor(weights, name="weights")
    if logits.get_shape().ndims != 3:
        raise ValueError("Logits must be a [batch_size x sequence_length x logits] tensor")
    if targets.get_shape().ndims != 2:
        raise ValueError("Targets must be a [batch_size x sequence_length] tensor")
    if weights.get_shape().ndims != 2:
        raise ValueError("Weights must be a [batch_size x sequence_length] tensor")
    if average_across_timesteps and sum_over_timesteps:
        raise ValueError("average_across_timesteps and sum_over_timesteps cannot be set to "
                         "True at same time.")
    if average_across_batch and sum_over_batch:
        raise ValueError("average_across_batch and sum_over_batch cannot be set to True at "
                         "same time.")
    with scopes.name_scope(name, "sequence_loss", [logits, targets, weights]):
        num_classes = shape_ops.shape(logits)[2]
        logits_flat = shape_ops.reshape(logits, [-1, num_classes])
        flat_targets = shape_ops.reshape(targets, [-1])
        if softmax_loss_function is None:
            crossent = nn_impl.sparse_softmax_cross_entropy_with_logits(
                labels=flat_targets, logits=logits_flat)
        else:
            crossent = softmax_loss_function(labels=flat_targets, logits=logits_flat)
        crossent = crossent * shape_ops.reshape(weights, [-1])
        if average_across_timesteps and average_across_batch:
            return math_ops.div_no_nan(reduction_ops.reduce_sum(crossent),
                                       reduction_ops.reduce_sum(weights))
        if sum_over_timesteps and sum_over_batch:
            count = cast_ops.cast(reduction_ops.count_nonzero(weights), crossent.dtype)
            return math_ops.div_no_nan(reduction_ops.reduce_sum(crossent), count)
        crossent = shape_ops.reshape(crossent, shape_ops.shape(logits)[0:2])
        if average_across_timesteps or average_across_batch:
            axis = [0] if average_across_batch else [1]
            return math_ops.div_no_nan(reduction_ops.reduce_sum(crossent, axis=axis),
                                       reduction_ops.reduce_sum(weights, axis=axis))
        if sum_over_timesteps or sum_over_batch:
            axis = [0] if sum_over_batch else [1]
            count = cast_ops.cast(reduction_ops.count_nonzero(weights, axis=axis),
                                  crossent.dtype)
            return math_ops.div_no_nan(reduction_ops.reduce_sum(crossent, axis=axis), count)
        return crossent


class SequenceLoss:
    """`sequence_loss` as a loss object: `loss(y_true, y_pred, sample_weight)` (by default a
    weighted sum divided by the count of non-zero weights)."""

    def __init__(self, average_across_timesteps=False, average_across_batch=False,
                 sum_over_timesteps=True, sum_over_batch=True, softmax_loss_function=None,
                 name=None):
        self.average_across_timesteps = average_across_timesteps
        self.average_across_batch = average_across_batch
        self.sum_over_timesteps = sum_over_timesteps
        self.sum_over_batch = sum_over_batch
        self.softmax_loss_function = softmax_loss_function
        self.name = name

    def __call__(self, y_true, y_pred, sample_weight=None):
        """y_true: [batch, time] ids; y_pred: [batch, time, classes] logits."""
        if sample_weight is None:
            sample_weight = array_ops.ones_like(y_true, dtype=convert_to_tensor(y_pred).dtype)
        return sequence_loss(y_pred, y_true, sample_weight,
                             average_across_timesteps=self.average_across_timesteps,
                             average_across_batch=self.average_across_batch,
                             sum_over_timesteps=self.sum_over_timesteps,
                             sum_over_batch=self.sum_over_batch,
                             softmax_loss_function=self.softmax_loss_function, name=self.name)
