"""`tf.contrib.losses` (and `slim.losses`): TF 1.15's contrib loss signatures over tf.losses.

Contrib put the prediction first (`softmax_cross_entropy(logits, onehot_labels)`,
`mean_squared_error(predictions, labels)`), so positional calls from slim-era code keep
their meaning. Every loss averages over the non-zero weights and lands in the LOSSES
collection, as in TF; `hinge_loss` returns the unreduced per-element loss, as contrib did.
"""

from tensorflux import losses as core
from tensorflux.contrib import missing as _missing
from tensorflux.contrib.losses import metric_learning
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.scopes import name_scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import core as nn_ops
from tensorflux.ops.nn import activations as nn_activations

__all__ = ["absolute_difference", "add_loss", "compute_weighted_loss", "cosine_distance",
           "get_losses", "get_regularization_losses", "get_total_loss", "hinge_loss",
           "log_loss", "mean_pairwise_squared_error", "mean_squared_error",
           "sigmoid_cross_entropy", "softmax_cross_entropy", "sparse_softmax_cross_entropy"]

get_losses = core.get_losses
get_regularization_losses = core.get_regularization_losses


def add_loss(loss, loss_collection=GraphKeys.LOSSES):
    """Adds `loss` to `loss_collection` (None: nowhere)."""
    core.add_loss(loss, loss_collection)


def get_total_loss(add_regularization_losses=True, name="total_loss"):
    """The sum of LOSSES (plus REGULARIZATION_LOSSES by default).

    Raises:
        ValueError: no losses were collected.
    """
    return core.get_total_loss(add_regularization_losses, name=name)


def compute_weighted_loss(losses, weights=1.0, scope=None):
    """Weights `losses`, averages over non-zero weights and adds the result to LOSSES."""
    return core.compute_weighted_loss(losses, weights, scope=scope)


def absolute_difference(predictions, labels=None, weights=1.0, scope=None):
    """Mean |predictions - labels| (weighted)."""
    return core.absolute_difference(labels, predictions, weights, scope=scope)


def cosine_distance(predictions, labels=None, axis=None, weights=1.0, scope=None, dim=None):
    """Mean 1 - cos(predictions, labels) along `axis` (unit-normalized inputs).

    Raises:
        ValueError: `axis` and `dim` both given, or neither.
    """
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    if axis is None:
        raise ValueError("You must specify 'axis'.")
    return core.cosine_distance(labels, predictions, axis=axis, weights=weights, scope=scope)


def hinge_loss(logits, labels=None, scope=None):
    """Unreduced `relu(1 - (2 * labels - 1) * logits)` (labels in {0, 1}).

    Raises:
        ValueError: shapes of logits and labels differ.
    """
    with name_scope(scope, "hinge_loss", [logits, labels]):
        logits = convert_to_tensor(logits)
        labels = math_ops.cast(convert_to_tensor(labels), logits.dtype.base_dtype)
        logits.get_shape().assert_is_compatible_with(labels.get_shape())
        signs = math_ops.subtract(2 * labels, 1.0)
        return nn_activations.relu(math_ops.subtract(1.0, math_ops.multiply(signs, logits)))


def log_loss(predictions, labels=None, weights=1.0, epsilon=1e-7, scope=None):
    """Mean -labels * log(p + eps) - (1 - labels) * log(1 - p + eps) (weighted)."""
    return core.log_loss(labels, predictions, weights, epsilon=epsilon, scope=scope)


def mean_pairwise_squared_error(predictions, labels=None, weights=1.0, scope=None):
    """Mean of squared differences between pairs of prediction-label differences."""
    return core.mean_pairwise_squared_error(labels, predictions, weights, scope=scope)


def mean_squared_error(predictions, labels=None, weights=1.0, scope=None):
    """Mean (predictions - labels) ** 2 (weighted)."""
    return core.mean_squared_error(labels, predictions, weights, scope=scope)


def sigmoid_cross_entropy(logits, multi_class_labels, weights=1.0, label_smoothing=0,
                          scope=None):
    """Mean sigmoid cross-entropy (weighted, with optional label smoothing)."""
    return core.sigmoid_cross_entropy(multi_class_labels, logits, weights,
                                      label_smoothing=label_smoothing, scope=scope)


def softmax_cross_entropy(logits, onehot_labels, weights=1.0, label_smoothing=0, scope=None):
    """Mean softmax cross-entropy against one-hot labels (weighted, optional smoothing)."""
    return core.softmax_cross_entropy(onehot_labels, logits, weights,
                                      label_smoothing=label_smoothing, scope=scope)


def sparse_softmax_cross_entropy(logits, labels, weights=1.0, scope=None):
    """Mean softmax cross-entropy against integer class labels (weighted)."""
    return core.sparse_softmax_cross_entropy(labels, logits, weights, scope=scope)


__getattr__ = _missing.module_getattr("contrib.losses", {"*": "tf.losses"})
