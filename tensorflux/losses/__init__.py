"""`tf.losses`: weighted losses added to the LOSSES collection, and total-loss helpers.

Every loss computes per-element losses, multiplies them by `weights` (broadcast), reduces them
with `reduction` (default SUM_BY_NONZERO_WEIGHTS: the sum divided by the number of non-zero
weights, as TF1) and adds the result to `loss_collection`.
"""

from __future__ import annotations

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys


def _api():
    import tensorflux

    return tensorflux


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


def _safe_div(tf, numerator, denominator):
    """numerator / denominator, 0 where the denominator is 0; named `value` as in TF, so a
    loss is fetched as `<scope>/value:0`."""
    return tf.div_no_nan(numerator, tf.cast(denominator, numerator.dtype.base_dtype),
                         name="value")


def _checked_weights(weights):
    if weights is None:
        raise ValueError("None values not supported (weights must be a number or a Tensor).")
    return weights


def _squeeze_labels(tf, labels, logits, weights):
    """TF's `_remove_squeezable_dimensions(expected_rank_diff=1)`: [N, 1] class ids become [N]
    (and weights of one more rank than the labels lose their last dimension)."""
    labels = tf.convert_to_tensor(labels)
    logits = tf.convert_to_tensor(logits)
    labels_rank, logits_rank = labels.shape.ndims, logits.shape.ndims
    if labels_rank is not None and logits_rank is not None:
        if logits_rank - labels_rank == 0 and labels.shape[-1].is_compatible_with(1):
            labels = tf.squeeze(labels, [-1])
    elif labels_rank is None or logits_rank is None:
        labels = tf.cond(tf.equal(tf.rank(logits), tf.rank(labels)),
                         lambda: tf.squeeze(labels, [-1]), lambda: labels)
    weights = tf.convert_to_tensor(_checked_weights(weights))
    if labels.shape.ndims is not None and weights.shape.ndims is not None and \
            weights.shape.ndims - labels.shape.ndims == 1:
        weights = tf.squeeze(weights, [-1])
    return labels, logits, weights


def _num_present(tf, losses, weights):
    present = tf.where(tf.equal(weights, 0.0), tf.zeros_like(weights), tf.ones_like(weights))
    present = present * tf.ones_like(losses)
    return tf.reduce_sum(present)


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Weights, reduces and collects per-element `losses`."""
    tf = _api()
    Reduction.validate(reduction)
    graph = graph_mod.get_default_graph()
    with graph.name_scope(scope or "weighted_loss"):
        losses = tf.convert_to_tensor(losses)
        dtype = losses.dtype.base_dtype
        losses = tf.cast(losses, tf.float32) if dtype != tf.float64 else losses
        weights = tf.cast(tf.convert_to_tensor(_checked_weights(weights)),
                          losses.dtype.base_dtype)
        weighted = tf.multiply(losses, weights)
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = tf.reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                loss = _safe_div(tf, loss, tf.reduce_sum(tf.ones_like(losses) * weights))
            elif reduction in (Reduction.SUM_BY_NONZERO_WEIGHTS,
                               Reduction.SUM_OVER_NONZERO_WEIGHTS):
                loss = _safe_div(tf, loss, _num_present(tf, losses, weights))
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _safe_div(tf, loss, tf.cast(tf.size(losses), loss.dtype))
        loss = tf.cast(loss, dtype) if dtype != loss.dtype.base_dtype and dtype.is_floating \
            else loss
        if loss_collection is not None:
            graph.add_to_collection(loss_collection, loss)
        return loss


def add_loss(loss, loss_collection=GraphKeys.LOSSES):
    if loss_collection is not None:
        graph_mod.get_default_graph().add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES):
    return graph_mod.get_default_graph().get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    return graph_mod.get_default_graph().get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    tf = _api()
    losses = get_regularization_losses(scope)
    if losses:
        return tf.add_n(losses, name=name)
    return tf.constant(0.0)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum of the collected losses (and regularization losses)."""
    tf = _api()
    losses = get_losses(scope)
    if add_regularization_losses:
        losses = losses + get_regularization_losses(scope)
    if not losses:
        raise ValueError("No losses found in the LOSSES / REGULARIZATION_LOSSES collections.")
    return tf.add_n(losses, name=name)


def _scope(name, default):
    return graph_mod.get_default_graph().name_scope(name or default)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    tf = _api()
    with _scope(scope, "softmax_cross_entropy_loss") as name:
        logits = tf.convert_to_tensor(logits)
        labels = tf.cast(onehot_labels, logits.dtype.base_dtype)
        if label_smoothing > 0:
            classes = tf.cast(tf.shape(labels)[-1], logits.dtype.base_dtype)
            labels = labels * (1 - label_smoothing) + label_smoothing / classes
        losses = tf.nn.softmax_cross_entropy_with_logits_v2(
            labels=tf.stop_gradient(labels), logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    tf = _api()
    with _scope(scope, "sparse_softmax_cross_entropy_loss") as name:
        labels, logits, weights = _squeeze_labels(tf, labels, logits, weights)
        losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits,
                                                                name="xentropy")
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0,
                          scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    tf = _api()
    with _scope(scope, "sigmoid_cross_entropy_loss") as name:
        logits = tf.convert_to_tensor(logits)
        labels = tf.cast(multi_class_labels, logits.dtype.base_dtype)
        if label_smoothing > 0:
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                         name="xentropy")
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def mean_squared_error(labels, predictions, weights=1.0, scope=None,
                       loss_collection=GraphKeys.LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    tf = _api()
    with _scope(scope, "mean_squared_error") as name:
        predictions = tf.convert_to_tensor(predictions)
        labels = tf.cast(labels, predictions.dtype.base_dtype)
        losses = tf.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def absolute_difference(labels, predictions, weights=1.0, scope=None,
                        loss_collection=GraphKeys.LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    tf = _api()
    with _scope(scope, "absolute_difference") as name:
        predictions = tf.convert_to_tensor(predictions)
        labels = tf.cast(labels, predictions.dtype.base_dtype)
        losses = tf.abs(predictions - labels)
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None,
               loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """0.5 x^2 for |x| <= delta, else 0.5 delta^2 + delta (|x| - delta)."""
    tf = _api()
    with _scope(scope, "huber_loss") as name:
        predictions = tf.convert_to_tensor(predictions)
        labels = tf.cast(labels, predictions.dtype.base_dtype)
        error = tf.abs(predictions - labels)
        quadratic = tf.minimum(error, delta)
        linear = error - quadratic
        losses = 0.5 * quadratic * quadratic + delta * linear
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None,
             loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    tf = _api()
    with _scope(scope, "log_loss") as name:
        predictions = tf.convert_to_tensor(predictions)
        labels = tf.cast(labels, predictions.dtype.base_dtype)
        losses = -tf.multiply(labels, tf.log(predictions + epsilon)) - tf.multiply(
            1 - labels, tf.log(1 - predictions + epsilon))
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    tf = _api()
    with _scope(scope, "hinge_loss") as name:
        logits = tf.convert_to_tensor(logits)
        labels = tf.cast(labels, logits.dtype.base_dtype)
        signed = 2 * labels - 1
        losses = tf.nn.relu(1 - signed * logits)
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None,
                    loss_collection=GraphKeys.LOSSES,
                    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS, dim=None):
    tf = _api()
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("You must specify 'axis'.")
    with _scope(scope, "cosine_distance_loss") as name:
        predictions = tf.convert_to_tensor(predictions)
        labels = tf.cast(labels, predictions.dtype.base_dtype)
        losses = 1 - tf.reduce_sum(labels * predictions, axis=(axis,), keepdims=True)
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope=None,
                                loss_collection=GraphKeys.LOSSES):
    """TF's pairwise loss: per sample, the mean over pairs (i < j) of
    ((p_i - l_i) - (p_j - l_j))^2 over the present (non-zero weight) elements, times the
    sample's weight, summed over the batch. Inputs are cast to float32 (as TF does)."""
    tf = _api()
    with _scope(scope, "mean_pairwise_squared_error"):
        weights = tf.cast(_checked_weights(weights), tf.float32)
        labels = tf.cast(labels, tf.float32)
        predictions = tf.cast(predictions, tf.float32)
        predictions.shape.assert_is_compatible_with(labels.shape)
        diffs = predictions - labels
        axis = tf.range(1, tf.rank(diffs))
        present = tf.where(tf.equal(weights, 0.0), tf.zeros_like(weights),
                           tf.ones_like(weights)) * tf.ones_like(diffs)
        count = tf.reduce_sum(present, axis=axis, keepdims=True)
        sum_sq = tf.reduce_sum(tf.square(diffs), axis=axis, keepdims=True)
        term1 = 2.0 * tf.div_no_nan(sum_sq, count - 1, name="value")
        sum_diff = tf.reduce_sum(diffs, axis=axis, keepdims=True)
        term2 = 2.0 * tf.div_no_nan(tf.square(sum_diff), count * (count - 1), name="value")
        loss = tf.reduce_sum((term1 - term2) * weights)
        mean_loss = tf.where(tf.reduce_sum(count) > 0, loss, tf.zeros_like(loss), name="value")
        if loss_collection is not None:
            graph_mod.get_default_graph().add_to_collection(loss_collection, mean_loss)
        return mean_loss
