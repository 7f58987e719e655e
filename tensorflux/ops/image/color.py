"""Color and value adjustments: AdjustContrastv2, AdjustHue, AdjustSaturation, RGBToHSV and
HSVToRGB ops, plus convert_image_dtype, brightness/contrast/hue/saturation/gamma adjustments
(and their random versions), grayscale conversions and per_image_standardization.

Kernels convert whole images at once (NumPy over all pixels) with the formulas of TensorFlow's
CPU kernels, so values agree to float32 rounding. The Python functions follow TF1's dtype rules:
integer images are converted to float32 in [0, 1], adjusted, and converted back.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.image.util import at_least_3d, check, depends
from tensorflux.ops.random import stateful as random_ops

__all__: list = []


def _invalid(message: str):
    return errors.InvalidArgumentError(None, None, message)


def _rgb_shape(images: TensorShape) -> TensorShape:
    images = images.with_rank_at_least(1)
    if images.ndims is not None:
        last = images._dim_list[-1]
        if last is not None and last != 3:
            raise ValueError(f"input must have 3 channels but input only has {last} channels.")
        return TensorShape(list(images._dim_list[:-1]) + [3])
    return images


def _scalar_shape(value: TensorShape, what: str) -> None:
    if value.ndims not in (None, 0):
        raise ValueError(f"{what} must be scalar, got shape {value}")


def _check_rgb(images: np.ndarray, at_least: int = 1) -> None:
    if images.ndim < at_least:
        raise _invalid(f"input must be at least {at_least}-D, got shape {list(images.shape)}")
    if images.shape[-1] != 3:
        raise _invalid(f"input must have 3 channels but input only has {images.shape[-1]} "
                       f"channels.")


def _check_scalar(value, what: str) -> None:
    if np.ndim(value) != 0:
        raise _invalid(f"{what} must be scalar: {list(np.shape(value))}")


# -- AdjustContrastv2 -----------------------------------------------------------------------

AdjustContrastv2 = define_op(
    "AdjustContrastv2", inputs=["images: T", "contrast_factor: float32"], outputs=["output: T"],
    attrs=["T: {float16, float32} = float32"], differentiable=False)


@AdjustContrastv2.shape_fn
def _adjust_contrast_shape(images, contrast_factor):
    _scalar_shape(contrast_factor, "contrast_factor")
    return images.with_rank_at_least(3)


@AdjustContrastv2.kernel
def _adjust_contrast_kernel(images, contrast_factor):
    if images.ndim < 3:
        raise _invalid(f"input must be at least 3-D, got shape {list(images.shape)}")
    _check_scalar(contrast_factor, "contrast_factor")
    x = images.astype(np.float32, copy=False)
    # NOTE: np.mean's own steps (a float32 sum over height and width, divided in place by the
    # count), without its Python-level argument handling: one image per step in input pipelines.
    mean = np.add.reduce(x, axis=(-3, -2), dtype=np.float32, keepdims=True)
    np.true_divide(mean, x.shape[-3] * x.shape[-2], out=mean)
    out = np.subtract(x, mean)
    np.multiply(out, np.float32(contrast_factor), out=out)
    np.add(out, mean, out=out)
    return out.astype(images.dtype, copy=False)


# -- hue and saturation (TF's CPU formulas, vectorised over pixels) ---------------------------

# For hue sector 0..5, which of (max, mid, min) lands in r, g and b.
_SECTOR_ORDER = np.array([[0, 1, 2], [1, 0, 2], [2, 0, 1], [2, 1, 0], [1, 2, 0], [0, 2, 1]])


def _hue_range(rgb: np.ndarray):
    """(hue in [0, 6), min, max) of each pixel."""
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    high, low = rgb.max(axis=-1), rgb.min(axis=-1)
    spread = high - low
    with np.errstate(divide="ignore", invalid="ignore"):
        hue = np.where(high == r, (g - b) / spread,
                       np.where(high == g, (b - r) / spread + 2, (r - g) / spread + 4))
    hue = np.where(spread == 0, 0, hue).astype(rgb.dtype)
    return np.where(hue < 0, hue + 6, hue), low, high


def _from_hue_range(hue, low, high):
    sector = np.minimum(hue.astype(np.int64), 5)
    ratio = hue - sector
    ratio = np.where(sector % 2 == 1, 1 - ratio, ratio)
    values = np.stack([high, low + ratio * (high - low), low], axis=-1)
    return np.take_along_axis(values, _SECTOR_ORDER[sector], axis=-1)


def _rgb_to_hsv(rgb: np.ndarray) -> np.ndarray:
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    value = rgb.max(axis=-1)
    spread = value - rgb.min(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        saturation = np.where(value > 0, spread / value, 0)
        norm = 1 / (6 * spread)
        hue = np.where(r == value, norm * (g - b),
                       np.where(g == value, norm * (b - r) + 2 / 6, norm * (r - g) + 4 / 6))
    # NOTE: TF's CPU runs with denormals flushed to zero; a denormal spread gives an infinite
    # norm here, and counts as no spread (hue 0) there.
    hue = np.where((spread > 0) & np.isfinite(hue), hue, 0)
    hue = np.where(hue < 0, hue + 1, hue)
    return np.stack([hue, saturation, value], axis=-1).astype(rgb.dtype)


def _hsv_to_rgb(hsv: np.ndarray) -> np.ndarray:
    h, s, v = hsv[..., 0] * 6, hsv[..., 1], hsv[..., 2]
    red = np.clip(np.abs(h - 3) - 1, 0, 1)
    green = np.clip(2 - np.abs(h - 2), 0, 1)
    blue = np.clip(2 - np.abs(h - 4), 0, 1)
    keep = 1 - s
    return (np.stack([keep + s * red, keep + s * green, keep + s * blue], axis=-1)
            * v[..., None]).astype(hsv.dtype)


# The saturation kernel's own HSV -> RGB: sector -> where (chroma, x, 0) go; sector 6 is black.
_CHROMA_ORDER = np.array([[0, 1, 2], [1, 0, 2], [2, 0, 1], [2, 1, 0], [1, 2, 0], [0, 2, 1],
                          [2, 2, 2]])


def _saturation_hsv_to_rgb(hsv: np.ndarray) -> np.ndarray:
    h, s, v = hsv[..., 0] * 6, hsv[..., 1], hsv[..., 2]
    chroma = s * v
    sector = np.clip(h.astype(np.int64), 0, 6)
    wrapped = np.mod(h, 2)
    wrapped = np.where(wrapped <= 0, wrapped + 2, wrapped)
    x = chroma * (1 - np.abs(wrapped - 1))
    parts = np.stack([chroma, x, np.zeros_like(x)], axis=-1)
    rgb = np.take_along_axis(parts, _CHROMA_ORDER[sector], axis=-1)
    return rgb + (v - chroma)[..., None]


def _rgb_op(name: str):
    op = define_op(name, inputs=["images: T", f"{'delta' if name == 'AdjustHue' else 'scale'}: "
                                 "float32"],
                   outputs=["output: T"], attrs=["T: {float16, float32} = float32"],
                   differentiable=False)

    @op.shape_fn
    def _shape(images, amount):
        _scalar_shape(amount, "delta" if name == "AdjustHue" else "scale")
        return _rgb_shape(images.with_rank_at_least(3))

    return op


AdjustHue = _rgb_op("AdjustHue")
AdjustSaturation = _rgb_op("AdjustSaturation")


@AdjustHue.kernel
def _adjust_hue_kernel(images, delta):
    _check_rgb(images, 3)
    _check_scalar(delta, "delta")
    hue, low, high = _hue_range(images.astype(np.float32, copy=False))
    hue = np.mod(hue + np.float32(delta) * np.float32(6), np.float32(6))
    hue = np.where(hue >= 6, hue - 6, hue)
    return _from_hue_range(hue, low, high).astype(images.dtype, copy=False)


@AdjustSaturation.kernel
def _adjust_saturation_kernel(images, scale):
    _check_rgb(images, 3)
    _check_scalar(scale, "scale")
    hsv = _rgb_to_hsv(images.astype(np.float32, copy=False))
    hsv[..., 1] = np.clip(hsv[..., 1] * np.float32(scale), 0, 1)
    return _saturation_hsv_to_rgb(hsv).astype(images.dtype, copy=False)


# -- RGBToHSV, HSVToRGB ---------------------------------------------------------------------

_HSV_T = "T: {float16, bfloat16, float32, float64} = float32"
RGBToHSV = define_op("RGBToHSV", inputs=["images: T"], outputs=["output: T"], attrs=[_HSV_T],
                     differentiable=False)
HSVToRGB = define_op("HSVToRGB", inputs=["images: T"], outputs=["output: T"], attrs=[_HSV_T],
                     differentiable=False)


@RGBToHSV.shape_fn
def _rgb_to_hsv_shape(images):
    return _rgb_shape(images)


@HSVToRGB.shape_fn
def _hsv_to_rgb_shape(images):
    return _rgb_shape(images)


def _work(images: np.ndarray) -> np.ndarray:
    return images if images.dtype == np.float64 else images.astype(np.float32)


@RGBToHSV.kernel
def _rgb_to_hsv_kernel(images):
    _check_rgb(images)
    return _rgb_to_hsv(_work(images)).astype(images.dtype, copy=False)


@HSVToRGB.kernel
def _hsv_to_rgb_kernel(images):
    _check_rgb(images)
    return _hsv_to_rgb(_work(images)).astype(images.dtype, copy=False)


# -- Python wrappers --------------------------------------------------------------------------

def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Converts `image` to `dtype`, rescaling values (TF1 `tf.image.convert_image_dtype`).

    Floats live in [0, 1], integers in [0, MAX]. Integer -> float multiplies by 1 / MAX;
    float -> integer multiplies by (MAX + 0.5) and truncates (clamping first when `saturate`);
    integer -> integer shifts by the ratio of the ranges; float -> float is a cast.

    Args:
        image: a numeric image tensor.
        dtype: the target dtype.
        saturate: clamp to the target range before casting.
        name: optional name.

    Returns:
        `image` in `dtype`.

    Raises:
        AttributeError: `dtype` or `image`'s dtype is neither integer nor floating.

    Example:
        >>> tf.image.convert_image_dtype(tf.constant([0, 255], tf.uint8), tf.float32)  # [0., 1.]
    """
    image = convert_to_tensor(image, name="image")
    dtype = dtypes.as_dtype(dtype)
    source = image.dtype.base_dtype
    if not (dtype.is_floating or dtype.is_integer):
        raise AttributeError("dtype must be either floating point or integer")
    if not (source.is_floating or source.is_integer):
        raise AttributeError("image dtype must be either floating point or integer")
    if dtype == source:
        return array_ops.identity(image, name=name)
    cast = math_ops.saturate_cast if saturate else math_ops.cast
    with scope(name, "convert_image") as name:
        if source.is_integer and dtype.is_integer:
            in_max, out_max = source.max, dtype.max
            if in_max > out_max:
                scaled = math_ops.floordiv(image, (in_max + 1) // (out_max + 1))
                return cast(scaled, dtype, name=name)
            return math_ops.multiply(cast(image, dtype), (out_max + 1) // (in_max + 1),
                                     name=name)
        if source.is_floating and dtype.is_floating:
            return math_ops.cast(image, dtype, name=name)
        if source.is_integer:
            return math_ops.multiply(math_ops.cast(image, dtype), 1.0 / source.max, name=name)
        scaled = math_ops.multiply(image, dtype.max + 0.5)
        return cast(scaled, dtype, name=name)


def _as_float(image):
    """(float image, original dtype): float16/float32 stay, others go to float32 in [0, 1]."""
    image = convert_to_tensor(image, name="image")
    original = image.dtype.base_dtype
    if original in (dtypes.float16, dtypes.float32):
        return image, original
    return convert_image_dtype(image, dtypes.float32), original


def adjust_brightness(image, delta):
    """Adds `delta` to every value (in [0, 1] float terms); integers saturate on the way back.

    Returns:
        The brightened image, in `image`'s dtype.
    """
    with scope(None, "adjust_brightness") as name:
        flt, original = _as_float(image)
        adjusted = math_ops.add(flt, math_ops.cast(delta, flt.dtype), name=name)
        return convert_image_dtype(adjusted, original, saturate=True)


def adjust_contrast(images, contrast_factor):
    """`(x - mean) * contrast_factor + mean` per image and channel (mean over height, width)."""
    with scope(None, "adjust_contrast") as name:
        flt, original = _as_float(images)
        factor = convert_to_tensor(contrast_factor, dtype=dtypes.float32)
        adjusted = AdjustContrastv2(flt, factor, name=name)
        return convert_image_dtype(adjusted, original, saturate=True)


def adjust_gamma(image, gamma=1, gain=1):
    """`gain * image ** gamma` in [0, 1] float terms (gamma must be >= 0).

    Raises:
        ValueError: a constant `gamma` is negative.
    """
    with scope(None, "adjust_gamma"):
        flt, original = _as_float(image)
        checks = check(gamma >= 0, ValueError, "Gamma should be a non-negative real number.")
        gamma = depends(checks, gamma)
        adjusted = gain * flt ** math_ops.cast(gamma, flt.dtype)
        return convert_image_dtype(adjusted, original, saturate=True)


def adjust_hue(image, delta, name=None):
    """Rotates the hue of RGB `image` by `delta` (a fraction of the circle, in [-1, 1])."""
    with scope(name, "adjust_hue"):
        flt, original = _as_float(image)
        adjusted = AdjustHue(flt, convert_to_tensor(delta, dtype=dtypes.float32))
        return convert_image_dtype(adjusted, original)


def adjust_saturation(image, saturation_factor, name=None):
    """Multiplies the HSV saturation of RGB `image` by `saturation_factor` (clamped to 1)."""
    with scope(name, "adjust_saturation"):
        flt, original = _as_float(image)
        adjusted = AdjustSaturation(flt, convert_to_tensor(saturation_factor,
                                                           dtype=dtypes.float32))
        return convert_image_dtype(adjusted, original)


def random_brightness(image, max_delta, seed=None):
    """`adjust_brightness` by a delta drawn uniformly from [-max_delta, max_delta).

    Raises:
        ValueError: `max_delta` is negative.
    """
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_ops.random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_brightness(image, delta)


def _check_range(lower, upper) -> None:
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")


def random_contrast(image, lower, upper, seed=None):
    """`adjust_contrast` by a factor drawn uniformly from [lower, upper)."""
    _check_range(lower, upper)
    factor = random_ops.random_uniform([], lower, upper, seed=seed)
    return adjust_contrast(image, factor)


def random_hue(image, max_delta, seed=None):
    """`adjust_hue` by a delta drawn uniformly from [-max_delta, max_delta), max_delta <= 0.5."""
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_ops.random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_hue(image, delta)


def random_saturation(image, lower, upper, seed=None):
    """`adjust_saturation` by a factor drawn uniformly from [lower, upper)."""
    _check_range(lower, upper)
    factor = random_ops.random_uniform([], lower, upper, seed=seed)
    return adjust_saturation(image, factor)


_GRAY_WEIGHTS = (0.2989, 0.5870, 0.1140)


def rgb_to_grayscale(images, name=None):
    """Luma `0.2989 R + 0.587 G + 0.114 B` as a last dimension of size 1, in the input dtype."""
    with scope(name, "rgb_to_grayscale") as name:
        images = convert_to_tensor(images, name="images")
        original = images.dtype.base_dtype
        flt = convert_image_dtype(images, dtypes.float32)
        weights = convert_to_tensor(np.array(_GRAY_WEIGHTS, np.float32))
        gray = math_ops.reduce_sum(flt * weights, axis=-1, keepdims=True)
        return convert_image_dtype(gray, original, name=name)


def grayscale_to_rgb(images, name=None):
    """Repeats a size-1 last dimension three times.

    Raises:
        ValueError: the last dimension is statically known and not 1, or rank < 2.
    """
    with scope(name, "grayscale_to_rgb") as name:
        images = convert_to_tensor(images, name="images")
        shape = images.shape
        if shape.ndims is not None:
            if shape.ndims < 2:
                raise ValueError(f"'image' (shape {shape}) must be at least two-dimensional.")
            if shape._dim_list[-1] is not None and shape._dim_list[-1] != 1:
                raise ValueError(f"Last dimension of a grayscale image should be size 1, got "
                                 f"shape {shape}")
            multiples = [1] * (shape.ndims - 1) + [3]
        else:
            ones = array_ops.ones(array_ops.expand_dims(array_ops.rank(images) - 1, 0),
                                  dtypes.int32)
            multiples = array_ops.concat([ones, [3]], 0)
        rgb = array_ops.tile(images, multiples, name=name)
        if shape.ndims is not None:
            rgb.set_shape(shape[:-1].concatenate([3]))
        return rgb


def rgb_to_hsv(images, name=None):
    """RGB in [0, 1] -> HSV in [0, 1] (float types)."""
    return RGBToHSV(convert_to_tensor(images, name="images"), name=name)


def hsv_to_rgb(images, name=None):
    """HSV in [0, 1] -> RGB in [0, 1] (float types)."""
    return HSVToRGB(convert_to_tensor(images, name="images"), name=name)


def per_image_standardization(image):
    """`(x - mean) / max(stddev, 1 / sqrt(num_elements))` per image, as float32.

    Works on `[height, width, channels]` or a batch `[..., height, width, channels]`.

    Raises:
        ValueError: `image` has rank below 3.
    """
    with scope(None, "per_image_standardization") as name:
        image = at_least_3d(convert_to_tensor(image, name="image"))
        image = math_ops.cast(image, dtypes.float32)
        count = math_ops.reduce_prod(array_ops.shape(image)[-3:])
        mean = math_ops.reduce_mean(image, axis=[-1, -2, -3], keepdims=True)
        stddev = math_ops.reduce_std(image, axis=[-1, -2, -3], keepdims=True)
        floor = math_ops.rsqrt(math_ops.cast(count, dtypes.float32))
        return math_ops.divide(image - mean, math_ops.maximum(stddev, floor), name=name)
