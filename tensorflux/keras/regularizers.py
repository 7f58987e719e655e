"""`tf.keras.regularizers`: L1, L2 and L1L2 weight penalties."""

from __future__ import annotations

from tensorflux.framework import tensor_conversion
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops

__all__ = ["Regularizer", "L1L2", "L1", "L2", "l1", "l2", "l1_l2", "get"]


class Regularizer:
    """Maps a weight tensor to a scalar penalty."""

    def __call__(self, x):
        return 0.0


class L1L2(Regularizer):
    """l1 * sum(|x|) + l2 * sum(x**2)."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = float(l1)
        self.l2 = float(l2)

    def __call__(self, x):
        x = tensor_conversion.convert_to_tensor(x)
        penalty = array_ops.constant(0.0, dtype=x.dtype.base_dtype)
        if self.l1:
            penalty += self.l1 * math_ops.reduce_sum(math_ops.abs(x))
        if self.l2:
            penalty += self.l2 * math_ops.reduce_sum(math_ops.square(x))
        return penalty

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    def __init__(self, l1=0.01):
        super().__init__(l1=l1)


class L2(L1L2):
    def __init__(self, l2=0.01):
        super().__init__(l2=l2)


def l1(l=0.01):  # noqa: E741 - the Keras argument name
    return L1L2(l1=l)


def l2(l=0.01):  # noqa: E741
    return L1L2(l2=l)


def l1_l2(l1=0.01, l2=0.01):  # noqa: F811
    return L1L2(l1=l1, l2=l2)


def get(identifier):
    if identifier is None or callable(identifier):
        return identifier
    names = {"l1": L1, "l2": L2, "l1_l2": lambda: L1L2(0.01, 0.01)}
    if isinstance(identifier, str) and identifier in names:
        return names[identifier]()
    raise ValueError(f"Could not interpret regularizer identifier: {identifier!r}")
