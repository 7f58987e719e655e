"""`tf.keras.activations`: activation functions by name (`get`) and their inverse (`serialize`)."""

from __future__ import annotations

__all__ = ["relu", "sigmoid", "tanh", "softmax", "elu", "selu", "softplus", "softsign",
           "linear", "exponential", "hard_sigmoid", "swish", "get", "serialize"]


def _api():
    import tensorflux

    return tensorflux


def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    """max(x, 0); `alpha` slope below `threshold`, capped at `max_value`."""
    tf = _api()
    x = tf.convert_to_tensor(x)
    if alpha == 0.0 and max_value is None and threshold == 0.0:
        return tf.nn.relu(x)
    negative = alpha * (x - threshold) if alpha else None
    y = tf.where(x > threshold, x, negative if negative is not None else tf.zeros_like(x))
    if max_value is not None:
        y = tf.minimum(y, tf.cast(max_value, y.dtype))
    return y


def sigmoid(x):
    return _api().nn.sigmoid(x)


def tanh(x):
    return _api().nn.tanh(x)


def softmax(x, axis=-1):
    """exp(x) normalized along `axis` (needs rank >= 2, as Keras checks)."""
    x = _api().convert_to_tensor(x)
    shape = x.get_shape()
    if shape.ndims == 1:
        raise ValueError("Cannot apply softmax to a tensor that is 1D. Received input: "
                         f"{x.name}")
    return _api().nn.softmax(x, axis=axis)


def elu(x, alpha=1.0):
    tf = _api()
    x = tf.convert_to_tensor(x)
    y = tf.nn.elu(x)
    return y if alpha == 1.0 else tf.where(x > 0, y, alpha * y)


def selu(x):
    return _api().nn.selu(x)


def softplus(x):
    return _api().nn.softplus(x)


def softsign(x):
    return _api().nn.softsign(x)


def linear(x):
    return x


def exponential(x):
    return _api().exp(x)


def hard_sigmoid(x):
    """clip(0.2 x + 0.5, 0, 1)."""
    return _api().clip_by_value(0.2 * x + 0.5, 0.0, 1.0)


def swish(x):
    return x * _api().nn.sigmoid(x)


_BY_NAME = {f.__name__: f for f in (relu, sigmoid, tanh, softmax, elu, selu, softplus,
                                   softsign, linear, exponential, hard_sigmoid, swish)}


def get(identifier):
    """The activation named `identifier` (None means linear); callables pass through."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"Unknown activation function: {identifier!r}. Known: "
                             f"{', '.join(sorted(_BY_NAME))}")
        return _BY_NAME[identifier]
    if callable(identifier):
        return identifier
    raise TypeError(f"Could not interpret activation function identifier: {identifier!r}")


def serialize(activation):
    return getattr(activation, "__name__", type(activation).__name__)
