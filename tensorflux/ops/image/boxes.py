"""Bounding-box image ops: DrawBoundingBoxes(V2) and SampleDistortedBoundingBox(V2), with
`tf.image.draw_bounding_boxes` and `tf.image.sample_distorted_bounding_box`.

Drawing follows TF's CPU kernel: box edges are the truncated pixel positions
`coordinate * (size - 1)`; an edge outside the image is not drawn, the others are clipped; boxes
are painted in order, so a later box wins where outlines cross. Colors cycle through `colors`
(or TF's ten-entry default table; white for one-channel images). All outline pixels of all boxes
are generated at once (ragged ranges), and the winner per pixel is the highest box index.

Sampling follows TF's algorithm (random aspect ratio, a height between the smallest and largest
allowed, a random position; accepted when the crop covers `min_object_covered` of some box), but
draws from the node's own NumPy generator, seeded from the `seed`/`seed2` attrs like the other
random ops: values are not bit-identical to TF's Philox streams. All `max_attempts` candidates
are drawn and checked in one vectorised pass; the first acceptable one is returned, else the
whole image.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.random.stateful import _generator

__all__: list = []

_DEFAULT_COLORS = np.array([[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1],
                            [0.5, 0, 0.5, 1], [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1],
                            [0, 1, 1, 1], [1, 0, 1, 1]], np.float32)


def _invalid(message: str):
    return errors.InvalidArgumentError(None, None, message)


# -- DrawBoundingBoxes --------------------------------------------------------------------------

def _ragged_ranges(starts, stops):
    """(segment id, value) for the concatenation of range(start, stop + 1) per segment."""
    lengths = np.maximum(stops - starts + 1, 0)
    segment = np.repeat(np.arange(lengths.size), lengths)
    offsets = np.arange(segment.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return segment, starts[segment] + offsets


def _draw(images, boxes, colors):
    batch, height, width, depth = images.shape
    if depth not in (1, 3, 4):
        raise _invalid(f"Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA), got "
                       f"{depth}")
    if boxes.ndim != 3 or boxes.shape[2] != 4 or boxes.shape[0] != batch:
        raise _invalid(f"boxes must be [batch, num_boxes, 4] with batch {batch}, got shape "
                       f"{list(boxes.shape)}")
    if colors is None or colors.size == 0:
        colors = np.ones((1, 4), np.float32) if depth == 1 else _DEFAULT_COLORS
    elif colors.ndim != 2 or colors.shape[1] < depth:
        raise _invalid(f"colors must have equal or more channels than the image provided: "
                       f"{list(colors.shape)}")
    num = boxes.shape[1]
    coords = boxes.astype(np.float32).reshape(-1, 4)
    scale = np.array([height - 1, width - 1, height - 1, width - 1], np.float32)
    edges = np.trunc(coords * scale).astype(np.int64)
    r0, c0, r1, c1 = edges.T
    keep = ~((r0 > r1) | (c0 > c1) | (r0 >= height) | (r1 < 0) | (c0 >= width) | (c1 < 0))
    r0c, r1c = np.maximum(r0, 0), np.minimum(r1, height - 1)
    c0c, c1c = np.maximum(c0, 0), np.minimum(c1, width - 1)
    rows, cols, owners = [], [], []
    # horizontal lines (top, bottom) span the clipped columns; vertical ones the clipped rows
    for fixed, ok, start, stop, horizontal in (
            (r0, keep & (r0 >= 0), c0c, c1c, True), (r1, keep & (r1 < height), c0c, c1c, True),
            (c0, keep & (c0 >= 0), r0c, r1c, False), (c1, keep & (c1 < width), r0c, r1c, False)):
        which = np.flatnonzero(ok)
        segment, run = _ragged_ranges(start[which], stop[which])
        box = which[segment]
        rows.append(fixed[box] if horizontal else run)
        cols.append(run if horizontal else fixed[box])
        owners.append(box)
    box = np.concatenate(owners)
    winner = np.full((batch, height, width), -1, np.int64)
    np.maximum.at(winner, (box // max(num, 1), np.concatenate(rows), np.concatenate(cols)), box)
    palette = colors[:, :depth].astype(images.dtype)
    painted = palette[(winner % max(num, 1)) % palette.shape[0]]
    return np.where((winner >= 0)[..., None], painted, images)


def _draw_shape(images, boxes):
    images = images.with_rank(4)
    depth = images._dim_list[3]
    if depth is not None and depth not in (1, 3, 4):
        raise ValueError(f"Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA), got "
                         f"{depth}")
    boxes = boxes.with_rank(3)
    if boxes._dim_list[2] is not None and boxes._dim_list[2] != 4:
        raise ValueError(f"boxes must have 4 coordinates per box, got shape {boxes}")
    return images


DrawBoundingBoxes = define_op(
    "DrawBoundingBoxes", inputs=["images: T", "boxes: float32"], outputs=["output: T"],
    attrs=["T: {float32, float16} = float32"], differentiable=False)


@DrawBoundingBoxes.shape_fn
def _draw_bounding_boxes_shape(images, boxes):
    return _draw_shape(images, boxes)


@DrawBoundingBoxes.kernel
def _draw_bounding_boxes_kernel(images, boxes):
    if images.ndim != 4:
        raise _invalid(f"The rank of the images should be 4, got shape {list(images.shape)}")
    return _draw(images, boxes, None)


DrawBoundingBoxesV2 = define_op(
    "DrawBoundingBoxesV2", inputs=["images: T", "boxes: float32", "colors: float32"],
    outputs=["output: T"], attrs=["T: {float32, float16} = float32"], differentiable=False)


@DrawBoundingBoxesV2.shape_fn
def _draw_bounding_boxes_v2_shape(images, boxes, colors):
    colors.with_rank(2)
    return _draw_shape(images, boxes)


@DrawBoundingBoxesV2.kernel
def _draw_bounding_boxes_v2_kernel(images, boxes, colors):
    if images.ndim != 4:
        raise _invalid(f"The rank of the images should be 4, got shape {list(images.shape)}")
    return _draw(images, boxes, colors)


def draw_bounding_boxes(images, boxes, name=None, colors=None):
    """Draws box outlines on a batch of images.

    Args:
        images: float32/float16 `[batch, height, width, depth]`, depth 1, 3 or 4.
        boxes: float32 `[batch, num_boxes, 4]` of normalised `[y_min, x_min, y_max, x_max]`.
        name: op name.
        colors: optional float32 `[num_colors, 4]` RGBA table cycled over the boxes.

    Returns:
        The images with the outlines drawn (same dtype and shape).

    Example: `tf.summary.image("boxes", tf.image.draw_bounding_boxes(images, boxes))`.
    """
    images = convert_to_tensor(images, name="images")
    if colors is None:
        return DrawBoundingBoxes(images, boxes, name=name)
    return DrawBoundingBoxesV2(images, boxes, colors, name=name)


# -- SampleDistortedBoundingBoxV2 ---------------------------------------------------------------

def _rint(x):
    """lrintf: round half to even, as an int64 array."""
    return np.rint(x).astype(np.int64)


def _candidates(rng, height, width, area_range, aspect_range, attempts):
    """[attempts, 4] int64 crops (y, x, h, w) and a [attempts] mask of the well-formed ones."""
    low_area, high_area = (np.float32(a) * np.float32(width * height) for a in area_range)
    ratio = (rng.random(attempts, dtype=np.float32) * np.float32(aspect_range[1] - aspect_range[0])
             + np.float32(aspect_range[0]))
    h = _rint(np.sqrt(low_area / ratio))
    top = _rint(np.sqrt(high_area / ratio))
    too_wide = _rint(top * ratio) > width
    fitted = ((width + 0.5 - 1e-7) / ratio).astype(np.int64)
    fitted = np.where(_rint(fitted * ratio) > width, fitted - 1, fitted)
    top = np.minimum(np.where(too_wide, fitted, top), height)
    h = np.minimum(h, top)
    h = h + np.floor(rng.random(attempts) * (top - h + 1)).astype(np.int64)
    w = _rint(h * ratio)
    small = (w * h).astype(np.float32) < low_area
    h = np.where(small, h + 1, h)
    w = _rint(h * ratio)
    large = (w * h).astype(np.float32) > high_area
    h = np.where(large, h - 1, h)
    w = _rint(h * ratio)
    area = (w * h).astype(np.float32)
    ok = ((area >= low_area) & (area <= high_area) & (w <= width) & (h <= height) & (w > 0)
          & (h > 0))
    if not (area_range[1] > 0 and area_range[0] <= area_range[1]):
        ok[:] = False
    # NOTE: TF draws offsets in [0, size - crop), never touching the far edge exactly.
    y = np.floor(rng.random(attempts) * np.maximum(height - h, 0)).astype(np.int64)
    x = np.floor(rng.random(attempts) * np.maximum(width - w, 0)).astype(np.int64)
    return np.stack([y, x, h, w], axis=1), ok


def _covers(crops, boxes, min_covered):
    """[attempts] whether each crop covers `min_covered` of some box of area >= 1."""
    y, x, h, w = crops.T
    by0, bx0, by1, bx1 = boxes.T
    inter_h = np.minimum(y[:, None] + h[:, None], by1) - np.maximum(y[:, None], by0)
    inter_w = np.minimum(x[:, None] + w[:, None], bx1) - np.maximum(x[:, None], bx0)
    inter = np.maximum(inter_h, 0) * np.maximum(inter_w, 0)
    area = np.maximum(by1 - by0, 0) * np.maximum(bx1 - bx0, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        covered = inter.astype(np.float32) / area.astype(np.float32)
    hit = (area >= 1) & (covered >= np.float32(min_covered))
    return (h * w >= 1) & hit.any(axis=1)


SampleDistortedBoundingBoxV2 = define_op(
    "SampleDistortedBoundingBoxV2",
    inputs=["image_size: T", "bounding_boxes: float32", "min_object_covered: float32"],
    outputs=["begin: T", "size: T", "bboxes: float32"],
    attrs=["T: {uint8, int8, int16, int32, int64}", "seed: int = 0", "seed2: int = 0",
           "aspect_ratio_range: list(float) = [0.75, 1.33]",
           "area_range: list(float) = [0.05, 1.0]", "max_attempts: int = 100",
           "use_image_if_no_bounding_boxes: bool = False"],
    stateful=True, differentiable=False)


@SampleDistortedBoundingBoxV2.shape_fn
def _sample_distorted_shape(image_size, bounding_boxes, min_object_covered, *,
                            aspect_ratio_range, area_range, max_attempts):
    image_size.with_rank(1).merge_with(TensorShape([3]))
    boxes = bounding_boxes.with_rank(3)
    if boxes._dim_list[2] is not None and boxes._dim_list[2] != 4:
        raise ValueError(f"bounding_boxes must have 4 coordinates per box, got shape {boxes}")
    if min_object_covered.ndims not in (None, 0):
        raise ValueError(f"min_object_covered must be 0-D, got shape {min_object_covered}")
    if len(aspect_ratio_range) != 2 or min(aspect_ratio_range) <= 0:
        raise ValueError(f"aspect_ratio_range must contain 2 positive elements, got "
                         f"{list(aspect_ratio_range)}")
    if len(area_range) != 2 or not all(0 < a <= 1 for a in area_range):
        raise ValueError(f"area_range must contain 2 elements in (0, 1], got {list(area_range)}")
    if max_attempts <= 0:
        raise ValueError(f"max_attempts must be positive, got {max_attempts}")
    return [TensorShape([3]), TensorShape([3]), TensorShape([1, 1, 4])]


def _sampler(T, seed, seed2, aspect_ratio_range, area_range, max_attempts,
             use_image_if_no_bounding_boxes):
    """A per-node sampler(image_size, bounding_boxes, min_object_covered) with its own RNG."""
    rng = _generator(seed, seed2)
    out_type = T.as_numpy_dtype

    def sample(image_size, bounding_boxes, min_object_covered):
        if np.shape(image_size) != (3,):
            raise _invalid(f"image_size must be 1-D with 3 elements, got shape "
                           f"{list(np.shape(image_size))}")
        if bounding_boxes.ndim != 3 or bounding_boxes.shape[2] != 4:
            raise _invalid(f"bounding_boxes must be 3-D [batch, N, 4], got shape "
                           f"{list(bounding_boxes.shape)}")
        min_covered = float(np.asarray(min_object_covered))
        if min_covered < 0:
            raise _invalid(f"min_object_covered must be non-negative, got {min_covered}")
        height, width = int(image_size[0]), int(image_size[1])
        if height <= 0 or width <= 0:
            raise _invalid(f"image height and width must be positive, got {height}x{width}")
        coords = bounding_boxes.reshape(-1, 4).astype(np.float32)
        if coords.size and ((coords < 0) | (coords > 1)).any():
            raise _invalid("All bounding box coordinates must be in [0.0, 1.0]")
        if coords.shape[0] == 0:
            if not use_image_if_no_bounding_boxes:
                raise _invalid("No bounding boxes provided as input. One must enable "
                               "use_image_if_no_bounding_boxes if you wish to not provide any "
                               "bounding boxes.")
            pixels = np.array([[0, 0, height, width]], np.int64)
        else:
            scale = np.array([height, width, height, width], np.float32)
            pixels = (coords * scale).astype(np.int32).astype(np.int64)
        crops, ok = _candidates(rng, height, width, area_range, aspect_ratio_range,
                                max_attempts)
        accepted = np.flatnonzero(ok & _covers(crops, pixels, min_covered))
        y, x, h, w = crops[accepted[0]] if accepted.size else (0, 0, height, width)
        begin = np.array([y, x, 0], out_type)
        size = np.array([h, w, -1], out_type)
        bboxes = np.array([[[y / height, x / width, (y + h) / height, (x + w) / width]]],
                          np.float32)
        return begin, size, bboxes

    return sample


@SampleDistortedBoundingBoxV2.kernel(factory=True)
def _sample_distorted_v2_kernel(T, seed, seed2, aspect_ratio_range, area_range, max_attempts,
                                use_image_if_no_bounding_boxes):
    return _sampler(T, seed, seed2, aspect_ratio_range, area_range, max_attempts,
                    use_image_if_no_bounding_boxes)


SampleDistortedBoundingBox = define_op(
    "SampleDistortedBoundingBox",
    inputs=["image_size: T", "bounding_boxes: float32"],
    outputs=["begin: T", "size: T", "bboxes: float32"],
    attrs=["T: {uint8, int8, int16, int32, int64}", "seed: int = 0", "seed2: int = 0",
           "min_object_covered: float = 0.1", "aspect_ratio_range: list(float) = [0.75, 1.33]",
           "area_range: list(float) = [0.05, 1.0]", "max_attempts: int = 100",
           "use_image_if_no_bounding_boxes: bool = False"],
    stateful=True, differentiable=False)


@SampleDistortedBoundingBox.shape_fn
def _sample_distorted_v1_shape(image_size, bounding_boxes, *, aspect_ratio_range, area_range,
                               max_attempts):
    return _sample_distorted_shape(
        image_size, bounding_boxes, TensorShape([]), aspect_ratio_range=aspect_ratio_range,
        area_range=area_range, max_attempts=max_attempts)


@SampleDistortedBoundingBox.kernel(factory=True)
def _sample_distorted_v1_kernel(T, seed, seed2, min_object_covered, aspect_ratio_range,
                                area_range, max_attempts, use_image_if_no_bounding_boxes):
    sample = _sampler(T, seed, seed2, aspect_ratio_range, area_range, max_attempts,
                      use_image_if_no_bounding_boxes)
    covered = np.float32(min_object_covered)
    return lambda image_size, bounding_boxes: sample(image_size, bounding_boxes, covered)


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, seed2=None,
                                  min_object_covered=0.1, aspect_ratio_range=None,
                                  area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    """Samples a random crop covering part of some bounding box (Inception-style augmentation).

    Args:
        image_size: `[height, width, channels]` (integer).
        bounding_boxes: float32 `[batch, N, 4]` normalised `[y_min, x_min, y_max, x_max]`.
        seed, seed2: the op's seeds, used as given (TF1 ignores the graph-level seed here);
            both 0 or None draw fresh entropy.
        min_object_covered: the fraction of some box the crop must cover.
        aspect_ratio_range: `[low, high]` width/height ratios (default [0.75, 1.33]).
        area_range: `[low, high]` fractions of the image area (default [0.05, 1.0]).
        max_attempts: candidates tried before falling back to the whole image (default 100).
        use_image_if_no_bounding_boxes: with no boxes, cover the whole image instead of failing.
        name: name scope.

    Returns:
        `(begin, size, bboxes)`: `tf.slice(image, begin, size)` is the crop; `bboxes` is it as a
        `[1, 1, 4]` normalised box (for `draw_bounding_boxes`).

    Example:
        `begin, size, _ = tf.image.sample_distorted_bounding_box(tf.shape(image), boxes)`.
    """
    attrs = {}
    if aspect_ratio_range is not None:
        attrs["aspect_ratio_range"] = [float(v) for v in aspect_ratio_range]
    if area_range is not None:
        attrs["area_range"] = [float(v) for v in area_range]
    if max_attempts is not None:
        attrs["max_attempts"] = int(max_attempts)
    if use_image_if_no_bounding_boxes is not None:
        attrs["use_image_if_no_bounding_boxes"] = bool(use_image_if_no_bounding_boxes)
    with scope(name, "sample_distorted_bounding_box"):
        covered = convert_to_tensor(min_object_covered, name="min_object_covered")
        # NOTE: as in TF1, the seeds go to the op as given: the graph-level seed is not used.
        out = SampleDistortedBoundingBoxV2(image_size, bounding_boxes, covered,
                                           seed=int(seed or 0), seed2=int(seed2 or 0), **attrs)
        return out.begin, out.size, out.bboxes
