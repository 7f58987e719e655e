"""`tf.losses`: weighted losses added to the LOSSES collection, and total-loss helpers.

Every loss computes per-element losses, multiplies them by `weights` (broadcast), reduces them
with `reduction` (default SUM_BY_NONZERO_WEIGHTS: the sum divided by the number of non-zero
weights, as TF1) and adds the result to `loss_collection`.
"""

from __future__ import annotations

from tensorflux.framework.tensor_conversion import convert_to_tensor as _convert_to_tensor
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework import dtypes as _dtypes
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.ops import array as _array_ops
from tensorflux.ops import math as _math_ops
from tensorflux.ops.nn import core as _nn_core
from tensorflux.ops.nn import functions as _nn_functions
from tensorflux.ops.nn import activations as _nn_activations
from tensorflux.ops.control_flow import primitives as _control_flow
from tensorflux.ops.math import weights_broadcast as _weights_broadcast



class Reduction:
    """How per-element losses are reduced."""

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_OVER_NONZERO_WEIGHTS, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}.")


def _safe_div(numerator, denominator):
    """numerator / denominator, 0 where the denominator is 0; named `value` as in TF, so a
    loss is fetched as `<scope>/value:0`."""
    return _math_ops.div_no_nan(numerator, _math_ops.cast(denominator, numerator.dtype.base_dtype),
                         name="value")


def _checked_weights(weights):
    if weights is None:
        raise ValueError("None values not supported (weights must be a number or a Tensor).")
    return weights


def _squeeze_labels(labels, logits, weights):
    """TF's `_remove_squeezable_dimensions(expected_rank_diff=1)`: [N, 1] class ids become [N]
    (and weights of one more rank than the labels lose their last dimension)."""
    labels = _convert_to_tensor(labels)
    logits = _convert_to_tensor(logits)
    labels_rank, logits_rank = labels.shape.ndims, logits.shape.ndims
    if labels_rank is not None and logits_rank is not None:
        if logits_rank - labels_rank == 0 and labels.shape[-1].is_compatible_with(1):
            labels = _array_ops.squeeze(labels, [-1])
    elif labels_rank is None or logits_rank is None:
        same_rank = _math_ops.equal(_array_ops.rank(logits), _array_ops.rank(labels))
        labels = _control_flow.cond(same_rank, lambda: _array_ops.squeeze(labels, [-1]),
                                    lambda: labels)
    weights = _convert_to_tensor(_checked_weights(weights))
    weights_rank = weights.shape.ndims
    if weights_rank == 0:
        return labels, logits, weights
    if labels.shape.ndims is not None and weights_rank is not None:
        if weights_rank - labels.shape.ndims == 1:
            weights = _array_ops.squeeze(weights, [-1])
    elif weights_rank is None or weights.shape[-1].is_compatible_with(1):
        rank_diff = _array_ops.rank(weights) - _array_ops.rank(labels)
        weights = _control_flow.cond(_math_ops.equal(1, rank_diff),
                                     lambda: _array_ops.squeeze(weights, [-1]), lambda: weights)
    return labels, logits, weights


def _num_present(losses, weights):
    present = _math_ops.where(_math_ops.equal(weights, 0.0), _array_ops.zeros_like(weights),
                              _array_ops.ones_like(weights))
    present = present * _array_ops.ones_like(losses)
    return _math_ops.reduce_sum(present)


def _reduce_weighted(losses, weights, reduction):
    weighted = _math_ops.multiply(losses, weights)
    if reduction == Reduction.NONE:
        return weighted
    loss = _math_ops.reduce_sum(weighted)
    if reduction == Reduction.MEAN:
        return _safe_div(loss, _math_ops.reduce_sum(_array_ops.ones_like(losses) * weights))
    if reduction in (Reduction.SUM_BY_NONZERO_WEIGHTS, Reduction.SUM_OVER_NONZERO_WEIGHTS):
        return _safe_div(loss, _num_present(losses, weights))
    if reduction == Reduction.SUM_OVER_BATCH_SIZE:
        return _safe_div(loss, _math_ops.cast(_array_ops.size(losses), loss.dtype))
    return loss


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Weights, reduces and collects per-element `losses`."""
    Reduction.validate(reduction)
    graph = graph_mod.get_default_graph()
    with graph.name_scope(scope or "weighted_loss"):
        losses = _convert_to_tensor(losses)
        weights = _convert_to_tensor(_checked_weights(weights))
        check = _weights_broadcast.assert_broadcastable(weights, losses)
        dtype = losses.dtype.base_dtype
        losses = _math_ops.cast(losses, _dtypes.float32) if dtype != _dtypes.float64 else losses
        weights = _math_ops.cast(weights, losses.dtype.base_dtype)
        with graph.control_dependencies([check]):
            loss = _reduce_weighted(losses, weights, reduction)
        loss = _math_ops.cast(loss, dtype) if dtype != loss.dtype.base_dtype and dtype.is_floating \
            else loss
        if loss_collection is not None:
            graph.add_to_collection(loss_collection, loss)
        # how this loss combines across replicas: a SUM loss is summed, others averaged
        # (`tf.distribute.get_loss_reduction`; TF records the last loss's reduction)
        graph._loss_reduction = "sum" if reduction == Reduction.SUM else reduction
        return loss


def add_loss(loss, loss_collection=GraphKeys.LOSSES):
    if loss_collection is not None:
        graph_mod.get_default_graph().add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES):
    return graph_mod.get_default_graph().get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    return graph_mod.get_default_graph().get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    losses = get_regularization_losses(scope)
    if losses:
        return _math_ops.add_n(losses, name=name)
    return _array_ops.constant(0.0)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum of the collected losses (and regularization losses)."""
    losses = get_losses(scope)
    if add_regularization_losses:
        losses = losses + get_regularization_losses(scope)
    if not losses:
        raise ValueError("No losses found in the LOSSES / REGULARIZATION_LOSSES collections.")
    return _math_ops.add_n(losses, name=name)



def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    with _scope(scope, "softmax_cross_entropy_loss") as name:
        logits = _convert_to_tensor(logits)
        labels = _math_ops.cast(onehot_labels, logits.dtype.base_dtype)
        if label_smoothing > 0:
            classes = _math_ops.cast(_array_ops.shape(labels)[-1], logits.dtype.base_dtype)
            labels = labels * (1 - label_smoothing) + label_smoothing / classes
        logits.shape.assert_is_compatible_with(labels.shape)
        losses = _nn_functions.softmax_cross_entropy_with_logits_v2(
            labels=_array_ops.stop_gradient(labels), logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    with _scope(scope, "sparse_softmax_cross_entropy_loss") as name:
        labels, logits, weights = _squeeze_labels(labels, logits, weights)
        losses = _nn_functions.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0,
                          scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    with _scope(scope, "sigmoid_cross_entropy_loss") as name:
        logits = _convert_to_tensor(logits)
        labels = _math_ops.cast(multi_class_labels, logits.dtype.base_dtype)
        if label_smoothing > 0:
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        logits.shape.assert_is_compatible_with(labels.shape)
        losses = _nn_functions.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                                 name="xentropy")
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def mean_squared_error(labels, predictions, weights=1.0, scope=None,
                       loss_collection=GraphKeys.LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    with _scope(scope, "mean_squared_error") as name:
        predictions = _convert_to_tensor(predictions)
        labels = _math_ops.cast(labels, predictions.dtype.base_dtype)
        predictions.shape.assert_is_compatible_with(labels.shape)
        losses = _math_ops.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def absolute_difference(labels, predictions, weights=1.0, scope=None,
                        loss_collection=GraphKeys.LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    with _scope(scope, "absolute_difference") as name:
        predictions = _convert_to_tensor(predictions)
        labels = _math_ops.cast(labels, predictions.dtype.base_dtype)
        predictions.shape.assert_is_compatible_with(labels.shape)
        losses = _math_ops.abs(predictions - labels)
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None,
               loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """0.5 x^2 for |x| <= delta, else 0.5 delta^2 + delta (|x| - delta)."""
    with _scope(scope, "huber_loss") as name:
        predictions = _convert_to_tensor(predictions)
        labels = _math_ops.cast(labels, predictions.dtype.base_dtype)
        predictions.shape.assert_is_compatible_with(labels.shape)
        error = _math_ops.abs(predictions - labels)
        quadratic = _math_ops.minimum(error, delta)
        linear = error - quadratic
        losses = 0.5 * quadratic * quadratic + delta * linear
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None,
             loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    with _scope(scope, "log_loss") as name:
        predictions = _convert_to_tensor(predictions)
        labels = _math_ops.cast(labels, predictions.dtype.base_dtype)
        predictions.shape.assert_is_compatible_with(labels.shape)
        losses = -_math_ops.multiply(labels,
                                     _math_ops.log(predictions + epsilon)) - _math_ops.multiply(
            1 - labels, _math_ops.log(1 - predictions + epsilon))
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    with _scope(scope, "hinge_loss") as name:
        logits = _convert_to_tensor(logits)
        labels = _math_ops.cast(labels, logits.dtype.base_dtype)
        logits.shape.assert_is_compatible_with(labels.shape)
        signed = 2 * labels - 1
        losses = _nn_activations.relu(1 - signed * logits)
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None,
                    loss_collection=GraphKeys.LOSSES,
                    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS, dim=None):
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("You must specify 'axis'.")
    with _scope(scope, "cosine_distance_loss") as name:
        predictions = _convert_to_tensor(predictions)
        labels = _math_ops.cast(labels, predictions.dtype.base_dtype)
        predictions.shape.assert_is_compatible_with(labels.shape)
        losses = 1 - _math_ops.reduce_sum(labels * predictions, axis=(axis,), keepdims=True)
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope=None,
                                loss_collection=GraphKeys.LOSSES):
    """TF's pairwise loss: per sample, the mean over pairs (i < j) of
    ((p_i - l_i) - (p_j - l_j))^2 over the present (non-zero weight) elements, times the
    sample's weight, summed over the batch. Inputs are cast to float32 (as TF does)."""
    with _scope(scope, "mean_pairwise_squared_error"):
        weights = _math_ops.cast(_checked_weights(weights), _dtypes.float32)
        labels = _math_ops.cast(labels, _dtypes.float32)
        predictions = _math_ops.cast(predictions, _dtypes.float32)
        predictions.shape.assert_is_compatible_with(labels.shape)
        check = _weights_broadcast.assert_broadcastable(weights, labels)
        with graph_mod.get_default_graph().control_dependencies([check]):
            diffs = predictions - labels
            axis = _math_ops.range(1, _array_ops.rank(diffs))
            present = _math_ops.where(_math_ops.equal(weights, 0.0),
                                      _array_ops.zeros_like(weights),
                                      _array_ops.ones_like(weights)) * _array_ops.ones_like(diffs)
            count = _math_ops.reduce_sum(present, axis=axis, keepdims=True)
            sum_sq = _math_ops.reduce_sum(_math_ops.square(diffs), axis=axis, keepdims=True)
            term1 = 2.0 * _math_ops.div_no_nan(sum_sq, count - 1, name="value")
            sum_diff = _math_ops.reduce_sum(diffs, axis=axis, keepdims=True)
            term2 = 2.0 * _math_ops.div_no_nan(_math_ops.square(sum_diff), count * (count - 1),
                                               name="value")
            loss = _math_ops.reduce_sum((term1 - term2) * weights)
            mean_loss = _math_ops.where(_math_ops.reduce_sum(count) > 0, loss,
                                        _array_ops.zeros_like(loss), name="value")
            if loss_collection is not None:
                graph_mod.get_default_graph().add_to_collection(loss_collection, mean_loss)
            return mean_loss
