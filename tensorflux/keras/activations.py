"""`tf.keras.activations`: activation functions by name (`get`) and their inverse (`serialize`)."""

from __future__ import annotations

from tensorflux.framework import tensor_conversion
from tensorflux.keras import custom_objects
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import activations as nn_activations
from tensorflux.ops.nn import core as nn_core

__all__ = [
    "relu",
    "sigmoid",
    "tanh",
    "softmax",
    "elu",
    "selu",
    "softplus",
    "softsign",
    "linear",
    "exponential",
    "hard_sigmoid",
    "swish",
    "get",
    "serialize",
]


def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    """max(x, 0); `alpha` slope below `threshold`, capped at `max_value`."""
    x = tensor_conversion.convert_to_tensor(x)
    if alpha == 0.0 and max_value is None and threshold == 0.0:
        return nn_activations.relu(x)
    negative = alpha * (x - threshold) if alpha else None
    y = math_ops.where(
        x > threshold, x, negative if negative is not None else array_ops.zeros_like(x)
    )
    if max_value is not None:
        y = math_ops.minimum(y, math_ops.cast(max_value, y.dtype))
    return y


def sigmoid(x):
    return math_ops.sigmoid(x)


def tanh(x):
    return math_ops.tanh(x)


def softmax(x, axis=-1):
    """exp(x) normalized along `axis` (needs rank >= 2, as Keras checks)."""
    x = tensor_conversion.convert_to_tensor(x)
    shape = x.get_shape()
    if shape.ndims == 1:
        raise ValueError(f"Cannot apply softmax to a tensor that is 1D. Received input: {x.name}")
    return nn_core.softmax(x, axis=axis)


def elu(x, alpha=1.0):
    x = tensor_conversion.convert_to_tensor(x)
    y = nn_activations.elu(x)
    return y if alpha == 1.0 else math_ops.where(x > 0, y, alpha * y)


def selu(x):
    return nn_activations.selu(x)


def softplus(x):
    return nn_activations.softplus(x)


def softsign(x):
    return nn_activations.softsign(x)


def linear(x):
    return x


def exponential(x):
    return math_ops.exp(x)


def hard_sigmoid(x):
    """clip(0.2 x + 0.5, 0, 1)."""
    return math_ops.clip_by_value(0.2 * x + 0.5, 0.0, 1.0)


def swish(x):
    return x * math_ops.sigmoid(x)


_BY_NAME = {
    f.__name__: f
    for f in (
        relu,
        sigmoid,
        tanh,
        softmax,
        elu,
        selu,
        softplus,
        softsign,
        linear,
        exponential,
        hard_sigmoid,
        swish,
    )
}


def get(identifier):
    """The activation named `identifier` (None means linear); callables pass through."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        custom = custom_objects.lookup(identifier)
        if custom is not None:
            return custom
        if identifier not in _BY_NAME:
            raise ValueError(
                f"Unknown activation function: {identifier!r}. Known: {', '.join(sorted(_BY_NAME))}"
            )
        return _BY_NAME[identifier]
    if callable(identifier):
        return identifier
    raise TypeError(f"Could not interpret activation function identifier: {identifier!r}")


def serialize(activation):
    return getattr(activation, "__name__", type(activation).__name__)
