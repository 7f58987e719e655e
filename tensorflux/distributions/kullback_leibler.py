"""`kl_divergence` and `RegisterKL`: KL(a || b) looked up by the classes of a and b.

The lookup walks both classes' method resolution orders and takes the registered pair with
the smallest summed distance, so a subclass (Exponential) inherits its parent's (Gamma) pairs
unless it registers its own.
"""

from __future__ import annotations

import inspect

from tensorflux.distributions.distribution import UndefinedError
from tensorflux.framework import scopes
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.debug import logging as logging_ops

__all__ = ["kl_divergence", "RegisterKL"]

_DIVERGENCES: dict = {}


def _registered_kl(type_a, type_b):
    """The KL function registered for the closest pair of ancestors, or None."""
    best, best_distance = None, None
    for distance_a, parent_a in enumerate(inspect.getmro(type_a)):
        for distance_b, parent_b in enumerate(inspect.getmro(type_b)):
            candidate = _DIVERGENCES.get((parent_a, parent_b))
            if candidate is not None and (best is None or distance_a + distance_b < best_distance):
                best, best_distance = candidate, distance_a + distance_b
    return best


def kl_divergence(distribution_a, distribution_b, allow_nan_stats=True, name=None):
    """KL(distribution_a || distribution_b), from the function registered for their classes.

    Args:
        distribution_a: a `tf.distributions.Distribution`.
        distribution_b: a `tf.distributions.Distribution`.
        allow_nan_stats: when False, the result asserts at run time that it holds no NaN.
        name: name of the op.

    Returns:
        A tensor of the batch shape.

    Raises:
        UndefinedError (a NotImplementedError, as TF raises): no KL is registered for the
            two classes.

    Example:
        >>> tf.distributions.kl_divergence(tf.distributions.Normal(0., 1.),
        ...                                tf.distributions.Normal(1., 1.))  # -> 0.5
    """
    kl_fn = _registered_kl(type(distribution_a), type(distribution_b))
    if kl_fn is None:
        raise UndefinedError(
            f"No KL(distribution_a || distribution_b) registered for distribution_a type "
            f"{type(distribution_a).__name__} and distribution_b type "
            f"{type(distribution_b).__name__}")
    with scopes.name_scope("KullbackLeibler"):
        kl_t = kl_fn(distribution_a, distribution_b, name=name)
        if allow_nan_stats:
            return kl_t
        kl_t = array_ops.identity(kl_t, name="kl")
        message = (f"KL calculation between {distribution_a.name} and {distribution_b.name} "
                   f"returned NaN values (and was called with allow_nan_stats=False). Values:")
        check = logging_ops.Assert(math_ops.logical_not(math_ops.reduce_any(math_ops.is_nan(kl_t))),
                                   [message, kl_t])
        with scopes.control_dependencies([check]):
            return array_ops.identity(kl_t, name="checked_kl")


class RegisterKL:
    """Decorator that registers `kl_fn(a, b, name=None)` for a pair of distribution classes.

    Raises:
        TypeError: an argument is not a class.
        ValueError: the pair already has a function.

    Example:
        >>> @tf.distributions.RegisterKL(MyDist, MyDist)
        ... def _kl_mine(a, b, name=None): ...
    """

    def __init__(self, dist_cls_a, dist_cls_b):
        self._key = (dist_cls_a, dist_cls_b)

    def __call__(self, kl_fn):
        if not callable(kl_fn):
            raise TypeError(f"kl_fn must be callable, received: {kl_fn}")
        for cls in self._key:
            if not inspect.isclass(cls):
                raise TypeError(f"RegisterKL expects distribution classes, got {cls!r}")
        if self._key in _DIVERGENCES:
            a, b = self._key
            raise ValueError(f"KL({a.__name__} || {b.__name__}) has already been registered to: "
                             f"{_DIVERGENCES[self._key]}")
        _DIVERGENCES[self._key] = kl_fn
        return kl_fn
