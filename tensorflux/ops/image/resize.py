"""Image resizing: ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic, ResizeArea, their
gradient ops, and the `tf.image.resize_*` wrappers.

Every method is separable: along each spatial axis an output index reads a few input indices
("taps") with weights. The taps of an axis depend only on (input size, output size, flags), so
they are computed once and cached; a step is a handful of gathers and multiply-adds (or, for
ResizeArea, one small matrix product per axis). Gradients scatter the same taps back.

Sampling follows TensorFlow's CPU kernels exactly: the legacy (`half_pixel_centers=False`) and
half-pixel source coordinates, `align_corners` scaling, bicubic's 1024-entry coefficient tables
(a = -0.75, or Keys' a = -0.5 with out-of-range taps dropped and renormalised for half-pixel
centers), and the area kernel's fractional pixel coverage. Arithmetic is float32 like TF's.
"""

from __future__ import annotations

import functools

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops

__all__: list = []

_RESIZE_T = ("T: {int8, uint8, int16, uint16, int32, int64, bfloat16, float16, float32, "
             "float64}")
_FLAGS = ["align_corners: bool = False", "half_pixel_centers: bool = False"]


def _invalid(message: str):
    return errors.InvalidArgumentError(None, None, message)


# -- source coordinates and taps (cached per axis) ------------------------------------------

def _scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    if align_corners and out_size > 1:
        return np.float32(in_size - 1) / np.float32(out_size - 1)
    return np.float32(in_size) / np.float32(out_size)


def _source(out_size: int, scale: np.float32, half_pixel: bool, nearest: bool = False):
    out = np.arange(out_size, dtype=np.float32)
    if not half_pixel:
        return out * scale
    if nearest:
        return (out + np.float32(0.5)) * scale
    return (out + np.float32(0.5)) * scale - np.float32(0.5)


@functools.lru_cache(maxsize=256)
def _linear_taps(in_size, out_size, align_corners, half_pixel):
    """(indices [2, out], weights [2, out]) of bilinear interpolation along one axis."""
    src = _source(out_size, _scale(in_size, out_size, align_corners), half_pixel)
    floor = np.floor(src)
    lower = np.maximum(floor.astype(np.int64), 0)
    upper = np.minimum(np.ceil(src).astype(np.int64), in_size - 1)
    lerp = (src - floor).astype(np.float32)
    return np.stack([lower, upper]), np.stack([np.float32(1) - lerp, lerp])


@functools.lru_cache(maxsize=256)
def _nearest_index(in_size, out_size, align_corners, half_pixel):
    src = _source(out_size, _scale(in_size, out_size, align_corners), half_pixel, nearest=True)
    picked = np.floor(src)
    if align_corners:  # roundf: halves away from zero (sources are never negative here)
        picked = np.where(src - picked >= np.float32(0.5), picked + 1, picked)
    return np.clip(picked.astype(np.int64), 0, in_size - 1)


_TABLE_SIZE = 1024


@functools.lru_cache(maxsize=2)
def _cubic_table(a: float) -> np.ndarray:
    x = np.arange(_TABLE_SIZE + 1, dtype=np.float64) / _TABLE_SIZE
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a
    return np.stack([near, far], axis=1).astype(np.float32)


@functools.lru_cache(maxsize=256)
def _cubic_taps(in_size, out_size, align_corners, half_pixel):
    """(indices [4, out], weights [4, out]) of bicubic interpolation along one axis."""
    src = _source(out_size, _scale(in_size, out_size, align_corners), half_pixel)
    start = np.floor(src)
    offset = np.rint((src - start) * np.float32(_TABLE_SIZE)).astype(np.int64)
    table = _cubic_table(-0.5 if half_pixel else -0.75)
    weights = np.stack([table[offset, 1], table[offset, 0], table[_TABLE_SIZE - offset, 0],
                        table[_TABLE_SIZE - offset, 1]])
    wanted = start.astype(np.int64) + np.arange(-1, 3)[:, None]
    indices = np.clip(wanted, 0, in_size - 1)
    if half_pixel:
        weights = np.where(indices == wanted, weights, np.float32(0))
        total = weights.sum(axis=0, dtype=np.float32)
        usable = np.abs(total) >= 1000 * np.finfo(np.float32).tiny
        weights = np.where(usable, weights / np.where(usable, total, 1), weights)
    return indices, weights.astype(np.float32)


@functools.lru_cache(maxsize=256)
def _area_matrix(in_size, out_size, align_corners):
    """[out, in] float32 weights of area averaging along one axis (rows sum to 1)."""
    scale = _scale(in_size, out_size, align_corners)
    if scale == 0:  # one input pixel stretched with align_corners: TF copies it
        return np.ones((out_size, 1), np.float32)
    out = np.arange(out_size, dtype=np.float32)
    low, high = out * scale, (out + 1) * scale
    start = np.floor(low).astype(np.int64)
    end = np.ceil(high).astype(np.int64)
    cells = start[:, None] + np.arange(int((end - start).max()))[None, :]
    cell = cells.astype(np.float32)
    weight = np.where(cell < low[:, None],
                      np.where(cell + 1 > high[:, None], scale, cell + 1 - low[:, None]),
                      np.where(cell + 1 > high[:, None], high[:, None] - cell, np.float32(1)))
    weight = np.where(cells < end[:, None], weight, 0).astype(np.float64)
    matrix = np.zeros((out_size, in_size))
    rows = np.broadcast_to(np.arange(out_size)[:, None], cells.shape)
    np.add.at(matrix, (rows, np.clip(cells, 0, in_size - 1)), weight)
    return (matrix / np.float64(scale)).astype(np.float32)


# -- applying taps ----------------------------------------------------------------------------

def _gather_sum(x, axis, indices, weights):
    """sum_k weights[k] * take(x, indices[k], axis), weights broadcast along `axis`."""
    shape = [1] * x.ndim
    shape[axis] = -1
    total = None
    for idx, w in zip(indices, weights):
        term = np.take(x, idx, axis=axis) * w.reshape(shape)
        total = term if total is None else total + term
    return total


def _scatter_sum(grad, axis, indices, weights, in_size):
    """The adjoint of `_gather_sum`: accumulate weighted rows back into `in_size` rows."""
    moved = np.moveaxis(grad, axis, 0)
    out = np.zeros((in_size,) + moved.shape[1:], grad.dtype)
    tail = (1,) * (moved.ndim - 1)
    for idx, w in zip(indices, weights):
        np.add.at(out, idx, moved * w.reshape((-1,) + tail).astype(grad.dtype))
    return np.moveaxis(out, 0, axis)


def _check_images(images, size, align_corners, half_pixel_centers):
    if half_pixel_centers and align_corners:
        raise _invalid("If half_pixel_centers is True, align_corners must be False.")
    if np.ndim(images) != 4:
        raise _invalid(f"input must be 4-dimensional, got shape {list(np.shape(images))}")
    size = np.asarray(size)
    if size.ndim != 1:
        raise _invalid(f"shape_t must be 1-dimensional, got shape {list(size.shape)}")
    if size.shape[0] != 2:
        raise _invalid(f"shape_t must have two elements, got {size.shape[0]}")
    out_h, out_w = int(size[0]), int(size[1])
    if out_h <= 0 or out_w <= 0:
        raise _invalid(f"output dimensions must be positive, got [{out_h}, {out_w}]")
    if images.shape[3] <= 0:
        raise _invalid(f"image must have at least one channel, got shape {list(images.shape)}")
    if images.shape[1] <= 0 or images.shape[2] <= 0:
        raise _invalid(f"input image must be of non-zero size, got shape {list(images.shape)}")
    return out_h, out_w


def _resize_shape(images: TensorShape, size) -> TensorShape:
    images = images.with_rank(4)
    if size is None:
        return TensorShape([images._dim_list[0], None, None, images._dim_list[3]])
    size = np.asarray(size)
    if size.shape != (2,):
        raise ValueError(f"size must be a 1-D tensor of 2 elements, got shape {list(size.shape)}")
    return TensorShape([images._dim_list[0], int(size[0]), int(size[1]), images._dim_list[3]])


def _grad_shape(grads: TensorShape, original: TensorShape) -> TensorShape:
    grads = grads.with_rank(4)
    original = original.with_rank(4)
    return TensorShape([grads._dim_list[0], original._dim_list[1], original._dim_list[2],
                        grads._dim_list[3]])


# -- ResizeBilinear ---------------------------------------------------------------------------

ResizeBilinear = define_op(
    "ResizeBilinear", inputs=["images: T", "size: int32"], outputs=["resized_images: float32"],
    attrs=[_RESIZE_T, *_FLAGS])


@ResizeBilinear.shape_fn(value_inputs=("size",))
def _resize_bilinear_shape(images, size):
    return _resize_shape(images, size)


@ResizeBilinear.kernel
def _resize_bilinear_kernel(images, size, *, align_corners, half_pixel_centers):
    out_h, out_w = _check_images(images, size, align_corners, half_pixel_centers)
    y_idx, y_w = _linear_taps(images.shape[1], out_h, align_corners, half_pixel_centers)
    x_idx, x_w = _linear_taps(images.shape[2], out_w, align_corners, half_pixel_centers)
    x = images.astype(np.float32, copy=False)
    top, bottom = np.take(x, y_idx[0], axis=1), np.take(x, y_idx[1], axis=1)
    lerp_x = x_w[1].reshape(1, 1, -1, 1)
    top = top[:, :, x_idx[0]] + (top[:, :, x_idx[1]] - top[:, :, x_idx[0]]) * lerp_x
    bottom = bottom[:, :, x_idx[0]] + (bottom[:, :, x_idx[1]] - bottom[:, :, x_idx[0]]) * lerp_x
    return top + (bottom - top) * y_w[1].reshape(1, -1, 1, 1)


ResizeBilinearGrad = define_op(
    "ResizeBilinearGrad", inputs=["grads: float32", "original_image: T"], outputs=["output: T"],
    attrs=["T: {float32, bfloat16, float16, float64}", *_FLAGS], differentiable=False)


@ResizeBilinearGrad.shape_fn
def _resize_bilinear_grad_shape(grads, original_image):
    return _grad_shape(grads, original_image)


def _separable_grad(grads, original, taps_fn, align_corners, half_pixel_centers):
    if half_pixel_centers and align_corners:
        raise _invalid("If half_pixel_centers is True, align_corners must be False.")
    for what, value in (("input_grad", grads), ("original_image", original)):
        if np.ndim(value) != 4:
            raise _invalid(f"{what} must be 4-dimensional, got shape {list(np.shape(value))}")
    if grads.shape[1] <= 0 or grads.shape[2] <= 0:
        raise _invalid(f"resized dimensions must be positive, got {list(grads.shape[1:3])}")
    if original.shape[1] <= 0 or original.shape[2] <= 0:
        raise _invalid(f"original dimensions must be positive, got {list(original.shape[1:3])}")
    in_h, in_w = original.shape[1], original.shape[2]
    work = grads.astype(original.dtype if original.dtype == np.float64 else np.float32)
    y_idx, y_w = taps_fn(in_h, grads.shape[1], align_corners, half_pixel_centers)
    x_idx, x_w = taps_fn(in_w, grads.shape[2], align_corners, half_pixel_centers)
    rows = _scatter_sum(work, 1, y_idx, y_w, in_h)
    return _scatter_sum(rows, 2, x_idx, x_w, in_w).astype(original.dtype, copy=False)


@ResizeBilinearGrad.kernel
def _resize_bilinear_grad_kernel(grads, original_image, *, align_corners, half_pixel_centers):
    return _separable_grad(grads, original_image, _linear_taps, align_corners,
                           half_pixel_centers)


@ResizeBilinear.gradient
def _resize_bilinear_grad(op, grad):
    images = op.inputs[0]
    if not images.dtype.base_dtype.is_floating:
        return [None, None]
    return [ResizeBilinearGrad(grad, images, align_corners=op.get_attr("align_corners"),
                               half_pixel_centers=op.get_attr("half_pixel_centers")), None]


# -- ResizeNearestNeighbor --------------------------------------------------------------------

ResizeNearestNeighbor = define_op(
    "ResizeNearestNeighbor", inputs=["images: T", "size: int32"], outputs=["resized_images: T"],
    attrs=[_RESIZE_T, *_FLAGS])


@ResizeNearestNeighbor.shape_fn(value_inputs=("size",))
def _resize_nearest_shape(images, size):
    return _resize_shape(images, size)


@ResizeNearestNeighbor.kernel
def _resize_nearest_kernel(images, size, *, align_corners, half_pixel_centers):
    out_h, out_w = _check_images(images, size, align_corners, half_pixel_centers)
    rows = _nearest_index(images.shape[1], out_h, align_corners, half_pixel_centers)
    cols = _nearest_index(images.shape[2], out_w, align_corners, half_pixel_centers)
    return images[:, rows][:, :, cols]


ResizeNearestNeighborGrad = define_op(
    "ResizeNearestNeighborGrad", inputs=["grads: T", "size: int32"], outputs=["output: T"],
    attrs=["T: {uint8, int8, int32, float16, float32, float64, bfloat16}", *_FLAGS],
    differentiable=False)


@ResizeNearestNeighborGrad.shape_fn(value_inputs=("size",))
def _resize_nearest_grad_shape(grads, size):
    return _resize_shape(grads, size)


@ResizeNearestNeighborGrad.kernel
def _resize_nearest_grad_kernel(grads, size, *, align_corners, half_pixel_centers):
    in_h, in_w = _check_images(grads, size, align_corners, half_pixel_centers)
    rows = _nearest_index(in_h, grads.shape[1], align_corners, half_pixel_centers)
    cols = _nearest_index(in_w, grads.shape[2], align_corners, half_pixel_centers)
    one_row = np.ones((1, rows.size), grads.dtype)
    one_col = np.ones((1, cols.size), grads.dtype)
    partial = _scatter_sum(grads, 1, rows[None], one_row, in_h)
    return _scatter_sum(partial, 2, cols[None], one_col, in_w)


@ResizeNearestNeighbor.gradient
def _resize_nearest_grad(op, grad):
    images = op.inputs[0]
    if not images.dtype.base_dtype.is_floating:
        return [None, None]
    spatial = array_ops.shape(images)[1:3]
    return [ResizeNearestNeighborGrad(grad, spatial, align_corners=op.get_attr("align_corners"),
                                      half_pixel_centers=op.get_attr("half_pixel_centers")),
            None]


# -- ResizeBicubic ----------------------------------------------------------------------------

ResizeBicubic = define_op(
    "ResizeBicubic", inputs=["images: T", "size: int32"], outputs=["resized_images: float32"],
    attrs=[_RESIZE_T, *_FLAGS])


@ResizeBicubic.shape_fn(value_inputs=("size",))
def _resize_bicubic_shape(images, size):
    return _resize_shape(images, size)


@ResizeBicubic.kernel
def _resize_bicubic_kernel(images, size, *, align_corners, half_pixel_centers):
    out_h, out_w = _check_images(images, size, align_corners, half_pixel_centers)
    y_idx, y_w = _cubic_taps(images.shape[1], out_h, align_corners, half_pixel_centers)
    x_idx, x_w = _cubic_taps(images.shape[2], out_w, align_corners, half_pixel_centers)
    rows = _gather_sum(images.astype(np.float32, copy=False), 1, y_idx, y_w)
    return _gather_sum(rows, 2, x_idx, x_w)


ResizeBicubicGrad = define_op(
    "ResizeBicubicGrad", inputs=["grads: float32", "original_image: T"], outputs=["output: T"],
    attrs=["T: {float32, float64}", *_FLAGS], differentiable=False)


@ResizeBicubicGrad.shape_fn
def _resize_bicubic_grad_shape(grads, original_image):
    return _grad_shape(grads, original_image)


@ResizeBicubicGrad.kernel
def _resize_bicubic_grad_kernel(grads, original_image, *, align_corners, half_pixel_centers):
    return _separable_grad(grads, original_image, _cubic_taps, align_corners,
                           half_pixel_centers)


@ResizeBicubic.gradient
def _resize_bicubic_grad(op, grad):
    images = op.inputs[0]
    if images.dtype.base_dtype not in (dtypes.float32, dtypes.float64):
        return [None, None]
    return [ResizeBicubicGrad(grad, images, align_corners=op.get_attr("align_corners"),
                              half_pixel_centers=op.get_attr("half_pixel_centers")), None]


# -- ResizeArea -------------------------------------------------------------------------------

ResizeArea = define_op(
    "ResizeArea", inputs=["images: T", "size: int32"], outputs=["resized_images: float32"],
    attrs=[_RESIZE_T, "align_corners: bool = False"], differentiable=False)


@ResizeArea.shape_fn(value_inputs=("size",))
def _resize_area_shape(images, size):
    return _resize_shape(images, size)


@ResizeArea.kernel
def _resize_area_kernel(images, size, *, align_corners):
    out_h, out_w = _check_images(images, size, align_corners, False)
    rows = _area_matrix(images.shape[1], out_h, align_corners)
    cols = _area_matrix(images.shape[2], out_w, align_corners)
    x = images.astype(np.float32, copy=False)
    partial = np.einsum("oh,bhwc->bowc", rows, x, optimize=True)
    return np.einsum("pw,bowc->bopc", cols, partial, optimize=True).astype(np.float32)


# -- Python wrappers --------------------------------------------------------------------------


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """Resizes 4-D `images` to `size` with bilinear interpolation (output float32).

    Args:
        images: `[batch, height, width, channels]` of a real type.
        size: 1-D int32 `[new_height, new_width]`.
        align_corners: map the corner pixels of input and output onto each other.
        name: optional name.
        half_pixel_centers: sample at pixel centers (TF2 semantics); excludes `align_corners`.

    Returns:
        A float32 tensor `[batch, new_height, new_width, channels]`.
    """
    return ResizeBilinear(images, size, align_corners=align_corners,
                          half_pixel_centers=half_pixel_centers, name=name)


def resize_nearest_neighbor(images, size, align_corners=False, name=None,
                            half_pixel_centers=False):
    """Resizes 4-D `images` to `size` by nearest-neighbour sampling (dtype kept)."""
    return ResizeNearestNeighbor(images, size, align_corners=align_corners,
                                 half_pixel_centers=half_pixel_centers, name=name)


def resize_bicubic(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """Resizes 4-D `images` to `size` with bicubic interpolation (output float32)."""
    return ResizeBicubic(images, size, align_corners=align_corners,
                         half_pixel_centers=half_pixel_centers, name=name)


def resize_area(images, size, align_corners=False, name=None):
    """Resizes 4-D `images` to `size` by averaging the covered area (output float32)."""
    return ResizeArea(images, size, align_corners=align_corners, name=name)


class ResizeMethod:
    """`tf.image.ResizeMethod` (TF1 integer codes)."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


_RESIZERS = {
    ResizeMethod.BILINEAR: ResizeBilinear, "bilinear": ResizeBilinear,
    ResizeMethod.NEAREST_NEIGHBOR: ResizeNearestNeighbor, "nearest": ResizeNearestNeighbor,
    ResizeMethod.BICUBIC: ResizeBicubic, "bicubic": ResizeBicubic,
    ResizeMethod.AREA: ResizeArea, "area": ResizeArea,
}


def _aspect_size(images, size):
    """`size` shrunk to keep the aspect ratio of `images` (TF's float32 rounding)."""
    dims = array_ops.shape(images)
    current = math_ops.cast(dims[1:3], dtypes.float32)
    target = math_ops.cast(size, dtypes.float32)
    factor = math_ops.reduce_min(target / current)
    return math_ops.cast(math_ops.round(factor * current), dtypes.int32)


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False,
                  preserve_aspect_ratio=False, name=None):
    """Resizes 3-D or 4-D `images` to `size` with `method` (TF1 `tf.image.resize_images`).

    Images whose static size already equals `size` are returned unchanged; otherwise the result
    is float32, except for NEAREST_NEIGHBOR, which keeps the dtype.

    Args:
        images: `[batch, height, width, channels]` or `[height, width, channels]`.
        size: 1-D int32 `[new_height, new_width]`.
        method: a `ResizeMethod` (0 bilinear, 1 nearest neighbour, 2 bicubic, 3 area).
        align_corners: align the corner pixels of input and output.
        preserve_aspect_ratio: fit inside `size` keeping the aspect ratio.
        name: optional name.

    Returns:
        The resized images, 3-D or 4-D like `images`.

    Raises:
        ValueError: `images` is not 3-D or 4-D, `size` is not two ints, or `method` unknown.

    Example:
        >>> tf.image.resize_images(image, [64, 64], method=tf.image.ResizeMethod.AREA)
    """
    resizer = _RESIZERS.get(method)
    if resizer is None:
        raise ValueError(f"Resize method is not implemented: {method}")
    with _scope(name, "resize"):
        images = convert_to_tensor(images, name="images")
        rank = images.shape.ndims
        if rank is None:
            raise ValueError("'images' contains no shape.")
        if rank not in (3, 4):
            raise ValueError("'images' must have either 3 or 4 dimensions.")
        batched = rank == 4
        if not batched:
            images = array_ops.expand_dims(images, 0)
        try:
            size = convert_to_tensor(size, dtypes.int32, name="size")
        except (TypeError, ValueError):
            raise ValueError("'size' must be a 1-D int32 Tensor")
        if not size.shape.is_compatible_with([2]):
            raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
        if preserve_aspect_ratio:
            size = _aspect_size(images, size)
        value = constant_value(size)
        new_h, new_w = (None, None) if value is None else (int(value[0]), int(value[1]))
        height, width = images.shape._dim_list[1], images.shape._dim_list[2]
        if new_h is not None and (height, width) == (new_h, new_w):
            return images if batched else array_ops.squeeze(images, axis=[0])
        kwargs = {"align_corners": align_corners}
        resized = resizer(images, size, **kwargs)
        resized.set_shape([None, new_h, new_w, None])
        return resized if batched else array_ops.squeeze(resized, axis=[0])
