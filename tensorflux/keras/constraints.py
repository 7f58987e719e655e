"""`tf.keras.constraints`: projections applied to weights after each optimizer step."""

from __future__ import annotations

from tensorflux.framework import tensor_conversion
from tensorflux.ops import math as math_ops

__all__ = [
    "Constraint",
    "MaxNorm",
    "NonNeg",
    "UnitNorm",
    "MinMaxNorm",
    "max_norm",
    "non_neg",
    "unit_norm",
    "min_max_norm",
    "get",
]


class Constraint:
    def __call__(self, w):
        return w


class MaxNorm(Constraint):
    """Rescales weights whose norm along `axis` exceeds `max_value`."""

    def __init__(self, max_value=2, axis=0):
        self.max_value = max_value
        self.axis = axis

    def __call__(self, w):
        w = tensor_conversion.convert_to_tensor(w)
        norms = math_ops.sqrt(
            math_ops.reduce_sum(math_ops.square(w), axis=self.axis, keepdims=True)
        )
        desired = math_ops.clip_by_value(norms, 0.0, self.max_value)
        return w * (desired / (1e-7 + norms))


class NonNeg(Constraint):
    """Clamps weights at zero from below."""

    def __call__(self, w):
        w = tensor_conversion.convert_to_tensor(w)
        return w * math_ops.cast(w >= 0.0, w.dtype.base_dtype)


class UnitNorm(Constraint):
    """Scales weights to unit norm along `axis`."""

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        w = tensor_conversion.convert_to_tensor(w)
        return w / (
            1e-7
            + math_ops.sqrt(math_ops.reduce_sum(math_ops.square(w), axis=self.axis, keepdims=True))
        )


class MinMaxNorm(Constraint):
    """Pulls weight norms along `axis` into [min_value, max_value] at `rate`."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        w = tensor_conversion.convert_to_tensor(w)
        norms = math_ops.sqrt(
            math_ops.reduce_sum(math_ops.square(w), axis=self.axis, keepdims=True)
        )
        desired = (
            self.rate * math_ops.clip_by_value(norms, self.min_value, self.max_value)
            + (1 - self.rate) * norms
        )
        return w * (desired / (1e-7 + norms))


max_norm = MaxNorm
non_neg = NonNeg
unit_norm = UnitNorm
min_max_norm = MinMaxNorm


def get(identifier):
    if identifier is None or callable(identifier):
        return identifier
    names = {
        "max_norm": MaxNorm,
        "non_neg": NonNeg,
        "unit_norm": UnitNorm,
        "min_max_norm": MinMaxNorm,
    }
    if isinstance(identifier, str) and identifier in names:
        return names[identifier]()
    raise ValueError(f"Could not interpret constraint identifier: {identifier!r}")
