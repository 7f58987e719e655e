"""Helpers shared by the tf.image modules: name scopes, static-or-runtime checks, image dims."""

from __future__ import annotations

from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.debug import logging as logging_ops


def is_tensor(value) -> bool:
    return isinstance(value, Tensor)


def check(condition, error, message: str) -> list:
    """A static False raises `error(message)` now; a tensor condition becomes an Assert op."""
    if is_tensor(condition):
        return [logging_ops.Assert(condition, [message])]
    if not condition:
        raise error(message)
    return []


def depends(checks: list, value):
    """`value` (a tensor) gated on `checks` (Assert ops), or `value` itself when none."""
    if not checks or not is_tensor(value):
        return value
    return control_flow_ops.with_dependencies(checks, value)


def static_value(value):
    """A Python int/float for a constant `value` (tensor or number), else None."""
    if is_tensor(value):
        known = constant_value(value)
        return None if known is None else known.item()
    return value


def image_dims(image, rank: int) -> list:
    """Each dimension of `image`: the static int when known, else a scalar int32 tensor."""
    static = image.shape.with_rank(rank).as_list()
    dynamic = array_ops.unstack(array_ops.shape(image), rank)
    return [s if s is not None else d for s, d in zip(static, dynamic)]


def as_batch(image, name: str = "image"):
    """(image as 4-D, was_batched) for a 3-D or 4-D image; unknown rank is taken as 3-D."""
    image = convert_to_tensor(image, name=name)
    rank = image.shape.ndims
    if rank == 4:
        return image, True
    if rank in (3, None):
        batched = array_ops.expand_dims(image, 0)
        if rank is None:
            batched.set_shape([None] * 4)
        return batched, False
    raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 dimensions.")


def unbatch(image, batched: bool):
    return image if batched else array_ops.squeeze(image, axis=[0])


def at_least_3d(image):
    """`image` after checking it has rank >= 3 (statically, or with an Assert at run time)."""
    rank = image.shape.ndims
    if rank is not None:
        if rank < 3:
            raise ValueError(f"'image' (shape {image.shape}) must be at least three-dimensional.")
        if all(d is not None for d in image.shape.as_list()[-3:]) and 0 in (
                image.shape.as_list()[-3:]):
            raise ValueError(f"all dims of 'image.shape' must be > 0: {image.shape}")
        return image

    ok = math_ops.greater_equal(array_ops.rank(image), 3)
    return depends(check(ok, ValueError, "'image' must be at least three-dimensional."), image)
