"""`tf.keras.metrics`: per-sample metric functions used by `Model.compile(metrics=...)`."""

from __future__ import annotations

from tensorflux.framework import tensor_conversion
from tensorflux.keras import losses as _losses
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import core as nn_core

binary_crossentropy = _losses.binary_crossentropy
categorical_crossentropy = _losses.categorical_crossentropy
sparse_categorical_crossentropy = _losses.sparse_categorical_crossentropy
mean_squared_error = mse = _losses.mean_squared_error
mean_absolute_error = mae = _losses.mean_absolute_error
mean_absolute_percentage_error = mape = _losses.mean_absolute_percentage_error

__all__ = [
    "binary_accuracy",
    "categorical_accuracy",
    "sparse_categorical_accuracy",
    "top_k_categorical_accuracy",
    "mean_squared_error",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "mse",
    "mae",
    "mape",
    "binary_crossentropy",
    "categorical_crossentropy",
    "sparse_categorical_crossentropy",
    "get",
]


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """Mean over the last axis of (y_pred > threshold) == y_true."""
    y_pred = tensor_conversion.convert_to_tensor(y_pred)
    dtype = y_pred.dtype.base_dtype
    hits = math_ops.equal(math_ops.cast(y_true, dtype), math_ops.cast(y_pred > threshold, dtype))
    return math_ops.reduce_mean(math_ops.cast(hits, dtype), axis=-1)


def categorical_accuracy(y_true, y_pred):
    """1 where argmax(y_pred) == argmax(y_true) (one-hot targets), else 0."""
    y_pred = tensor_conversion.convert_to_tensor(y_pred)
    hits = math_ops.equal(math_ops.argmax(y_true, axis=-1), math_ops.argmax(y_pred, axis=-1))
    return math_ops.cast(hits, y_pred.dtype.base_dtype)


def sparse_categorical_accuracy(y_true, y_pred):
    """1 where argmax(y_pred) equals the integer target, else 0."""
    y_pred = tensor_conversion.convert_to_tensor(y_pred)
    labels = array_ops.reshape(math_ops.cast(y_true, "int64"), [-1])
    hits = math_ops.equal(labels, array_ops.reshape(math_ops.argmax(y_pred, axis=-1), [-1]))
    return math_ops.cast(hits, y_pred.dtype.base_dtype)


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_pred = tensor_conversion.convert_to_tensor(y_pred)
    hits = nn_core.in_top_k(y_pred, math_ops.cast(math_ops.argmax(y_true, axis=-1), "int32"), k)
    return math_ops.cast(hits, y_pred.dtype.base_dtype)


_BY_NAME = {
    f.__name__: f
    for f in (
        binary_accuracy,
        categorical_accuracy,
        sparse_categorical_accuracy,
        top_k_categorical_accuracy,
        mean_squared_error,
        mean_absolute_error,
        mean_absolute_percentage_error,
        binary_crossentropy,
        categorical_crossentropy,
        sparse_categorical_crossentropy,
    )
}
_BY_NAME.update({"mse": mse, "mae": mae, "mape": mape})


def get(identifier):
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"Unknown metric function: {identifier!r}")
        return _BY_NAME[identifier]
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret metric function identifier: {identifier!r}")
