"""`tf.contrib.image` projective transforms: transform, rotate, translate and the helpers that
build, compose and convert the 8-parameter transforms (TF 1.15's signatures and checks).

A transform `[a0, a1, a2, b0, b1, b2, c0, c1]` maps output points to input points (see
`tensorflux.ops.image.projective`); it is the matrix `[[a0, a1, a2], [b0, b1, b2], [c0, c1, 1]]`.
"""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.framework.scopes import name_scope
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.image.projective import ImageProjectiveTransformV2

__all__ = ["transform", "rotate", "translate", "angles_to_projective_transforms",
           "translations_to_projective_transforms", "compose_transforms",
           "flat_transforms_to_matrices", "matrices_to_flat_transforms"]

_IMAGE_DTYPES = frozenset([dtypes.uint8, dtypes.int32, dtypes.int64, dtypes.float16,
                           dtypes.float32, dtypes.float64])


def _as_batch(images):
    """(images as [batch, height, width, channels], their original rank)."""
    if images.dtype.base_dtype not in _IMAGE_DTYPES:
        raise TypeError(f"Invalid dtype {images.dtype.name}: images must be one of uint8, int32, "
                        f"int64, float16, float32, float64")
    rank = images.shape.ndims
    if rank is None:
        raise TypeError("image_or_images rank must be statically known")
    if rank == 2:
        return images[None, :, :, None], rank
    if rank == 3:
        return images[None, :, :, :], rank
    if rank == 4:
        return images, rank
    raise TypeError(f"Images should have rank between 2 and 4, got rank {rank}")


def _restore_rank(output, rank: int):
    if rank == 2:
        return output[0, :, :, 0]
    if rank == 3:
        return output[0, :, :, :]
    return output


def transform(images, transforms, interpolation="NEAREST", output_shape=None, name=None):
    """Applies projective transforms to images (zero fill outside).

    Args:
        images: [height, width], [height, width, channels] or [batch, height, width,
            channels]; uint8, int32, int64, float16, float32 or float64.
        transforms: [8] (one for all images) or [batch, 8] float32 transforms mapping output
            points to input points.
        interpolation: "NEAREST" or "BILINEAR" (any case).
        output_shape: [new_height, new_width] (default: the input's).
        name: op name.

    Returns:
        The transformed images, of the input's rank and dtype.

    Raises:
        TypeError: bad dtype or rank of images or transforms.
        ValueError: output_shape is not 2 elements; unknown interpolation.

    Example:
        >>> shifted = tf.contrib.image.transform(img, [1, 0, -2, 0, 1, 0, 0, 0])  # 2 px right
    """
    with name_scope(name, "transform", [images, transforms]):
        images = convert_to_tensor(images, name="images")
        batched, rank = _as_batch(images)
        if output_shape is None:
            output_shape = array_ops.shape(batched)[1:3]
            value = constant_value(output_shape)
            if value is not None:
                output_shape = value
        output_shape = convert_to_tensor(output_shape, dtypes.int32, name="output_shape")
        if not output_shape.shape.is_compatible_with([2]):
            raise ValueError("output_shape must be a 1-D Tensor of 2 elements: new_height, "
                             f"new_width; got shape {output_shape.shape}")
        transforms = convert_to_tensor(transforms, dtype=dtypes.float32, name="transforms")
        if transforms.shape.ndims is None:
            raise TypeError("transform_or_transforms rank must be statically known")
        if transforms.shape.ndims == 1:
            transforms = transforms[None]
        elif transforms.shape.ndims != 2:
            raise TypeError(f"Transforms should have rank 1 or 2, got rank "
                            f"{transforms.shape.ndims}")
        if not isinstance(interpolation, str) or interpolation.upper() not in ("NEAREST",
                                                                               "BILINEAR"):
            raise ValueError(f"interpolation must be 'NEAREST' or 'BILINEAR', got "
                             f"{interpolation!r}")
        output = ImageProjectiveTransformV2(batched, transforms, output_shape,
                                            interpolation=interpolation.upper())
        return _restore_rank(output, rank)


def _image_size(images):
    """(height, width) of images as float32 (Python floats when static)."""
    shape = images.shape
    dims = [shape._dim_list[1], shape._dim_list[2]]
    if all(d is not None for d in dims):
        return float(dims[0]), float(dims[1])
    dynamic = math_ops.cast(array_ops.shape(images)[1:3], dtypes.float32)
    return dynamic[0], dynamic[1]


def rotate(images, angles, interpolation="NEAREST", name=None):
    """Rotates images counterclockwise by `angles` radians about their centers.

    Args:
        images: as for `transform`.
        angles: a scalar angle, or one per image ([batch]).
        interpolation: "NEAREST" or "BILINEAR".
        name: op name.

    Returns:
        The rotated images (zero fill outside), of the input's rank and dtype.

    Raises:
        TypeError: bad dtype or rank of images or angles.
    """
    with name_scope(name, "rotate", [images, angles]):
        images = convert_to_tensor(images, name="images")
        batched, rank = _as_batch(images)
        height, width = _image_size(batched)
        output = transform(batched, angles_to_projective_transforms(angles, height, width),
                           interpolation=interpolation)
        return _restore_rank(output, rank)


def translate(images, translations, interpolation="NEAREST", name=None):
    """Translates images by `translations` = [dx, dy] (or one pair per image).

    Returns:
        The translated images (zero fill), of the input's rank and dtype.

    Raises:
        TypeError: bad dtype or rank of images or translations.
    """
    with name_scope(name, "translate", [images, translations]):
        return transform(images, translations_to_projective_transforms(translations),
                         interpolation=interpolation)


def angles_to_projective_transforms(angles, image_height, image_width, name=None):
    """The transforms rotating images of the given size counterclockwise about their centers.

    Args:
        angles: a scalar or a [num_angles] vector of angles in radians.
        image_height, image_width: the image size (numbers or float32 scalars).
        name: op name.

    Returns:
        [num_angles, 8] float32 transforms.

    Raises:
        TypeError: angles of rank > 1.
    """
    with name_scope(name, "angles_to_projective_transforms"):
        angles = convert_to_tensor(angles, dtype=dtypes.float32, name="angles")
        if angles.shape.ndims == 0:
            angles = angles[None]
        elif angles.shape.ndims != 1:
            raise TypeError(f"Angles should have rank 0 or 1, got shape {angles.shape}")
        image_height = math_ops.cast(image_height, dtypes.float32)
        image_width = math_ops.cast(image_width, dtypes.float32)
        cos, sin = math_ops.cos(angles), math_ops.sin(angles)
        x_offset = ((image_width - 1) - (cos * (image_width - 1) - sin * (image_height - 1))) / 2.0
        y_offset = ((image_height - 1) - (sin * (image_width - 1) + cos * (image_height - 1))) / 2.0
        num_angles = array_ops.shape(angles)[0]
        return array_ops.concat(
            [cos[:, None], -sin[:, None], x_offset[:, None], sin[:, None], cos[:, None],
             y_offset[:, None], array_ops.zeros(array_ops.stack([num_angles, 2]), dtypes.float32)],
            axis=1)


def translations_to_projective_transforms(translations, name=None):
    """The transforms translating images by [dx, dy] (one pair, or [num_translations, 2]).

    Returns:
        [num_translations, 8] float32 transforms.

    Raises:
        TypeError: translations of unknown rank or rank other than 1 or 2.
    """
    with name_scope(name, "translations_to_projective_transforms"):
        translations = convert_to_tensor(translations, dtype=dtypes.float32,
                                         name="translations")
        if translations.shape.ndims is None:
            raise TypeError("translation_or_translations rank must be statically known")
        if translations.shape.ndims == 1:
            translations = translations[None]
        elif translations.shape.ndims != 2:
            raise TypeError(f"Translations should have rank 1 or 2, got shape "
                            f"{translations.shape}")
        num = array_ops.shape(translations)[0]
        ones = array_ops.ones(array_ops.stack([num, 1]), dtypes.float32)
        zeros = array_ops.zeros(array_ops.stack([num, 1]), dtypes.float32)
        return array_ops.concat([ones, zeros, -translations[:, 0, None], zeros, ones,
                                 -translations[:, 1, None], zeros, zeros], axis=1)


def flat_transforms_to_matrices(transforms):
    """[N, 8] (or [8]) flat transforms as [N, 3, 3] matrices (last entry 1)."""
    with name_scope(None, "flat_transforms_to_matrices"):
        transforms = array_ops.reshape(convert_to_tensor(transforms, name="transforms"), [-1, 8])
        num = array_ops.shape(transforms)[0]
        ones = array_ops.ones(array_ops.stack([num, 1]), transforms.dtype.base_dtype)
        return array_ops.reshape(array_ops.concat([transforms, ones], axis=1), [-1, 3, 3])


def matrices_to_flat_transforms(transform_matrices):
    """[N, 3, 3] matrices as [N, 8] flat transforms (each normalized so its last entry is 1)."""
    with name_scope(None, "matrices_to_flat_transforms"):
        matrices = convert_to_tensor(transform_matrices, name="transform_matrices")
        flat = array_ops.reshape(matrices, [-1, 9])
        flat = flat / flat[:, 8:9]
        return flat[:, :8]


def compose_transforms(*transforms):
    """One transform equal to applying the given ones in order of the list, right to left:
    `compose_transforms(a, b)` samples through `a` then `b` (matrix product a @ b).

    Raises:
        ValueError: no transforms.
    """
    if not transforms:
        raise ValueError("compose_transforms: transforms cannot be empty")
    with name_scope(None, "compose_transforms"):
        composed = flat_transforms_to_matrices(transforms[0])
        for t in transforms[1:]:
            composed = math_ops.matmul(composed, flat_transforms_to_matrices(t))
        return matrices_to_flat_transforms(composed)

