"""`tf.keras.losses`: per-sample loss functions (mean over the last axis) and loss classes.

Functions take `(y_true, y_pred)` and return one loss per sample; the classes reduce that to
the mean over the batch (Keras' SUM_OVER_BATCH_SIZE), optionally weighted per sample.
Probability inputs are clipped to [epsilon, 1 - epsilon] before the log, as Keras does.
"""

from __future__ import annotations

from tensorflux.framework import scopes, tensor_conversion
from tensorflux.keras import backend
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import functions as nn_functions

__all__ = [
    "mean_squared_error",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "mean_squared_logarithmic_error",
    "categorical_crossentropy",
    "sparse_categorical_crossentropy",
    "binary_crossentropy",
    "hinge",
    "squared_hinge",
    "kullback_leibler_divergence",
    "poisson",
    "cosine_similarity",
    "mse",
    "mae",
    "mape",
    "msle",
    "kld",
    "MeanSquaredError",
    "MeanAbsoluteError",
    "CategoricalCrossentropy",
    "SparseCategoricalCrossentropy",
    "BinaryCrossentropy",
    "Loss",
    "get",
    "serialize",
]


def _pair(y_true, y_pred):
    y_pred = tensor_conversion.convert_to_tensor(y_pred)
    y_true = math_ops.cast(y_true, y_pred.dtype.base_dtype)
    return y_true, y_pred


def mean_squared_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(math_ops.squared_difference(y_pred, y_true), axis=-1)


def mean_absolute_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(math_ops.abs(y_pred - y_true), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    diff = math_ops.abs(
        (y_true - y_pred) / math_ops.maximum(math_ops.abs(y_true), backend.epsilon())
    )
    return 100.0 * math_ops.reduce_mean(diff, axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    first = math_ops.log(math_ops.maximum(y_pred, backend.epsilon()) + 1.0)
    second = math_ops.log(math_ops.maximum(y_true, backend.epsilon()) + 1.0)
    return math_ops.reduce_mean(math_ops.squared_difference(first, second), axis=-1)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0):
    """-sum(y_true * log(softmax or normalized y_pred)) over the last axis."""
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        classes = math_ops.cast(array_ops.shape(y_true)[-1], y_pred.dtype)
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / classes
    if from_logits:
        return nn_functions.softmax_cross_entropy_with_logits_v2(labels=y_true, logits=y_pred)
    eps = backend.epsilon()
    probs = y_pred / math_ops.reduce_sum(y_pred, axis=-1, keepdims=True)
    probs = math_ops.clip_by_value(probs, eps, 1.0 - eps)
    return -math_ops.reduce_sum(y_true * math_ops.log(probs), axis=-1)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    """Categorical crossentropy with integer class ids (shape [batch] or [batch, 1])."""
    y_pred = tensor_conversion.convert_to_tensor(y_pred)
    if axis != -1:
        raise ValueError("sparse_categorical_crossentropy: only axis=-1 is supported.")
    labels = math_ops.cast(y_true, "int64")
    if labels.get_shape().ndims is None or labels.get_shape().ndims == y_pred.get_shape().ndims:
        labels = array_ops.reshape(labels, array_ops.shape(y_pred)[:-1])
    if not from_logits:
        eps = backend.epsilon()
        y_pred = math_ops.log(math_ops.clip_by_value(y_pred, eps, 1.0 - eps))
    return nn_functions.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=y_pred)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0):
    """Mean over the last axis of the elementwise binary crossentropy."""
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        losses = nn_functions.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred)
    else:
        eps = backend.epsilon()
        p = math_ops.clip_by_value(y_pred, eps, 1.0 - eps)
        losses = -(y_true * math_ops.log(p + eps) + (1.0 - y_true) * math_ops.log(1.0 - p + eps))
    return math_ops.reduce_mean(losses, axis=-1)


def hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(math_ops.maximum(1.0 - y_true * y_pred, 0.0), axis=-1)


def squared_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(
        math_ops.square(math_ops.maximum(1.0 - y_true * y_pred, 0.0)), axis=-1
    )


def kullback_leibler_divergence(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    eps = backend.epsilon()
    y_true = math_ops.clip_by_value(y_true, eps, 1.0)
    y_pred = math_ops.clip_by_value(y_pred, eps, 1.0)
    return math_ops.reduce_sum(y_true * math_ops.log(y_true / y_pred), axis=-1)


def poisson(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(y_pred - y_true * math_ops.log(y_pred + backend.epsilon()), axis=-1)


def cosine_similarity(y_true, y_pred, axis=-1):
    """-cos(y_true, y_pred) along `axis` (Keras' loss form: lower is more similar)."""
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = nn_functions.l2_normalize(y_true, axis=axis)
    y_pred = nn_functions.l2_normalize(y_pred, axis=axis)
    return -math_ops.reduce_sum(y_true * y_pred, axis=axis)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence


class Loss:
    """A loss function object: per-sample losses reduced to their (weighted) batch mean."""

    def __init__(self, fn, name, **kwargs):
        self.fn = fn
        self.name = name
        self._kwargs = kwargs

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self._kwargs)

    def __call__(self, y_true, y_pred, sample_weight=None):
        with scopes.name_scope(self.name):
            losses = self.call(y_true, y_pred)
            if sample_weight is None:
                return math_ops.reduce_mean(losses)
            weights = math_ops.cast(sample_weight, losses.dtype.base_dtype)
            return math_ops.reduce_sum(losses * weights) / math_ops.cast(
                array_ops.size(losses), losses.dtype
            )


class MeanSquaredError(Loss):
    def __init__(self, name="mean_squared_error"):
        super().__init__(mean_squared_error, name)


class MeanAbsoluteError(Loss):
    def __init__(self, name="mean_absolute_error"):
        super().__init__(mean_absolute_error, name)


class CategoricalCrossentropy(Loss):
    def __init__(self, from_logits=False, label_smoothing=0.0, name="categorical_crossentropy"):
        super().__init__(
            categorical_crossentropy, name, from_logits=from_logits, label_smoothing=label_smoothing
        )


class SparseCategoricalCrossentropy(Loss):
    def __init__(self, from_logits=False, name="sparse_categorical_crossentropy"):
        super().__init__(sparse_categorical_crossentropy, name, from_logits=from_logits)


class BinaryCrossentropy(Loss):
    def __init__(self, from_logits=False, label_smoothing=0.0, name="binary_crossentropy"):
        super().__init__(
            binary_crossentropy, name, from_logits=from_logits, label_smoothing=label_smoothing
        )


_BY_NAME = {
    f.__name__: f
    for f in (
        mean_squared_error,
        mean_absolute_error,
        mean_absolute_percentage_error,
        mean_squared_logarithmic_error,
        categorical_crossentropy,
        sparse_categorical_crossentropy,
        binary_crossentropy,
        hinge,
        squared_hinge,
        kullback_leibler_divergence,
        poisson,
        cosine_similarity,
    )
}
_BY_NAME.update(
    {
        "mse": mse,
        "mae": mae,
        "mape": mape,
        "msle": msle,
        "kld": kld,
        "MSE": mse,
        "MAE": mae,
        "MAPE": mape,
        "MSLE": msle,
        "KLD": kld,
    }
)


def get(identifier):
    """The loss function named `identifier`; callables pass through."""
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"Unknown loss function: {identifier!r}")
        return _BY_NAME[identifier]
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret loss function identifier: {identifier!r}")


def serialize(loss):
    return getattr(loss, "name", None) or getattr(loss, "__name__", type(loss).__name__)
