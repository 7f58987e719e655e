"""ImageProjectiveTransformV2 (`tf.contrib.image.transform`) and the adjoint op its gradient
uses.

Sampling follows TensorFlow's CPU kernel: a transform `[a0, a1, a2, b0, b1, b2, c0, c1]` maps
the output pixel (x, y) (integer column and row indices) to the input point
`((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k)` with `k = c0 x + c1 y + 1`, computed in
float32. NEAREST reads the pixel at the rounded point (halves away from zero); BILINEAR blends
the four pixels around it. Pixels outside the image, and points with `k == 0`, read 0. Integer
images get the blended value truncated toward zero, as TF's `T(float)` cast does.

NOTE: TF 1.15 differentiated the image by sampling the incoming gradient through the inverse
transform, which is only approximately the gradient. Here the gradient is the exact adjoint
of the sampling (`_ImageProjectiveTransformV2Adjoint`: each output gradient scattered back
onto the pixels it was read from, with the same weights). Transforms get no gradient, as in TF.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops

__all__: list = []

_DTYPE = "dtype: {uint8, int32, int64, float16, float32, float64}"
_INTERPOLATIONS = ("NEAREST", "BILINEAR")


def _invalid(message: str):
    return errors.InvalidArgumentError(None, None, message)


def _check(images_shape, transforms, output_shape, interpolation):
    if len(images_shape) != 4:
        raise _invalid(f"Input images must have rank 4, got shape {list(images_shape)}")
    if transforms.ndim != 2 or transforms.shape[1] != 8 or (
            transforms.shape[0] not in (1, images_shape[0])):
        raise _invalid(f"Input transform should be num_images x 8 or 1 x 8, got shape "
                       f"{list(transforms.shape)} for {images_shape[0]} images")
    output_shape = np.asarray(output_shape)
    if output_shape.shape != (2,):
        raise _invalid(f"output_shape must be a 1-D tensor of 2 elements, got shape "
                       f"{list(output_shape.shape)}")
    if (output_shape < 0).any():
        raise _invalid(f"output_shape must be non-negative, got {output_shape.tolist()}")
    if interpolation not in _INTERPOLATIONS:
        raise _invalid(f"interpolation must be NEAREST or BILINEAR, got '{interpolation}'")
    return int(output_shape[0]), int(output_shape[1])


def _taps(transforms, batch: int, out_h: int, out_w: int, in_h: int, in_w: int,
          interpolation: str):
    """[(flat input index, weight)] per tap, each [batch, out_h, out_w]; weight 0 where the tap
    falls outside the image (its index then points at pixel 0)."""
    t = np.broadcast_to(transforms.astype(np.float32), (batch, 8))[:, :, None, None]
    ys, xs = np.meshgrid(np.arange(out_h, dtype=np.float32), np.arange(out_w, dtype=np.float32),
                         indexing="ij")
    k = t[:, 6] * xs + t[:, 7] * ys + np.float32(1)
    defined = k != 0
    k = np.where(defined, k, np.float32(1))
    in_x = (t[:, 0] * xs + t[:, 1] * ys + t[:, 2]) / k
    in_y = (t[:, 3] * xs + t[:, 4] * ys + t[:, 5]) / k
    base = (np.arange(batch) * in_h * in_w)[:, None, None]

    def tap(y, x, weight):
        inside = defined & (y >= 0) & (y < in_h) & (x >= 0) & (x < in_w)
        yi = np.where(inside, y, 0).astype(np.int64)
        xi = np.where(inside, x, 0).astype(np.int64)
        return base + yi * in_w + xi, np.where(inside, weight, np.float32(0))

    if interpolation == "NEAREST":
        ry = np.sign(in_y) * np.floor(np.abs(in_y) + np.float32(0.5))
        rx = np.sign(in_x) * np.floor(np.abs(in_x) + np.float32(0.5))
        return [tap(ry, rx, np.ones_like(in_x))]
    y0, x0 = np.floor(in_y), np.floor(in_x)
    y1, x1 = y0 + 1, x0 + 1
    return [tap(y0, x0, (y1 - in_y) * (x1 - in_x)), tap(y0, x1, (y1 - in_y) * (in_x - x0)),
            tap(y1, x0, (in_y - y0) * (x1 - in_x)), tap(y1, x1, (in_y - y0) * (in_x - x0))]


def _compute_dtype(dtype):
    return np.float64 if dtype == np.float64 else np.float32


def _output_shape_dims(output_shape):
    if output_shape is None:
        return [None, None]
    value = np.asarray(output_shape)
    if value.shape != (2,):
        raise ValueError(f"output_shape must be a 1-D tensor of 2 elements, got "
                         f"{value.tolist()}")
    return [int(v) for v in value]


# -- ImageProjectiveTransformV2 ----------------------------------------------------------------

ImageProjectiveTransformV2 = define_op(
    "ImageProjectiveTransformV2",
    inputs=["images: dtype", "transforms: float32", "output_shape: int32"],
    outputs=["transformed_images: dtype"],
    attrs=[_DTYPE, "interpolation: string"])


def _resampled_shape(images, transforms, size):
    """[batch, *size, channels] of `images` ([batch, h, w, channels]) resampled to `size`."""
    images = images.with_rank(4)
    transforms.with_rank(2)
    return TensorShape([images._dim_list[0], *_output_shape_dims(size), images._dim_list[3]])


ImageProjectiveTransformV2.shape_fn(value_inputs=("output_shape",))(_resampled_shape)


@ImageProjectiveTransformV2.kernel
def _projective_kernel(images, transforms, output_shape, *, dtype, interpolation):
    out_h, out_w = _check(images.shape, transforms, output_shape, interpolation)
    batch, in_h, in_w, channels = images.shape
    np_dtype = dtype.as_numpy_dtype
    if batch == 0 or out_h == 0 or out_w == 0 or channels == 0:
        return np.zeros((batch, out_h, out_w, channels), np_dtype)
    flat = images.reshape(-1, channels).astype(_compute_dtype(np_dtype), copy=False)
    if flat.shape[0] == 0:
        return np.zeros((batch, out_h, out_w, channels), np_dtype)
    out = 0
    for index, weight in _taps(transforms, batch, out_h, out_w, in_h, in_w, interpolation):
        out = out + weight[..., None].astype(flat.dtype) * flat[index]
    if np.issubdtype(np_dtype, np.integer):
        out = np.trunc(out)
    return out.astype(np_dtype)


@ImageProjectiveTransformV2.gradient
def _projective_grad(op, grad):
    images, transforms, _ = op.inputs
    image_size = array_ops.shape(images)[1:3]
    adjoint = _ImageProjectiveTransformV2Adjoint(
        grad, transforms, image_size, interpolation=op.get_attr_str("interpolation"))
    return [adjoint, None, None]


# -- _ImageProjectiveTransformV2Adjoint -------------------------------------------------------

_ImageProjectiveTransformV2Adjoint = define_op(
    "_ImageProjectiveTransformV2Adjoint",
    inputs=["grads: dtype", "transforms: float32", "image_size: int32"],
    outputs=["output: dtype"],
    attrs=["dtype: {float16, float32, float64}", "interpolation: string"])


_ImageProjectiveTransformV2Adjoint.shape_fn(value_inputs=("image_size",))(_resampled_shape)


@_ImageProjectiveTransformV2Adjoint.kernel
def _adjoint_kernel(grads, transforms, image_size, *, dtype, interpolation):
    in_h, in_w = _check(grads.shape, transforms, image_size, interpolation)
    batch, out_h, out_w, channels = grads.shape
    np_dtype = dtype.as_numpy_dtype
    work = _compute_dtype(np_dtype)
    out = np.zeros((batch * in_h * in_w, channels), work)
    if grads.size == 0 or out.size == 0:
        return out.reshape(batch, in_h, in_w, channels).astype(np_dtype)
    g = grads.astype(work, copy=False).reshape(-1, channels)
    for index, weight in _taps(transforms, batch, out_h, out_w, in_h, in_w, interpolation):
        index = index.reshape(-1)
        weight = weight.reshape(-1).astype(work)
        for c in range(channels):
            out[:, c] += np.bincount(index, weights=weight * g[:, c], minlength=out.shape[0])
    return out.reshape(batch, in_h, in_w, channels).astype(np_dtype)


@_ImageProjectiveTransformV2Adjoint.gradient
def _adjoint_grad(op, grad):
    grads, transforms, _ = op.inputs
    forward = ImageProjectiveTransformV2(grad, transforms, array_ops.shape(grads)[1:3],
                                         interpolation=op.get_attr_str("interpolation"))
    return [forward, None, None]
