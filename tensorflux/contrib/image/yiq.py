"""`tf.contrib.image.adjust_hsv_in_yiq` and `random_yiq_hsv` (TF 1.15): hue, saturation and
value changes applied as one linear map in YIQ space.

An RGB pixel goes to YIQ, its chroma (I, Q) is rotated by `delta_hue` and scaled by
`scale_saturation`, all of it is scaled by `scale_value`, and it comes back to RGB. The
conversion matrices are TF's (NTSC YIQ and its inverse to 8 digits); images of other dtypes
are converted to float32 and back, as TF's wrapper does.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.scopes import name_scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import dimension_value
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.image.color import convert_image_dtype
from tensorflux.ops.random import stateful as random_ops

__all__ = ["adjust_hsv_in_yiq", "random_yiq_hsv"]

# Row-vector forms: yiq_row = rgb_row @ _RGB_TO_YIQ, rgb_row = yiq_row @ _YIQ_TO_RGB.
_RGB_TO_YIQ = np.array([[0.299, 0.596, 0.211],
                        [0.587, -0.274, -0.523],
                        [0.114, -0.322, 0.312]])
_YIQ_TO_RGB = np.array([[1.0, 1.0, 1.0],
                        [0.95617069, -0.2726886, -1.103744],
                        [0.62143257, -0.64681324, 1.70062309]])


def adjust_hsv_in_yiq(image, delta_hue=0, scale_saturation=1, scale_value=1, name=None):
    """Rotates the hue and scales saturation and value of RGB images, in YIQ space.

    Args:
        image: RGB images, [..., 3].
        delta_hue: hue rotation in radians.
        scale_saturation: chroma scale.
        scale_value: brightness scale.
        name: op name.

    Returns:
        The adjusted images, of image's shape and dtype.

    Raises:
        ValueError: the last dimension is not 3.
    """
    with name_scope(name, "adjust_hsv_in_yiq", [image]):
        image = convert_to_tensor(image, name="image")
        channels = (dimension_value(image.shape._dim_list[-1]) if image.shape.ndims else None)
        if image.shape.ndims == 0 or (channels is not None and channels != 3):
            raise ValueError(f"image must have 3 channels (RGB) in its last dimension, got "
                             f"shape {image.shape}")
        orig_dtype = image.dtype.base_dtype
        work = orig_dtype if orig_dtype in (dtypes.float32, dtypes.float64) else dtypes.float32
        flt = convert_image_dtype(image, work)
        hue = math_ops.cast(delta_hue, work)
        vsu = math_ops.cast(scale_value, work) * math_ops.cast(scale_saturation, work) * \
            math_ops.cos(hue)
        vsw = math_ops.cast(scale_value, work) * math_ops.cast(scale_saturation, work) * \
            math_ops.sin(hue)
        zero = array_ops.zeros([], work)
        value = math_ops.cast(scale_value, work)
        hsv = array_ops.stack([array_ops.stack([value, zero, zero]),
                               array_ops.stack([zero, vsu, vsw]),
                               array_ops.stack([zero, -vsw, vsu])])
        transform = math_ops.matmul(math_ops.matmul(array_ops.constant(_RGB_TO_YIQ, work), hsv),
                                    array_ops.constant(_YIQ_TO_RGB, work))
        flat = array_ops.reshape(flt, [-1, 3])
        out = array_ops.reshape(math_ops.matmul(flat, transform), array_ops.shape(flt))
        out.set_shape(image.shape)
        return convert_image_dtype(out, orig_dtype, saturate=True)


def random_yiq_hsv(image, max_delta_hue=0, lower_saturation=1, upper_saturation=1,
                   lower_value=1, upper_value=1, seed=None):
    """`adjust_hsv_in_yiq` with a hue shift uniform in [-max_delta_hue, max_delta_hue] and
    saturation and value scales uniform in their ranges.

    Raises:
        ValueError: a negative max_delta_hue or lower bound, or a lower bound above its upper.
    """
    if max_delta_hue < 0:
        raise ValueError("max_delta must be non-negative.")
    if lower_saturation < 0:
        raise ValueError("lower_saturation must be non-negative.")
    if lower_value < 0:
        raise ValueError("lower_value must be non-negative.")
    if lower_saturation > upper_saturation:
        raise ValueError("lower_saturation must be < upper_saturation.")
    if lower_value > upper_value:
        raise ValueError("lower_value must be < upper_value.")

    def draw(low, high):
        if low == high:
            return low
        return random_ops.random_uniform([], low, high, seed=seed)

    delta_hue = 0 if max_delta_hue == 0 else draw(-max_delta_hue, max_delta_hue)
    return adjust_hsv_in_yiq(image, delta_hue, draw(lower_saturation, upper_saturation),
                             draw(lower_value, upper_value))
