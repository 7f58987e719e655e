"""DecodeAndCropJpeg and the JPEG-quality image ops (`tf.image.decode_and_crop_jpeg`,
`adjust_jpeg_quality`, `random_jpeg_quality`), on the Pillow codec of `codecs.py`.

`random_jpeg_quality` draws its quality once, when the graph is built (TensorFlow 1.15 does
too): from `np.random.RandomState(seed)`, so a given seed always gives the same quality.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.formats import pillow_codecs
from tensorflux.ops.image import codecs
from tensorflux.ops.image.color import convert_image_dtype

__all__: list = []

DecodeAndCropJpeg = define_op(
    "DecodeAndCropJpeg", inputs=["contents: string", "crop_window: int32"],
    outputs=["image: uint8"],
    attrs=["channels: int = 0", "ratio: int = 1", "fancy_upscaling: bool = True",
           "try_recover_truncated: bool = False", "acceptable_fraction: float = 1.0",
           "dct_method: string = ''"], differentiable=False)


@DecodeAndCropJpeg.shape_fn(value_inputs=("crop_window",))
def _decode_and_crop_shape(contents, crop_window, *, channels):
    codecs._scalar_contents(contents)
    depth = channels if channels else None
    if crop_window is None:
        return TensorShape([None, None, depth])
    window = np.ravel(crop_window)
    if window.size != 4:
        raise ValueError(f"crop_window must have 4 elements (y, x, height, width), got "
                         f"{window.tolist()}")
    return TensorShape([int(window[2]), int(window[3]), depth])


@DecodeAndCropJpeg.kernel(factory=True)
def _decode_and_crop_kernel(channels, ratio):
    if channels not in (0, 1, 3):
        raise codecs._invalid(f"channels must be 0, 1, or 3, got {channels}")
    if ratio not in (1, 2, 4, 8):
        raise codecs._invalid(f"ratio must be 1, 2, 4, or 8, got {ratio}")

    def decode_and_crop(contents, crop_window):
        window = np.ravel(crop_window)
        if window.size != 4:
            raise codecs._invalid(f"crop_window must have 4 elements, got {window.tolist()}")
        data = codecs._contents(contents)
        if pillow_codecs.sniff(data) != "jpeg":
            raise codecs._invalid("Invalid JPEG data: DecodeAndCropJpeg reads JPEG only")
        image = codecs._jpeg(data, channels, ratio)
        y, x, height, width = (int(v) for v in window)
        rows, cols = image.shape[:2]
        if min(y, x) < 0 or height <= 0 or width <= 0 or y + height > rows or x + width > cols:
            raise codecs._invalid(
                f"Invalid JPEG data or crop window: window (y={y}, x={x}, height={height}, "
                f"width={width}) does not fit the {rows}x{cols} image")
        return np.ascontiguousarray(image[y:y + height, x:x + width])

    return decode_and_crop


def decode_and_crop_jpeg(contents, crop_window, channels=0, ratio=1, fancy_upscaling=True,
                         try_recover_truncated=False, acceptable_fraction=1, dct_method="",
                         name=None):
    """Decodes a JPEG and returns the `crop_window` = [y, x, height, width] part of it.

    Returns:
        uint8 [height, width, channels].

    Raises:
        InvalidArgumentError (when run): not a JPEG, or the window leaves the image.
    """
    return DecodeAndCropJpeg(contents, crop_window, channels=channels, ratio=ratio,
                             fancy_upscaling=fancy_upscaling,
                             try_recover_truncated=try_recover_truncated,
                             acceptable_fraction=acceptable_fraction, dct_method=dct_method,
                             name=name)


def _quality(jpeg_quality) -> int:
    value = jpeg_quality
    if not isinstance(value, (int, np.integer)):
        value = constant_value(convert_to_tensor(jpeg_quality))
        if value is None:
            raise TypeError("jpeg_quality must be a Python int or a constant (TF 1.15's "
                            "EncodeJpeg takes the quality as an attr)")
    return int(value)


def adjust_jpeg_quality(image, jpeg_quality, name=None):
    """`image` after a JPEG round trip at `jpeg_quality` (0-100), in its own dtype.

    Args:
        image: [height, width, 1 or 3] image (any dtype convert_image_dtype takes).
        jpeg_quality: int 0-100.
        name: optional name.

    Returns:
        The re-decoded image, converted back to `image`'s dtype.
    """
    with _scope(name, "adjust_jpeg_quality"):
        image = convert_to_tensor(image, name="image")
        original = image.dtype.base_dtype
        encoded = codecs.EncodeJpeg(convert_image_dtype(image, dtypes.uint8),
                                    quality=_quality(jpeg_quality))
        return convert_image_dtype(codecs.DecodeJpeg(encoded), original)


def random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed=None):
    """`adjust_jpeg_quality` with a quality drawn from [min_jpeg_quality, max_jpeg_quality).

    Raises:
        ValueError: a bound outside 0-100, or min >= max.
    """
    if not (0 <= min_jpeg_quality <= 100 and 0 <= max_jpeg_quality <= 100):
        raise ValueError("jpeg encoding range must be between 0 and 100.")
    if min_jpeg_quality >= max_jpeg_quality:
        raise ValueError("`min_jpeg_quality` must be less than `max_jpeg_quality`.")
    quality = np.random.RandomState(seed).randint(min_jpeg_quality, max_jpeg_quality)
    return adjust_jpeg_quality(image, int(quality))
