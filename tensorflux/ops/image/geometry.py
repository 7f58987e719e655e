"""tf.image geometry: flips (fixed and random), transposes and rotations, crops and pads to a
bounding box, central crops, crop-or-pad and pad-preserving resizes, and `tf.random_crop`.

All of these are compositions of existing ops (ReverseV2, Transpose, Slice, Pad, random
uniforms), so their gradients come for free. Images are `[height, width, channels]` or batches
`[batch, height, width, channels]`; sizes may be Python ints or scalar tensors, and checks that
can be decided while building the graph raise ValueError then, the rest become Assert ops.

This module is also the hub that `tensorflux.image` re-exports from: resizing lives in
`image_resize_ops`, colors in `image_color_ops`, codecs in `image_codec_ops`.
"""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.framework.scopes import op_name_scope as scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.debug import logging as logging_ops
from tensorflux.ops.image.resize import resize_images
from tensorflux.ops.image.util import (
    as_batch,
    at_least_3d,
    check,
    depends,
    image_dims,
    is_tensor,
    static_value,
    unbatch,
)
from tensorflux.ops.random import stateful as random_ops

__all__ = ["random_crop"]


def _by_rank(image, rank3, rank4):
    """rank3(image) or rank4(image) by static rank, or a cond on the runtime rank."""
    rank = image.shape.ndims
    if rank == 3:
        return rank3()
    if rank == 4:
        return rank4()
    if rank is None:
        return control_flow_ops.cond(math_ops.equal(array_ops.rank(image), 3), rank3, rank4)
    raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 dimensions.")


def _keep_rank3_shape(image, result):
    if image.shape.ndims == 3:
        result.set_shape(image.shape)
    return result


# -- flips ----------------------------------------------------------------------------------

def _flip(image, axis: int, name: str):
    with scope(None, name):
        image = at_least_3d(convert_to_tensor(image, name="image"))
        return _by_rank(image,
                        lambda: _keep_rank3_shape(image, array_ops.reverse(image, [axis])),
                        lambda: array_ops.reverse(image, [axis + 1]))


def flip_left_right(image):
    """Mirrors `image` (3-D or 4-D) along its width."""
    return _flip(image, 1, "flip_left_right")


def flip_up_down(image):
    """Mirrors `image` (3-D or 4-D) along its height."""
    return _flip(image, 0, "flip_up_down")


def _random_flip(image, axis: int, seed, name: str):
    with scope(None, name) as scope_name:
        image = at_least_3d(convert_to_tensor(image, name="image"))

        def rank3():
            coin = random_ops.random_uniform([], 0, 1.0, seed=seed)
            flipped = control_flow_ops.cond(math_ops.less(coin, 0.5),
                                            lambda: array_ops.reverse(image, [axis]),
                                            lambda: image, name=scope_name)
            return _keep_rank3_shape(image, flipped)

        def rank4():
            batch = array_ops.shape(image)[0]
            coins = random_ops.random_uniform(array_ops.stack([batch]), 0, 1.0, seed=seed)
            flips = math_ops.cast(math_ops.round(array_ops.reshape(coins, [-1, 1, 1, 1])),
                                  image.dtype.base_dtype)
            return flips * array_ops.reverse(image, [axis + 1]) + (1 - flips) * image

        return _by_rank(image, rank3, rank4)


def random_flip_left_right(image, seed=None):
    """Mirrors `image` along its width with probability 1/2 (each image of a batch on its own)."""
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """Mirrors `image` along its height with probability 1/2 (each image of a batch on its own)."""
    return _random_flip(image, 0, seed, "random_flip_up_down")


def transpose_image(image, name=None):
    """Swaps height and width of a 3-D or 4-D image."""
    with scope(name, "transpose"):
        image = at_least_3d(convert_to_tensor(image, name="image"))
        return _by_rank(image, lambda: array_ops.transpose(image, [1, 0, 2]),
                        lambda: array_ops.transpose(image, [0, 2, 1, 3]))


transpose = transpose_image


def rot90(image, k=1, name=None):
    """Rotates `image` counter-clockwise by `k` quarter turns (`k` may be a tensor).

    Raises:
        ValueError: `image` is not 3-D or 4-D.
    """
    with scope(name, "rot90") as scope_name:
        image = at_least_3d(convert_to_tensor(image, name="image"))
        static_k = static_value(k)
        k = math_ops.mod(convert_to_tensor(k, dtype=dtypes.int32, name="k"), 4)
        k.shape.assert_has_rank(0)

        def turns(h, w, perm):
            rotations = {
                1: lambda: array_ops.transpose(array_ops.reverse(image, [w]), perm),
                2: lambda: array_ops.reverse(image, [h, w]),
                3: lambda: array_ops.reverse(array_ops.transpose(image, perm), [w]),
            }
            if static_k is not None:
                turn = int(static_k) % 4
                return rotations[turn]() if turn else array_ops.identity(image)
            cases = [(math_ops.equal(k, n), rotations[n]) for n in (1, 2, 3)]
            return control_flow_ops.case(cases, default=lambda: image, exclusive=True,
                                         name=scope_name)

        def rank3():
            result = turns(0, 1, [1, 0, 2])
            result.set_shape([None, None, image.shape[-1]])
            return result

        def rank4():
            result = turns(1, 2, [0, 2, 1, 3])
            result.set_shape([image.shape[0], None, None, image.shape[-1]])
            return result

        return _by_rank(image, rank3, rank4)


# -- crops and pads -------------------------------------------------------------------------

def _static_shape(values) -> list:
    return [None if is_tensor(v) else v for v in values]


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """Pads `image` with zeros to `target_height` x `target_width`, placing it at the offsets.

    Raises:
        ValueError: statically known offsets are negative or the image does not fit.
    """
    with scope(None, "pad_to_bounding_box"):
        image, batched = as_batch(image)
        batch, height, width, depth = image_dims(image, 4)
        after_w = target_width - offset_width - width
        after_h = target_height - offset_height - height
        checks = (check(offset_height >= 0, ValueError, "offset_height must be >= 0")
                  + check(offset_width >= 0, ValueError, "offset_width must be >= 0")
                  + check(after_w >= 0, ValueError, "width must be <= target - offset")
                  + check(after_h >= 0, ValueError, "height must be <= target - offset"))
        image = depends(checks, image)
        paddings = array_ops.reshape(array_ops.stack(
            [0, 0, offset_height, after_h, offset_width, after_w, 0, 0]), [4, 2])
        padded = array_ops.pad(image, paddings)
        padded.set_shape(_static_shape([batch, target_height, target_width, depth]))
        return unbatch(padded, batched)


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The `target_height` x `target_width` window of `image` at the given offsets.

    Raises:
        ValueError: statically known arguments do not describe a window inside the image.
    """
    with scope(None, "crop_to_bounding_box"):
        image, batched = as_batch(image)
        batch, height, width, depth = image_dims(image, 4)
        checks = (check(offset_width >= 0, ValueError, "offset_width must be >= 0.")
                  + check(offset_height >= 0, ValueError, "offset_height must be >= 0.")
                  + check(target_width > 0, ValueError, "target_width must be > 0.")
                  + check(target_height > 0, ValueError, "target_height must be > 0.")
                  + check(width >= target_width + offset_width, ValueError,
                          "width must be >= target + offset.")
                  + check(height >= target_height + offset_height, ValueError,
                          "height must be >= target + offset."))
        image = depends(checks, image)
        cropped = array_ops.slice(image, array_ops.stack([0, offset_height, offset_width, 0]),
                                  array_ops.stack([-1, target_height, target_width, -1]))
        cropped.set_shape(_static_shape([batch, target_height, target_width, depth]))
        return unbatch(cropped, batched)


def _max(x, y):
    return math_ops.maximum(x, y) if is_tensor(x) or is_tensor(y) else max(x, y)


def _min(x, y):
    return math_ops.minimum(x, y) if is_tensor(x) or is_tensor(y) else min(x, y)


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """Centrally crops and/or zero-pads `image` to `target_height` x `target_width`.

    Raises:
        ValueError: a statically known target size is not positive.
    """
    with scope(None, "resize_image_with_crop_or_pad"):
        image, batched = as_batch(image)
        checks = (check(target_width > 0, ValueError, "target_width must be > 0.")
                  + check(target_height > 0, ValueError, "target_height must be > 0."))
        image = depends(checks, image)
        _, height, width, _ = image_dims(image, 4)
        width_diff = target_width - width
        height_diff = target_height - height
        cropped = crop_to_bounding_box(image, _max(-height_diff // 2, 0),
                                       _max(-width_diff // 2, 0), _min(target_height, height),
                                       _min(target_width, width))
        resized = pad_to_bounding_box(cropped, _max(height_diff // 2, 0),
                                      _max(width_diff // 2, 0), target_height, target_width)
        return unbatch(resized, batched)


resize_with_crop_or_pad = resize_image_with_crop_or_pad


def resize_image_with_pad(image, target_height, target_width, method=0, align_corners=False):
    """Resizes `image` to fit in the target keeping its aspect ratio, then zero-pads it.

    Returns:
        The resized, padded image (float32 unless `method` is NEAREST_NEIGHBOR).
    """
    with scope(None, "resize_image_with_pad"):
        image, batched = as_batch(image)
        checks = (check(target_width > 0, ValueError, "target_width must be > 0.")
                  + check(target_height > 0, ValueError, "target_height must be > 0."))
        image = depends(checks, image)
        _, height, width, _ = image_dims(image, 4)
        f_height = math_ops.cast(height, dtypes.float32)
        f_width = math_ops.cast(width, dtypes.float32)
        f_target_h = math_ops.cast(target_height, dtypes.float32)
        f_target_w = math_ops.cast(target_width, dtypes.float32)
        ratio = math_ops.maximum(f_width / f_target_w, f_height / f_target_h)
        new_h_float, new_w_float = f_height / ratio, f_width / ratio
        new_h = math_ops.cast(math_ops.floor(new_h_float), dtypes.int32)
        new_w = math_ops.cast(math_ops.floor(new_w_float), dtypes.int32)
        pad_h = math_ops.maximum(0, math_ops.cast(
            math_ops.floor((f_target_h - new_h_float) / 2), dtypes.int32))
        pad_w = math_ops.maximum(0, math_ops.cast(
            math_ops.floor((f_target_w - new_w_float) / 2), dtypes.int32))
        resized = resize_images(image, array_ops.stack([new_h, new_w]), method,
                                align_corners=align_corners)
        padded = pad_to_bounding_box(resized, pad_h, pad_w, target_height, target_width)
        return unbatch(padded, batched)


def central_crop(image, central_fraction):
    """The central `central_fraction` (in (0, 1]) of `image`'s height and width.

    Raises:
        ValueError: a constant `central_fraction` is outside (0, 1], or the rank is not 3 or 4.
    """
    with scope(None, "central_crop"):
        image = convert_to_tensor(image, name="image")
        fraction = static_value(central_fraction)
        if fraction is not None:
            if fraction <= 0.0 or fraction > 1.0:
                raise ValueError("central_fraction must be within (0, 1]")
            if fraction == 1.0:
                return image
        else:
            ok = math_ops.logical_and(central_fraction > 0.0, central_fraction <= 1.0)
            image = depends(check(ok, ValueError, "central_fraction must be within (0, 1]"),
                            image)
        image = at_least_3d(image)
        rank = image.shape.ndims
        if rank not in (3, 4):
            raise ValueError(f"`image` should either be a Tensor with rank = 3 or rank = 4. "
                             f"Had rank = {rank}.")
        dims = image_dims(image, rank)
        height, width = dims[-3], dims[-2]

        def start(size):
            if fraction is not None and not is_tensor(size):
                return int((float(size) - float(size) * fraction) / 2)
            size_d = math_ops.cast(size, dtypes.float64)
            share = math_ops.cast(central_fraction, dtypes.float64)
            return math_ops.cast((size_d - size_d * share) / 2, dtypes.int32)

        top, left = start(height), start(width)
        crop_h, crop_w = height - top * 2, width - left * 2
        lead = [0] if rank == 4 else []
        begin = array_ops.stack(lead + [top, left, 0])
        size = array_ops.stack(([-1] if rank == 4 else []) + [crop_h, crop_w, -1])
        cropped = array_ops.slice(image, begin, size)
        static = _static_shape([crop_h, crop_w])
        cropped.set_shape(([image.shape[0]] if rank == 4 else []) + static + [image.shape[-1]])
        return cropped


def random_crop(value, size, seed=None, name=None):
    """A random `size` slice of `value` (every dimension; TF1 `tf.random_crop`).

    Args:
        value: the tensor to crop.
        size: 1-D int32, one entry per dimension of `value`.
        seed: op-level seed (see `tf.set_random_seed`).
        name: optional name.

    Returns:
        A tensor of shape `size`; fails at run time when `value` is smaller than `size`.

    Example:
        >>> tf.random_crop(image, [24, 24, 3], seed=1)
    """
    with scope(name, "random_crop") as name:
        value = convert_to_tensor(value, name="value")
        size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        shape = array_ops.shape(value)
        fits = logging_ops.Assert(math_ops.reduce_all(math_ops.greater_equal(shape, size)),
                                  ["Need value.shape >= size, got ", shape, size],
                                  summarize=1000)
        shape = control_flow_ops.with_dependencies([fits], shape)
        limit = shape - size + 1
        offset = random_ops.random_uniform(array_ops.shape(shape), dtype=dtypes.int32,
                                           maxval=dtypes.int32.max, seed=seed) % limit
        return array_ops.slice(value, offset, size, name=name)
