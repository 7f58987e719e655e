"""CropAndResize and its gradient ops (CropAndResizeGradImage, CropAndResizeGradBoxes), with
`tf.image.crop_and_resize`, and ExtractGlimpse (`tf.image.extract_glimpse`).

Sampling follows TensorFlow's CPU kernel: a box `[y1, x1, y2, x2]` in normalised coordinates
maps crop row `y` to the image row `y1 * (h - 1) + y * (y2 - y1) * (h - 1) / (crop_h - 1)` (the
box centre when `crop_h == 1`), likewise for columns; samples outside `[0, h - 1]` take
`extrapolation_value`. Bilinear sampling blends the four neighbours; nearest rounds halves away
from zero. Arithmetic is float32 like TF's. All boxes are sampled at once: the kernel is one
gather of the four corners per output element, and the gradients are the matching scatters.

ExtractGlimpse reads a window whose corner is the truncated `centre - size / 2`; pixels outside
the image are filled by the `noise` kind (uniform over the image's range, per-channel Gaussian,
per-channel uniform for '', or zero) drawn from an unseeded generator, like TF's kernel.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops

__all__: list = []

_IMAGE_T = "T: {uint8, uint16, int8, int16, int32, int64, float16, float32, float64}"
_METHOD = "method: {'bilinear', 'nearest'} = 'bilinear'"


def _invalid(message: str):
    return errors.InvalidArgumentError(None, None, message)


# -- sampling geometry --------------------------------------------------------------------------

def _axis(low, high, size: int, crop: int):
    """(source coordinates [num_boxes, crop] float32, d coord/d low, d coord/d high)."""
    extent = np.float32(size - 1)
    steps = np.arange(crop, dtype=np.float32)
    if crop > 1:
        scale = (high - low) * extent / np.float32(crop - 1)
        coords = low[:, None] * extent + steps[None, :] * scale[:, None]
        d_high = steps * extent / np.float32(crop - 1)
        d_low = extent - d_high
    else:
        coords = np.broadcast_to((np.float32(0.5) * (low + high) * extent)[:, None],
                                 (low.shape[0], 1))
        d_low = d_high = np.full(1, np.float32(0.5) * extent)
    coords = coords.astype(np.float32)
    return coords, d_low.astype(np.float32), d_high.astype(np.float32)


class _Samples:
    """Where each crop element reads the image: corner indices, lerps and validity masks."""

    def __init__(self, boxes, box_ind, image_shape, crop_size):
        batch, height, width = image_shape[:3]
        boxes = boxes.astype(np.float32, copy=False)
        self.crop_h, self.crop_w = crop_size
        self.ys, self.dy1, self.dy2 = _axis(boxes[:, 0], boxes[:, 2], height, self.crop_h)
        self.xs, self.dx1, self.dx2 = _axis(boxes[:, 1], boxes[:, 3], width, self.crop_w)
        self.valid_y = (self.ys >= 0) & (self.ys <= height - 1)
        self.valid_x = (self.xs >= 0) & (self.xs <= width - 1)
        self.valid = self.valid_y[:, :, None] & self.valid_x[:, None, :]
        self.top = np.clip(np.floor(self.ys), 0, height - 1).astype(np.int64)
        self.bottom = np.clip(np.ceil(self.ys), 0, height - 1).astype(np.int64)
        self.left = np.clip(np.floor(self.xs), 0, width - 1).astype(np.int64)
        self.right = np.clip(np.ceil(self.xs), 0, width - 1).astype(np.int64)
        self.y_lerp = (self.ys - np.floor(self.ys))[:, :, None, None]
        self.x_lerp = (self.xs - np.floor(self.xs))[:, None, :, None]
        # roundf: halves away from zero (valid coordinates are never negative)
        self.near_y = np.clip(np.floor(self.ys + np.float32(0.5)), 0, height - 1).astype(np.int64)
        self.near_x = np.clip(np.floor(self.xs + np.float32(0.5)), 0, width - 1).astype(np.int64)
        self.b = box_ind.astype(np.int64)[:, None, None]

    def index(self, rows, cols):
        return self.b, rows[:, :, None], cols[:, None, :]

    def corners(self, image):
        """(top-left, top-right, bottom-left, bottom-right) [boxes, crop_h, crop_w, depth]."""
        return (image[self.index(self.top, self.left)], image[self.index(self.top, self.right)],
                image[self.index(self.bottom, self.left)],
                image[self.index(self.bottom, self.right)])


def _check(image_shape, boxes, box_ind, crop_size=None):
    if len(image_shape) != 4:
        raise _invalid(f"input image must be 4-D, got shape {list(image_shape)}")
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise _invalid(f"boxes must be 2-D [num_boxes, 4], got shape {list(boxes.shape)}")
    if box_ind.ndim != 1 or box_ind.shape[0] != boxes.shape[0]:
        raise _invalid(f"box_index has incompatible shape {list(box_ind.shape)} for "
                       f"{boxes.shape[0]} boxes")
    if image_shape[1] <= 0 or image_shape[2] <= 0:
        raise _invalid(f"image dimensions must be positive, got shape {list(image_shape)}")
    if box_ind.size and (box_ind.min() < 0 or box_ind.max() >= image_shape[0]):
        raise _invalid(f"box_index has values outside [0, batch_size): batch_size is "
                       f"{image_shape[0]}, box_index is {box_ind.tolist()}")
    if crop_size is None:
        return None
    crop_size = np.asarray(crop_size)
    if crop_size.shape != (2,):
        raise _invalid(f"crop_size must be a 1-D tensor of 2 elements, got shape "
                       f"{list(crop_size.shape)}")
    crop_h, crop_w = int(crop_size[0]), int(crop_size[1])
    if crop_h <= 0 or crop_w <= 0:
        raise _invalid(f"crop dimensions must be positive, got [{crop_h}, {crop_w}]")
    return crop_h, crop_w


def _boxes_shape(boxes: TensorShape, box_ind: TensorShape):
    boxes = boxes.with_rank(2)
    if boxes._dim_list[1] is not None and boxes._dim_list[1] != 4:
        raise ValueError(f"boxes must have 4 coordinates per box, got shape {boxes}")
    box_ind = box_ind.with_rank(1)
    num = boxes._dim_list[0] if boxes._dim_list[0] is not None else box_ind._dim_list[0]
    if None not in (boxes._dim_list[0], box_ind._dim_list[0]) and \
            boxes._dim_list[0] != box_ind._dim_list[0]:
        raise ValueError(f"boxes {boxes} and box_ind {box_ind} disagree on the number of boxes")
    return num


def _size_pair(value, what: str):
    if value is None:
        return [None, None]
    value = np.asarray(value)
    if value.shape != (2,):
        raise ValueError(f"{what} must be a 1-D tensor of 2 elements, got {value.tolist()}")
    return [int(v) for v in value]


# -- CropAndResize ------------------------------------------------------------------------------

CropAndResize = define_op(
    "CropAndResize",
    inputs=["image: T", "boxes: float32", "box_ind: int32", "crop_size: int32"],
    outputs=["crops: float32"],
    attrs=[_IMAGE_T, _METHOD, "extrapolation_value: float = 0.0"])


@CropAndResize.shape_fn(value_inputs=("crop_size",))
def _crop_and_resize_shape(image, boxes, box_ind, crop_size):
    image = image.with_rank(4)
    num = _boxes_shape(boxes, box_ind)
    return TensorShape([num, *_size_pair(crop_size, "crop_size"), image._dim_list[3]])


@CropAndResize.kernel
def _crop_and_resize_kernel(image, boxes, box_ind, crop_size, *, method, extrapolation_value):
    crop = _check(image.shape, boxes, box_ind, crop_size)
    fill = np.float32(extrapolation_value)
    if boxes.shape[0] == 0:
        return np.zeros((0, *crop, image.shape[3]), np.float32)
    s = _Samples(boxes, box_ind, image.shape, crop)
    if method == "nearest":
        values = image[s.index(s.near_y, s.near_x)].astype(np.float32)
    else:
        tl, tr, bl, br = (c.astype(np.float32) for c in s.corners(image))
        top = tl + (tr - tl) * s.x_lerp
        bottom = bl + (br - bl) * s.x_lerp
        values = top + (bottom - top) * s.y_lerp
    return np.where(s.valid[..., None], values, fill).astype(np.float32)


@CropAndResize.gradient
def _crop_and_resize_grad(op, grad):
    image, boxes, box_ind, _ = op.inputs
    method = op.get_attr_str("method")
    grad_image = None
    if image.dtype.base_dtype in (dtypes.float16, dtypes.float32, dtypes.float64):
        grad_image = CropAndResizeGradImage(grad, boxes, box_ind, array_ops.shape(image),
                                            T=image.dtype.base_dtype, method=method)
    grad_boxes = CropAndResizeGradBoxes(grad, image, boxes, box_ind)
    return [grad_image, grad_boxes, None, None]


# -- CropAndResizeGradImage ---------------------------------------------------------------------

CropAndResizeGradImage = define_op(
    "CropAndResizeGradImage",
    inputs=["grads: float32", "boxes: float32", "box_ind: int32", "image_size: int32"],
    outputs=["output: T"], attrs=["T: {float32, float16, float64}", _METHOD],
    differentiable=False)


@CropAndResizeGradImage.shape_fn(value_inputs=("image_size",))
def _crop_grad_image_shape(grads, boxes, box_ind, image_size):
    grads = grads.with_rank(4)
    _boxes_shape(boxes, box_ind)
    if image_size is None:
        return TensorShape([None, None, None, grads._dim_list[3]])
    image_size = np.asarray(image_size)
    if image_size.shape != (4,):
        raise ValueError(f"image_size must be a 1-D tensor of 4 elements, got "
                         f"{image_size.tolist()}")
    return TensorShape([int(v) for v in image_size])


@CropAndResizeGradImage.kernel
def _crop_grad_image_kernel(grads, boxes, box_ind, image_size, *, T, method):
    image_size = np.asarray(image_size)
    if image_size.shape != (4,):
        raise _invalid(f"image_size must be a 1-D tensor of 4 elements, got shape "
                       f"{list(image_size.shape)}")
    shape = tuple(int(v) for v in image_size)
    _check(shape, boxes, box_ind)
    if grads.ndim != 4 or grads.shape[0] != boxes.shape[0] or grads.shape[3] != shape[3]:
        raise _invalid(f"grads must be [num_boxes, crop_height, crop_width, depth] matching "
                       f"image_size {list(shape)}, got shape {list(grads.shape)}")
    out = np.zeros(shape, np.float32)
    if boxes.shape[0] == 0 or grads.size == 0:
        return out.astype(T.as_numpy_dtype)
    s = _Samples(boxes, box_ind, shape, grads.shape[1:3])
    g = np.where(s.valid[..., None], grads.astype(np.float32), np.float32(0))
    if method == "nearest":
        np.add.at(out, s.index(s.near_y, s.near_x), g)
    else:
        y_lerp, x_lerp = s.y_lerp, s.x_lerp
        top, bottom = g * (1 - y_lerp), g * y_lerp
        np.add.at(out, s.index(s.top, s.left), top * (1 - x_lerp))
        np.add.at(out, s.index(s.top, s.right), top * x_lerp)
        np.add.at(out, s.index(s.bottom, s.left), bottom * (1 - x_lerp))
        np.add.at(out, s.index(s.bottom, s.right), bottom * x_lerp)
    return out.astype(T.as_numpy_dtype)


# -- CropAndResizeGradBoxes ---------------------------------------------------------------------

CropAndResizeGradBoxes = define_op(
    "CropAndResizeGradBoxes",
    inputs=["grads: float32", "image: T", "boxes: float32", "box_ind: int32"],
    outputs=["output: float32"], attrs=[_IMAGE_T, "method: {'bilinear'} = 'bilinear'"],
    differentiable=False)


@CropAndResizeGradBoxes.shape_fn
def _crop_grad_boxes_shape(grads, image, boxes, box_ind):
    grads.with_rank(4)
    image.with_rank(4)
    return TensorShape([_boxes_shape(boxes, box_ind), 4])


@CropAndResizeGradBoxes.kernel
def _crop_grad_boxes_kernel(grads, image, boxes, box_ind, *, method):
    _check(image.shape, boxes, box_ind)
    if grads.ndim != 4 or grads.shape[0] != boxes.shape[0] or grads.shape[3] != image.shape[3]:
        raise _invalid(f"grads must be [num_boxes, crop_height, crop_width, depth] matching "
                       f"image {list(image.shape)}, got shape {list(grads.shape)}")
    if boxes.shape[0] == 0 or grads.size == 0:
        return np.zeros((boxes.shape[0], 4), np.float32)
    s = _Samples(boxes, box_ind, image.shape, grads.shape[1:3])
    tl, tr, bl, br = (c.astype(np.float32) for c in s.corners(image))
    y_lerp, x_lerp = s.y_lerp, s.x_lerp
    g = np.where(s.valid[..., None], grads.astype(np.float32), np.float32(0))
    # d crop / d source row and column, summed over depth
    grad_y = np.sum(g * ((1 - x_lerp) * (bl - tl) + x_lerp * (br - tr)), axis=3)
    grad_x = np.sum(g * ((1 - y_lerp) * (tr - tl) + y_lerp * (br - bl)), axis=3)
    per_row = grad_y.sum(axis=2)
    per_col = grad_x.sum(axis=1)
    out = np.stack([per_row @ s.dy1, per_col @ s.dx1, per_row @ s.dy2, per_col @ s.dx2], axis=1)
    return out.astype(np.float32)


# -- ExtractGlimpse -----------------------------------------------------------------------------

ExtractGlimpse = define_op(
    "ExtractGlimpse", inputs=["input: float32", "size: int32", "offsets: float32"],
    outputs=["glimpse: float32"],
    attrs=["centered: bool = True", "normalized: bool = True", "uniform_noise: bool = True",
           "noise: string = 'uniform'"],
    stateful=True, differentiable=False)


@ExtractGlimpse.shape_fn(value_inputs=("size",))
def _extract_glimpse_shape(input, size, offsets, *, uniform_noise, noise):  # noqa: A002
    if uniform_noise and noise not in ("", "uniform"):
        raise ValueError(f"The uniform_noise should not be True when noise is not uniform, got "
                         f"noise '{noise}'")
    if noise not in ("", "uniform", "gaussian", "zero"):
        raise ValueError(f"noise must be one of '', 'uniform', 'gaussian' or 'zero', got "
                         f"'{noise}'")
    images = input.with_rank(4)
    offsets = offsets.with_rank(2)
    if offsets._dim_list[1] is not None and offsets._dim_list[1] != 2:
        raise ValueError(f"offsets must be [batch, 2], got shape {offsets}")
    batch = images._dim_list[0] if images._dim_list[0] is not None else offsets._dim_list[0]
    return TensorShape([batch, *_size_pair(size, "size"), images._dim_list[3]])


def _glimpse_noise(rng, images, shape, kind):
    """Fill values for the glimpse pixels outside the image, per TF's noise kinds."""
    batch, height, width, depth = shape
    if kind == "zero":
        return np.zeros(shape, np.float32)
    axes = (1, 2)
    if kind == "gaussian":  # one draw per pixel, scaled by each channel's mean and std
        draw = rng.standard_normal((batch, height, width, 1)).astype(np.float32)
        mean = images.mean(axis=axes, keepdims=True)
        std = images.std(axis=axes, keepdims=True)
        return mean + draw * std
    if kind == "uniform":  # independent draws over the whole image's range
        low = images.min(axis=(1, 2, 3), keepdims=True)
        high = images.max(axis=(1, 2, 3), keepdims=True)
        return low + rng.random(shape, dtype=np.float32) * (high - low)
    draw = rng.random((batch, height, width, 1), dtype=np.float32)  # '': per-channel range
    low, high = images.min(axis=axes, keepdims=True), images.max(axis=axes, keepdims=True)
    return low + draw * (high - low)


@ExtractGlimpse.kernel(factory=True)
def _extract_glimpse_kernel(centered, normalized, uniform_noise, noise):
    rng = np.random.default_rng()
    kind = "uniform" if uniform_noise else noise

    def glimpse(images, size, offsets):
        if images.ndim != 4:
            raise _invalid(f"input must be 4-dimensional, got shape {list(images.shape)}")
        size = np.asarray(size)
        if size.shape != (2,):
            raise _invalid(f"input must be a vector of size 2 (height, width), got shape "
                           f"{list(size.shape)}")
        if offsets.ndim != 2 or offsets.shape != (images.shape[0], 2):
            raise _invalid(f"offsets must be [batch, 2] with batch {images.shape[0]}, got "
                           f"shape {list(offsets.shape)}")
        batch, height, width, depth = images.shape
        out_h, out_w = int(size[0]), int(size[1])
        extent = np.array([height, width], np.float32)
        centre = offsets.astype(np.float32)
        if normalized:
            centre = centre * extent
        if centered:
            centre = centre / np.float32(2) + extent / np.float32(2)
        # truncation toward zero, as TF's integer conversion of the corner
        corner = np.trunc(centre - np.array([out_h, out_w], np.float32) / 2).astype(np.int64)
        rows = corner[:, :1] + np.arange(out_h)  # [batch, out_h]
        cols = corner[:, 1:] + np.arange(out_w)
        inside = (((rows >= 0) & (rows < height))[:, :, None]
                  & ((cols >= 0) & (cols < width))[:, None, :])
        picked = images[np.arange(batch)[:, None, None], np.clip(rows, 0, height - 1)[:, :, None],
                        np.clip(cols, 0, width - 1)[:, None, :]]
        if inside.all():
            return picked.astype(np.float32)
        fill = _glimpse_noise(rng, images.astype(np.float32), picked.shape, kind)
        return np.where(inside[..., None], picked, fill).astype(np.float32)

    return glimpse


# -- public wrapper -----------------------------------------------------------------------------

def crop_and_resize(image, boxes, box_ind=None, crop_size=None, method="bilinear",
                    extrapolation_value=0, name=None, box_indices=None):
    """Crops boxes out of a batch of images and resizes each crop to `crop_size`.

    Args:
        image: `[batch, height, width, depth]` real tensor.
        boxes: float32 `[num_boxes, 4]` of normalised `[y1, x1, y2, x2]`; `y1 > y2` flips the
            crop, coordinates outside [0, 1] extrapolate.
        box_ind: int32 `[num_boxes]`, the image each box is taken from (`box_indices` in TF2).
        crop_size: int32 `[crop_height, crop_width]`.
        method: "bilinear" or "nearest".
        extrapolation_value: the value of samples falling outside the image.
        name: op name.

    Returns:
        float32 `[num_boxes, crop_height, crop_width, depth]`.

    Raises:
        ValueError: when neither `box_ind` nor `box_indices` is given, or `crop_size` is
            missing.

    Example: `tf.image.crop_and_resize(images, [[0, 0, 0.5, 0.5]], [0], [32, 32])`.
    """
    if box_ind is None:
        box_ind = box_indices
    if box_ind is None:
        raise ValueError("crop_and_resize needs box_ind (or box_indices)")
    if crop_size is None:
        raise ValueError("crop_and_resize needs crop_size")
    return CropAndResize(convert_to_tensor(image, name="image"), boxes, box_ind, crop_size,
                         method=method, extrapolation_value=float(extrapolation_value),
                         name=name)


def extract_glimpse(input, size, offsets, centered=True, normalized=True,  # noqa: A002
                    uniform_noise=True, name=None):
    """Extracts a `size` window around each image's offset; outside pixels become noise.

    Args:
        input: float32 `[batch, height, width, channels]`.
        size: int32 `[glimpse_height, glimpse_width]`.
        offsets: float32 `[batch, 2]` window centres `(y, x)`: relative to the image centre when
            `centered`, scaled by the image size when `normalized` (so [-1, 1] spans the image),
            else in pixels from the top-left corner.
        centered, normalized: how `offsets` are read.
        uniform_noise: kept for TF1 compatibility: with the op's default `noise` attr, pixels
            outside the image get uniform noise over the image's value range either way (as
            TF's kernel does); build `ExtractGlimpse` with `noise="zero"` or `"gaussian"` for
            the other fills.
        name: op name.

    Returns:
        float32 `[batch, glimpse_height, glimpse_width, channels]`.
    """
    return ExtractGlimpse(input, size, offsets, centered=centered, normalized=normalized,
                          uniform_noise=uniform_noise, name=name)
