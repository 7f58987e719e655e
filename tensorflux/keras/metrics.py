"""`tf.keras.metrics`: per-sample metric functions used by `Model.compile(metrics=...)`."""

from __future__ import annotations

from tensorflux.keras import losses as _losses

binary_crossentropy = _losses.binary_crossentropy
categorical_crossentropy = _losses.categorical_crossentropy
sparse_categorical_crossentropy = _losses.sparse_categorical_crossentropy
mean_squared_error = mse = _losses.mean_squared_error
mean_absolute_error = mae = _losses.mean_absolute_error
mean_absolute_percentage_error = mape = _losses.mean_absolute_percentage_error

__all__ = ["binary_accuracy", "categorical_accuracy", "sparse_categorical_accuracy",
           "top_k_categorical_accuracy", "mean_squared_error", "mean_absolute_error",
           "mean_absolute_percentage_error", "mse", "mae", "mape", "binary_crossentropy",
           "categorical_crossentropy", "sparse_categorical_crossentropy", "get"]


def _api():
    import tensorflux

    return tensorflux


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """Mean over the last axis of (y_pred > threshold) == y_true."""
    tf = _api()
    y_pred = tf.convert_to_tensor(y_pred)
    dtype = y_pred.dtype.base_dtype
    hits = tf.equal(tf.cast(y_true, dtype), tf.cast(y_pred > threshold, dtype))
    return tf.reduce_mean(tf.cast(hits, dtype), axis=-1)


def categorical_accuracy(y_true, y_pred):
    """1 where argmax(y_pred) == argmax(y_true) (one-hot targets), else 0."""
    tf = _api()
    y_pred = tf.convert_to_tensor(y_pred)
    hits = tf.equal(tf.argmax(y_true, axis=-1), tf.argmax(y_pred, axis=-1))
    return tf.cast(hits, y_pred.dtype.base_dtype)


def sparse_categorical_accuracy(y_true, y_pred):
    """1 where argmax(y_pred) equals the integer target, else 0."""
    tf = _api()
    y_pred = tf.convert_to_tensor(y_pred)
    labels = tf.reshape(tf.cast(y_true, "int64"), [-1])
    hits = tf.equal(labels, tf.reshape(tf.argmax(y_pred, axis=-1), [-1]))
    return tf.cast(hits, y_pred.dtype.base_dtype)


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    tf = _api()
    y_pred = tf.convert_to_tensor(y_pred)
    hits = tf.nn.in_top_k(y_pred, tf.cast(tf.argmax(y_true, axis=-1), "int32"), k)
    return tf.cast(hits, y_pred.dtype.base_dtype)


_BY_NAME = {f.__name__: f for f in (
    binary_accuracy, categorical_accuracy, sparse_categorical_accuracy,
    top_k_categorical_accuracy, mean_squared_error, mean_absolute_error,
    mean_absolute_percentage_error, binary_crossentropy, categorical_crossentropy,
    sparse_categorical_crossentropy)}
_BY_NAME.update({"mse": mse, "mae": mae, "mape": mape})


def get(identifier):
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"Unknown metric function: {identifier!r}")
        return _BY_NAME[identifier]
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret metric function identifier: {identifier!r}")
