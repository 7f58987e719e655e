"""`tf.keras.losses`: per-sample loss functions (mean over the last axis) and loss classes.

Functions take `(y_true, y_pred)` and return one loss per sample; the classes (TF 1.13+ loss
objects, `loss_reduction.Loss`) weight and reduce that by their `reduction` (default: the mean
over all loss elements).
Probability inputs are clipped to [epsilon, 1 - epsilon] before the log, as Keras does.
"""

from __future__ import annotations

import math

from tensorflux.framework import tensor_conversion
from tensorflux.keras import backend
from tensorflux.keras import custom_objects as custom_object_registry
from tensorflux.keras.loss_reduction import Loss, LossFunctionWrapper, Reduction
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_primitives
from tensorflux.ops.nn import activations as nn_activations
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
    "LossFunctionWrapper",
    "Reduction",
    "MeanAbsolutePercentageError",
    "MeanSquaredLogarithmicError",
    "Hinge",
    "SquaredHinge",
    "CategoricalHinge",
    "Huber",
    "LogCosh",
    "Poisson",
    "KLDivergence",
    "CosineSimilarity",
    "categorical_hinge",
    "huber_loss",
    "huber",
    "logcosh",
    "log_cosh",
    "cosine_proximity",
    "cosine",
    "KLD",
    "MAE",
    "MAPE",
    "MSE",
    "MSLE",
    "get",
    "serialize",
    "deserialize",
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
    """Mean over the last axis of max(1 - y_true * y_pred, 0); 0/1 labels become -1/1."""
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = _binary_to_signed(y_true)
    return math_ops.reduce_mean(math_ops.maximum(1.0 - y_true * y_pred, 0.0), axis=-1)


def squared_hinge(y_true, y_pred):
    """Mean over the last axis of max(1 - y_true * y_pred, 0)**2; 0/1 labels become -1/1."""
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = _binary_to_signed(y_true)
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


def categorical_hinge(y_true, y_pred):
    """max(0, max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1) over the last axis."""
    y_true, y_pred = _pair(y_true, y_pred)
    positive = math_ops.reduce_sum(y_true * y_pred, axis=-1)
    negative = math_ops.reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return math_ops.maximum(negative - positive + 1.0, 0.0)


def huber_loss(y_true, y_pred, delta=1.0):
    """Mean over the last axis of 0.5 * e**2 where |e| <= delta, else
    delta * (|e| - 0.5 * delta), e = y_pred - y_true."""
    y_true, y_pred = _pair(y_true, y_pred)
    error = math_ops.abs(y_pred - y_true)
    quadratic = math_ops.minimum(error, delta)
    linear = error - quadratic
    return math_ops.reduce_mean(0.5 * math_ops.square(quadratic) + delta * linear, axis=-1)


def logcosh(y_true, y_pred):
    """Mean over the last axis of log(cosh(y_pred - y_true)) (computed without overflow)."""
    y_true, y_pred = _pair(y_true, y_pred)
    x = y_pred - y_true
    values = x + nn_activations.softplus(-2.0 * x) - math_ops.cast(math.log(2.0), x.dtype)
    return math_ops.reduce_mean(values, axis=-1)


def cosine_proximity(y_true, y_pred, axis=-1):
    """-sum(l2_normalize(y_true) * l2_normalize(y_pred)) along `axis` (TF 1.x's name of
    `cosine_similarity`)."""
    return cosine_similarity(y_true, y_pred, axis=axis)


def _binary_to_signed(y_true):
    """0/1 labels as -1/1 (labels already in -1/1 pass through), as TF 1.14+'s hinges do."""
    binary = math_ops.reduce_all(math_ops.logical_or(math_ops.equal(y_true, 0.0),
                                                     math_ops.equal(y_true, 1.0)))
    return control_flow_primitives.cond(binary, lambda: 2.0 * y_true - 1.0,
                                        lambda: array_ops.identity(y_true))


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kl_divergence = kullback_leibler_divergence
huber = huber_loss
log_cosh = logcosh
cosine = cosine_proximity


class MeanSquaredError(LossFunctionWrapper):
    def __init__(self, reduction=Reduction.AUTO, name="mean_squared_error"):
        super().__init__(mean_squared_error, reduction=reduction, name=name)


class MeanAbsoluteError(LossFunctionWrapper):
    def __init__(self, reduction=Reduction.AUTO, name="mean_absolute_error"):
        super().__init__(mean_absolute_error, reduction=reduction, name=name)


class MeanAbsolutePercentageError(LossFunctionWrapper):
    def __init__(self, reduction=Reduction.AUTO, name="mean_absolute_percentage_error"):
        super().__init__(mean_absolute_percentage_error, reduction=reduction, name=name)


class MeanSquaredLogarithmicError(LossFunctionWrapper):
    def __init__(self, reduction=Reduction.AUTO, name="mean_squared_logarithmic_error"):
        super().__init__(mean_squared_logarithmic_error, reduction=reduction, name=name)


class CategoricalCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, label_smoothing=0.0, reduction=Reduction.AUTO,
                 name="categorical_crossentropy"):
        super().__init__(categorical_crossentropy, reduction=reduction, name=name,
                         from_logits=from_logits, label_smoothing=label_smoothing)


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, reduction=Reduction.AUTO,
                 name="sparse_categorical_crossentropy"):
        super().__init__(sparse_categorical_crossentropy, reduction=reduction, name=name,
                         from_logits=from_logits)


class BinaryCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, label_smoothing=0.0, reduction=Reduction.AUTO,
                 name="binary_crossentropy"):
        super().__init__(binary_crossentropy, reduction=reduction, name=name,
                         from_logits=from_logits, label_smoothing=label_smoothing)


class Hinge(LossFunctionWrapper):
    def __init__(self, reduction=Reduction.AUTO, name="hinge"):
        super().__init__(hinge, reduction=reduction, name=name)


class SquaredHinge(LossFunctionWrapper):
    def __init__(self, reduction=Reduction.AUTO, name="squared_hinge"):
        super().__init__(squared_hinge, reduction=reduction, name=name)


class CategoricalHinge(LossFunctionWrapper):
    def __init__(self, reduction=Reduction.AUTO, name="categorical_hinge"):
        super().__init__(categorical_hinge, reduction=reduction, name=name)


class Huber(LossFunctionWrapper):
    def __init__(self, delta=1.0, reduction=Reduction.AUTO, name="huber_loss"):
        super().__init__(huber_loss, reduction=reduction, name=name, delta=delta)


class LogCosh(LossFunctionWrapper):
    def __init__(self, reduction=Reduction.AUTO, name="logcosh"):
        super().__init__(logcosh, reduction=reduction, name=name)


class Poisson(LossFunctionWrapper):
    def __init__(self, reduction=Reduction.AUTO, name="poisson"):
        super().__init__(poisson, reduction=reduction, name=name)


class KLDivergence(LossFunctionWrapper):
    def __init__(self, reduction=Reduction.AUTO, name="kullback_leibler_divergence"):
        super().__init__(kullback_leibler_divergence, reduction=reduction, name=name)


class CosineSimilarity(LossFunctionWrapper):
    def __init__(self, axis=-1, reduction=Reduction.AUTO, name="cosine_similarity"):
        super().__init__(cosine_similarity, reduction=reduction, name=name, axis=axis)


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
        categorical_hinge,
        huber_loss,
        logcosh,
        cosine_proximity,
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
        "huber": huber,
        "log_cosh": log_cosh,
        "cosine": cosine,
    }
)


def get(identifier):
    """The loss function named `identifier`, or the loss object of a `serialize` dict;
    callables (functions and `Loss` objects) pass through."""
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        custom = custom_object_registry.lookup(identifier)
        if custom is not None:
            return custom
        if identifier not in _BY_NAME:
            raise ValueError(f"Unknown loss function: {identifier!r}")
        return _BY_NAME[identifier]
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret loss function identifier: {identifier!r}")


def serialize(loss):
    """A loss function's name (a `Loss` object's name, as compile's metric names use it)."""
    return getattr(loss, "name", None) or getattr(loss, "__name__", type(loss).__name__)


def deserialize(config, custom_objects=None):
    """The loss function named `config`, or the loss object of a `{"class_name", "config"}`
    dict (a `tf.keras.losses` class or one in `custom_objects`)."""
    custom_objects = custom_object_registry.merged(custom_objects)
    if isinstance(config, str):
        if config in custom_objects:
            return custom_objects[config]
        return get(config)
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"Could not interpret loss config: {config!r}")
    name = config["class_name"]
    cls = (custom_objects or {}).get(name) or globals().get(name)
    if not (isinstance(cls, type) and issubclass(cls, Loss)):
        raise ValueError(f"Unknown loss class: {name!r}")
    return cls.from_config(dict(config.get("config", {})))
