"""contrib.layers regularizers: `fn(weights) -> scalar loss or None`, as in TF 1.15.

l1: scale * sum(|w|); l2: scale * sum(w ** 2) / 2 (tf.nn.l2_loss); a scale of 0 gives a
regularizer returning None. `apply_regularization` sums a regularizer over weights and adds
the sum to REGULARIZATION_LOSSES.
"""

from __future__ import annotations

import numbers

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.scopes import name_scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import core as nn_ops
from tensorflux.platform import tf_logging as logging

__all__ = ["l1_regularizer", "l2_regularizer", "l1_l2_regularizer", "sum_regularizer",
           "apply_regularization"]


def _check_scale(scale) -> bool:
    """Validates `scale`; False when it disables the regularizer."""
    if isinstance(scale, numbers.Integral):
        raise ValueError(f"scale cannot be an integer: {scale}")
    if isinstance(scale, numbers.Real):
        if scale < 0.0:
            raise ValueError(f"Setting a scale less than 0 on a regularizer: {scale:g}")
        if scale == 0.0:
            logging.info("Scale of 0 disables regularizer.")
            return False
    return True


def l1_regularizer(scale, scope=None):
    """`fn(weights)` = scale * sum(|weights|).

    Raises:
        ValueError: `scale` is an integer or negative.
    """
    if not _check_scale(scale):
        return lambda _: None

    def l1(weights, name=None):
        with name_scope(scope, "l1_regularizer", [weights]) as name:
            my_scale = convert_to_tensor(scale, dtype=weights.dtype.base_dtype, name="scale")
            return math_ops.multiply(my_scale, math_ops.reduce_sum(math_ops.abs(weights)),
                                     name=name)

    return l1


def l2_regularizer(scale, scope=None):
    """`fn(weights)` = scale * sum(weights ** 2) / 2.

    Raises:
        ValueError: `scale` is an integer or negative.
    """
    if not _check_scale(scale):
        return lambda _: None

    def l2(weights):
        with name_scope(scope, "l2_regularizer", [weights]) as name:
            my_scale = convert_to_tensor(scale, dtype=weights.dtype.base_dtype, name="scale")
            return math_ops.multiply(my_scale, nn_ops.l2_loss(weights), name=name)

    return l2


def l1_l2_regularizer(scale_l1=1.0, scale_l2=1.0, scope=None):
    """The sum of an l1 and an l2 regularizer (None-returning when both scales are 0)."""
    if isinstance(scale_l1, numbers.Real) and isinstance(scale_l2, numbers.Real):
        if scale_l1 == 0.0 and scale_l2 == 0.0:
            logging.info("Scale of 0 disables regularizer.")
            return lambda _: None
    scope = scope or "l1_l2_regularizer"
    return sum_regularizer([l1_regularizer(scale_l1), l2_regularizer(scale_l2)], scope=scope)


def sum_regularizer(regularizer_list, scope=None):
    """A regularizer adding the (non-None) results of `regularizer_list`; None if empty."""
    regularizer_list = [reg for reg in regularizer_list if reg is not None]
    if not regularizer_list:
        return None

    def sum_reg(weights):
        with name_scope(scope, "sum_regularizer", [weights]) as name:
            penalties = [p for p in (reg(weights) for reg in regularizer_list)
                         if p is not None]
            if not penalties:
                return None
            return math_ops.add_n(penalties, name=name)

    return sum_reg


def apply_regularization(regularizer, weights_list=None):
    """Sums `regularizer` over `weights_list` (default: the WEIGHTS collection).

    Returns:
        The scalar penalty, also added to REGULARIZATION_LOSSES.

    Raises:
        ValueError: no weights, or a regularizer returned a non-scalar.
    """
    if not weights_list:
        weights_list = graph_mod.get_collection(GraphKeys.WEIGHTS)
    if not weights_list:
        raise ValueError("No weights to regularize.")
    with name_scope("get_regularization_penalty", values=weights_list) as scope:
        penalties = [regularizer(w) for w in weights_list]
        penalties = [p if p is not None else array_ops.constant(0.0) for p in penalties]
        for p in penalties:
            if p.get_shape().ndims != 0:
                raise ValueError(f"regularizer must return a scalar Tensor instead of a Tensor "
                                 f"with rank {p.get_shape().ndims}.")
        summed = math_ops.add_n(penalties, name=scope)
        graph_mod.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, summed)
        return summed
