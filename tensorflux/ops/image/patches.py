"""ExtractImagePatches and `tf.image.extract_patches` / `tf.extract_image_patches`.

Each output pixel holds the `ksize_rows x ksize_cols` window (taps `rates` apart) flattened in
(row, column, depth) order. Output sizes and SAME padding follow convolution with the effective
kernel `ksize + (ksize - 1) * (rate - 1)`; padded taps read zeros. The kernel is one fancy-index
gather whose (row, column) index grids depend only on the geometry and are cached.

The gradient is built from public ops: the same op applied to an image of pixel ids tells which
input pixel every patch element came from, and `unsorted_segment_sum` adds the gradients back.
"""

from __future__ import annotations

import functools

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops.math import segment as segment_ops
from tensorflux.ops.math import sequence as sequence_ops

__all__ = ["extract_image_patches"]

_T = ("T: {bfloat16, float16, float32, float64, int8, int16, int32, int64, uint8, uint16, "
      "uint32, uint64, complex64, complex128, bool}")


def _window(attr, what: str):
    values = list(attr)
    if len(values) != 4 or values[0] != 1 or values[3] != 1:
        raise ValueError(f"{what} must be [1, rows, cols, 1] (patches over the batch or depth "
                         f"dimension are not supported), got {values}")
    if values[1] <= 0 or values[2] <= 0:
        raise ValueError(f"{what} must be positive, got {values}")
    return values[1], values[2]


def _out_size(size: int, k: int, stride: int, rate: int, padding: str):
    """(output size, padding before) along one axis."""
    effective = k + (k - 1) * (rate - 1)
    if padding == "VALID":
        return max((size - effective + stride) // stride, 0), 0
    out = -(-size // stride)
    total = max((out - 1) * stride + effective - size, 0)
    return out, total // 2


@functools.lru_cache(maxsize=128)
def _taps(size: int, k: int, stride: int, rate: int, padding: str):
    """[out, k] indices into the axis padded by one zero slot at index 0."""
    out, before = _out_size(size, k, stride, rate, padding)
    index = (np.arange(out)[:, None] * stride + np.arange(k)[None, :] * rate) - before
    inside = (index >= 0) & (index < size)
    return np.where(inside, index + 1, 0)


ExtractImagePatches = define_op(
    "ExtractImagePatches", inputs=["images: T"], outputs=["patches: T"],
    attrs=["ksizes: list(int)", "strides: list(int)", "rates: list(int)", _T,
           "padding: {'SAME', 'VALID'}"])


@ExtractImagePatches.shape_fn
def _extract_patches_shape(images, *, ksizes, strides, rates, padding):
    images = images.with_rank(4)
    k = _window(ksizes, "ksizes")
    s = _window(strides, "strides")
    r = _window(rates, "rates")
    batch, rows, cols, depth = images._dim_list
    out = [None if size is None else _out_size(size, k[i], s[i], r[i], padding)[0]
           for i, size in enumerate((rows, cols))]
    channels = None if depth is None else k[0] * k[1] * depth
    return TensorShape([batch, *out, channels])


@ExtractImagePatches.kernel
def _extract_patches_kernel(images, *, ksizes, strides, rates, padding):
    if images.ndim != 4:
        raise errors.InvalidArgumentError(
            None, None, f"images must be 4-D, got shape {list(images.shape)}")
    k, s, r = _window(ksizes, "ksizes"), _window(strides, "strides"), _window(rates, "rates")
    batch, rows, cols, depth = images.shape
    row_taps = _taps(rows, k[0], s[0], r[0], padding)
    col_taps = _taps(cols, k[1], s[1], r[1], padding)
    padded = np.zeros((batch, rows + 1, cols + 1, depth), images.dtype)
    padded[:, 1:, 1:] = images
    patches = padded[:, row_taps[:, None, :, None], col_taps[None, :, None, :], :]
    return patches.reshape(batch, row_taps.shape[0], col_taps.shape[0], k[0] * k[1] * depth)


@ExtractImagePatches.gradient
def _extract_patches_grad(op, grad):
    images = op.inputs[0]
    attrs = {name: op.get_attr_str(name) for name in ("ksizes", "strides", "rates", "padding")}
    shape = array_ops.shape(images, out_type=dtypes.int64)
    batch, rows, cols, depth = (shape[i] for i in range(4))
    pixels = rows * cols
    # ids 1..rows*cols of each input pixel; padded taps read 0 and are dropped below
    ids = array_ops.reshape(sequence_ops.range(1, pixels + 1, dtype=dtypes.int64),
                            array_ops.stack([1, rows, cols, 1]))
    source = ExtractImagePatches(ids, **attrs)
    source = array_ops.reshape(source, [-1])
    grad_shape = array_ops.shape(grad, out_type=dtypes.int64)
    k = attrs["ksizes"][1] * attrs["ksizes"][2]
    # [b, out_r, out_c, k * d] -> [out_r * out_c * k, b, d]: one row per patch element
    by_tap = array_ops.reshape(grad, array_ops.stack(
        [batch, grad_shape[1] * grad_shape[2] * k, depth]))
    by_tap = array_ops.transpose(by_tap, [1, 0, 2])
    summed = segment_ops.unsorted_segment_sum(by_tap, source, pixels + 1)
    summed = array_ops.reshape(summed[1:], array_ops.stack([rows, cols, batch, depth]))
    return array_ops.transpose(summed, [2, 0, 1, 3])


def extract_image_patches(images, ksizes=None, strides=None, rates=None, padding=None,
                          name=None, sizes=None):
    """Extracts `ksizes`-sized patches from `images` into the depth dimension.

    Args:
        images: `[batch, rows, cols, depth]`.
        ksizes: `[1, ksize_rows, ksize_cols, 1]` (`sizes` in `tf.image.extract_patches`).
        strides: `[1, stride_rows, stride_cols, 1]`, the distance between patch centres.
        rates: `[1, rate_rows, rate_cols, 1]`, the distance between taps in a patch.
        padding: "VALID" or "SAME".
        name: op name.

    Returns:
        `[batch, out_rows, out_cols, ksize_rows * ksize_cols * depth]` of `images`' dtype.

    Raises:
        ValueError: for missing or malformed window arguments.

    Example: `tf.extract_image_patches(x, [1, 3, 3, 1], [1, 1, 1, 1], [1, 1, 1, 1], "SAME")`.
    """
    if ksizes is None:
        ksizes = sizes
    if ksizes is None or strides is None or rates is None or padding is None:
        raise ValueError("extract_image_patches needs ksizes (sizes), strides, rates and "
                         "padding")
    return ExtractImagePatches(images, ksizes=list(ksizes), strides=list(strides),
                               rates=list(rates), padding=padding, name=name)


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """`tf.image.extract_patches`: `extract_image_patches` with TF2's argument names."""
    return extract_image_patches(images, sizes, strides, rates, padding, name=name)
