"""Image quality metrics and filters built from existing ops: total_variation, psnr, ssim,
ssim_multiscale, sobel_edges, image_gradients, and the YUV / YIQ color conversions.

Everything here composes public ops (convolutions, pooling, reductions, matmuls), so gradients
come for free. SSIM follows Wang et al. with TF's choices: an 11x11 Gaussian window (sigma 1.5)
normalised by a softmax, VALID filtering, constants `(k1 * max_val)^2` and `(k2 * max_val)^2`,
the mean over spatial positions then channels; MS-SSIM halves the image four times (average
pooling, odd sizes padded symmetrically first) and combines the five scales with TF's weights.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.scopes import op_name_scope as scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import padding as pad_ops
from tensorflux.ops.image.color import convert_image_dtype
from tensorflux.ops.image.util import check, depends
from tensorflux.ops.math import matrix_product as matmul_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.nn import activations as activation_ops
from tensorflux.ops.nn import conv as conv_ops
from tensorflux.ops.nn import pooling as pooling_ops

__all__: list = []

# Weights of the five MS-SSIM scales (Wang, Simoncelli and Bovik, 2003), TF's default.
_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)

# Color transforms applied as `pixel @ matrix`: rows are the input channels.
_RGB_TO_YIQ = [[0.299, 0.59590059, 0.2115],
               [0.587, -0.27455667, -0.52273617],
               [0.114, -0.32134392, 0.31119955]]
_YIQ_TO_RGB = [[1, 1, 1],
               [0.95598634, -0.27201283, -1.10674021],
               [0.6208248, -0.64720424, 1.70423049]]
_RGB_TO_YUV = [[0.299, -0.14714119, 0.61497538],
               [0.587, -0.28886916, -0.51496512],
               [0.114, 0.43601035, -0.10001026]]
_YUV_TO_RGB = [[1, 1, 1],
               [0, -0.394642334, 2.03206185],
               [1.13988303, -0.58062185, 0]]


# -- total variation, gradients, sobel ----------------------------------------------------------

def total_variation(images, name=None):
    """The sum of absolute differences between neighbouring pixels.

    Args:
        images: `[height, width, channels]` or `[batch, height, width, channels]`.
        name: name scope.

    Returns:
        A scalar for one image, a `[batch]` vector for a batch (the images' dtype).

    Raises:
        ValueError: if `images` is not 3-D or 4-D.

    Example: `loss += 1e-4 * tf.reduce_sum(tf.image.total_variation(generated))`.
    """
    with scope(name, "total_variation"):
        images = convert_to_tensor(images, name="images")
        rank = images.shape.ndims
        if rank == 3:
            rows = images[1:, :, :] - images[:-1, :, :]
            cols = images[:, 1:, :] - images[:, :-1, :]
            axis = None
        elif rank == 4:
            rows = images[:, 1:, :, :] - images[:, :-1, :, :]
            cols = images[:, :, 1:, :] - images[:, :, :-1, :]
            axis = [1, 2, 3]
        else:
            raise ValueError(f"'images' (shape {images.shape}) must be either 3 or 4-dimensional.")
        return (reduction_ops.reduce_sum(math_ops.abs(rows), axis=axis)
                + reduction_ops.reduce_sum(math_ops.abs(cols), axis=axis))


def image_gradients(image):
    """Forward differences `(dy, dx)` of a `[batch, h, w, d]` image, zero in the last row/col.

    Raises:
        ValueError: if `image` is not 4-D.
    """
    image = convert_to_tensor(image, name="image")
    if image.shape.ndims != 4:
        raise ValueError(f"image_gradients expects a 4D tensor [batch_size, h, w, d], not "
                         f"{image.shape}.")
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    dy = pad_ops.pad(dy, [[0, 0], [0, 1], [0, 0], [0, 0]])
    dx = pad_ops.pad(dx, [[0, 0], [0, 0], [0, 1], [0, 0]])
    dy.set_shape(image.shape)
    dx.set_shape(image.shape)
    return dy, dx


def sobel_edges(image):
    """Sobel responses `[batch, h, w, d, 2]` (last axis: dy then dx), edges reflect-padded.

    Args:
        image: float `[batch, h, w, d]`.

    Returns:
        The vertical and horizontal Sobel filter outputs stacked on a new last axis.
    """
    image = convert_to_tensor(image, name="image")
    image.shape.with_rank(4)
    dy = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], np.float64)
    kernels = np.stack([dy, dy.T], axis=-1)[:, :, None, :]  # [3, 3, 1, 2]
    kernels = array_ops.tile(convert_to_tensor(kernels, dtype=image.dtype),
                             array_ops.stack([1, 1, array_ops.shape(image)[3], 1]))
    padded = pad_ops.pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    out = conv_ops.depthwise_conv2d(padded, kernels, [1, 1, 1, 1], "VALID")
    out = array_ops.reshape(out, array_ops.concat([array_ops.shape(image), [2]], 0))
    out.set_shape(image.shape.concatenate([2]))
    return out


# -- color conversions --------------------------------------------------------------------------

def _color_transform(images, matrix, name: str):
    images = convert_to_tensor(images, name="images")
    last = images.shape.with_rank_at_least(1)._dim_list[-1]
    if last is not None and last != 3:
        raise ValueError(f"{name}: images must have 3 channels in the last dimension, got "
                         f"shape {images.shape}")
    kernel = convert_to_tensor(np.asarray(matrix, np.float64), dtype=images.dtype)
    flat = matmul_ops.matmul(array_ops.reshape(images, [-1, 3]), kernel)
    out = array_ops.reshape(flat, array_ops.shape(images))
    out.set_shape(images.shape)
    return out


def rgb_to_yiq(images):
    """RGB -> YIQ along the last (size-3) dimension of a float tensor."""
    return _color_transform(images, _RGB_TO_YIQ, "rgb_to_yiq")


def yiq_to_rgb(images):
    """YIQ -> RGB along the last (size-3) dimension of a float tensor."""
    return _color_transform(images, _YIQ_TO_RGB, "yiq_to_rgb")


def rgb_to_yuv(images):
    """RGB -> YUV along the last (size-3) dimension of a float tensor."""
    return _color_transform(images, _RGB_TO_YUV, "rgb_to_yuv")


def yuv_to_rgb(images):
    """YUV -> RGB along the last (size-3) dimension of a float tensor."""
    return _color_transform(images, _YUV_TO_RGB, "yuv_to_rgb")


# -- PSNR and SSIM ------------------------------------------------------------------------------

def _as_float(a, b, max_val):
    a = convert_to_tensor(a, name="a")
    b = convert_to_tensor(b, name="b")
    if not a.shape.is_compatible_with(b.shape):
        raise ValueError(f"images must have compatible shapes, got {a.shape} and {b.shape}")
    for image in (a, b):
        image.shape.with_rank_at_least(3)
    if a.shape.ndims is None or b.shape.ndims is None:
        # Unknown rank: an Assert stands in for the static check (TF checks at run time too).
        checks = [op for image in (a, b) for op in check(
            math_ops.greater_equal(array_ops.rank(image), 3), ValueError,
            "images must have at least 3 dimensions ([..., height, width, channels])")]
        a, b = depends(checks, a), depends(checks, b)
    max_val = math_ops.cast(max_val, a.dtype)
    max_val = convert_image_dtype(max_val, dtypes.float32)
    return convert_image_dtype(a, dtypes.float32), convert_image_dtype(b, dtypes.float32), max_val


def psnr(a, b, max_val, name=None):
    """Peak signal-to-noise ratio in dB, per image (over the last three dimensions).

    Args:
        a, b: images of the same shape, `[..., h, w, c]`; integer images are scaled to [0, 1].
        max_val: the dynamic range (e.g. 255 for uint8-valued floats, 1.0 for [0, 1]).
        name: name scope.

    Returns:
        float32 `[...]`: `10 * log10(max_val^2 / mse)`.

    Example: `tf.image.psnr(reconstructed, original, max_val=1.0)`.
    """
    with scope(name, "PSNR"):
        a, b, max_val = _as_float(a, b, max_val)
        mse = reduction_ops.reduce_mean(math_ops.squared_difference(a, b), [-3, -2, -1])
        log10 = np.float32(np.log(10.0))
        return math_ops.subtract(
            np.float32(20) * math_ops.log(max_val) / log10,
            np.float32(10 / np.log(10.0)) * math_ops.log(mse), name="psnr")


def _gaussian_window(size: int, sigma: float) -> np.ndarray:
    """[size, size, 1, 1] float32: a normalised 2-D Gaussian (TF's softmax formulation)."""
    coords = np.arange(size, dtype=np.float32) - np.float32(size - 1) / 2
    g = coords * coords * np.float32(-0.5 / (sigma * sigma))
    logits = (g[None, :] + g[:, None]).astype(np.float32)
    window = np.exp(logits - logits.max())
    return (window / window.sum()).astype(np.float32).reshape(size, size, 1, 1)


def _ssim_per_channel(img1, img2, max_val, filter_size, filter_sigma, k1, k2):
    """(ssim [..., channels], contrast-structure [..., channels]) of float32 images."""
    for img in (img1, img2):
        shape = img.shape.with_rank_at_least(3)
        dims = [] if shape.ndims is None else shape.as_list()[-3:-1]  # unknown: run time
        if any(d is not None and d < filter_size for d in dims):
            raise ValueError(f"ssim: image spatial dims {img.shape} must be at least "
                             f"filter_size {filter_size}")
    window = convert_to_tensor(_gaussian_window(filter_size, filter_sigma))
    window = array_ops.tile(window, array_ops.stack([1, 1, array_ops.shape(img1)[-1], 1]))

    def blur(x):
        shape = array_ops.shape(x)
        flat = array_ops.reshape(x, array_ops.concat([[-1], shape[-3:]], 0))
        y = conv_ops.depthwise_conv2d(flat, window, [1, 1, 1, 1], "VALID")
        return array_ops.reshape(y, array_ops.concat([shape[:-3], array_ops.shape(y)[1:]], 0))

    c1 = (k1 * max_val) ** 2
    c2 = (k2 * max_val) ** 2
    mean1, mean2 = blur(img1), blur(img2)
    num0 = mean1 * mean2 * 2.0
    den0 = math_ops.square(mean1) + math_ops.square(mean2)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = blur(img1 * img2) * 2.0
    den1 = blur(math_ops.square(img1) + math_ops.square(img2))
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    ssim_map = reduction_ops.reduce_mean(luminance * cs, [-3, -2])
    return ssim_map, reduction_ops.reduce_mean(cs, [-3, -2])


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03):
    """Structural similarity index between two images (or batches), averaged over channels.

    Args:
        img1, img2: `[..., h, w, c]` images of the same shape, h and w >= `filter_size`;
            integer images are scaled to [0, 1].
        max_val: the dynamic range of the images.
        filter_size, filter_sigma: the Gaussian window.
        k1, k2: the SSIM stabilising constants.

    Returns:
        float32 `[...]` SSIM values in [-1, 1].

    Raises:
        ValueError: for incompatible shapes or images smaller than the window.

    Example: `tf.image.ssim(tf.image.convert_image_dtype(x, tf.float32), y, max_val=1.0)`.
    """
    with scope(None, "SSIM"):
        img1, img2, max_val = _as_float(img1, img2, max_val)
        per_channel, _ = _ssim_per_channel(img1, img2, max_val, filter_size, filter_sigma,
                                           k1, k2)
        return reduction_ops.reduce_mean(per_channel, [-1])


def ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11,
                    filter_sigma=1.5, k1=0.01, k2=0.03):
    """Multi-scale SSIM: one scale per entry of `power_factors`, each half the previous size.

    Args:
        img1, img2: `[..., h, w, c]` images of the same shape; the smallest scale must still be
            at least `filter_size` wide.
        max_val: the dynamic range of the images.
        power_factors: the exponent of each scale's term (TF's five defaults).
        filter_size, filter_sigma, k1, k2: as in `ssim`.

    Returns:
        float32 `[...]` MS-SSIM values.
    """
    with scope(None, "MS-SSIM"):
        img1, img2, max_val = _as_float(img1, img2, max_val)
        heads = array_ops.shape(img1)[:-3]
        imgs = [img1, img2]
        mcs, per_channel = [], None
        for k in range(len(power_factors)):
            if k > 0:
                tail = array_ops.shape(imgs[0])[-3:]
                flat = [array_ops.reshape(x, array_ops.concat([[-1], tail], 0)) for x in imgs]
                # pad odd sizes by mirroring the last row/column, then 2x2 average pooling
                remainder = tail[:2] % 2
                padding = array_ops.stack([[0, 0], [0, remainder[0]], [0, remainder[1]],
                                           [0, 0]])
                flat = [pad_ops.pad(x, padding, mode="SYMMETRIC") for x in flat]
                pooled = [pooling_ops.avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
                          for x in flat]
                imgs = [array_ops.reshape(x, array_ops.concat([heads, array_ops.shape(x)[1:]],
                                                              0)) for x in pooled]
            per_channel, cs = _ssim_per_channel(*imgs, max_val, filter_size, filter_sigma,
                                                k1, k2)
            mcs.append(activation_ops.relu(cs))
        terms = array_ops.stack(mcs[:-1] + [activation_ops.relu(per_channel)], axis=-1)
        weights = np.asarray(power_factors, np.float32)
        ms_ssim = reduction_ops.reduce_prod(math_ops.pow(terms, weights), [-1])
        return reduction_ops.reduce_mean(ms_ssim, [-1])
