"""ExtractVolumePatches and `tf.extract_volume_patches`: 3-D patches of [batch, planes, rows,
cols, depth] volumes, flattened in (plane, row, column, depth) order into the last dimension.

Geometry, padding and the gather are those of ExtractImagePatches (`patches.py`) along three
axes, without rates. The gradient scatters back through pixel ids, as that op's does.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops.image.patches import _out_size, _taps
from tensorflux.ops.math import segment as segment_ops
from tensorflux.ops.math import sequence as sequence_ops

__all__ = ["extract_volume_patches"]

_T = ("T: {bfloat16, float16, float32, float64, int8, int16, int32, int64, uint8, uint16, "
      "uint32, uint64}")


def _window(attr, what: str):
    values = list(attr)
    if len(values) != 5 or values[0] != 1 or values[4] != 1:
        raise ValueError(f"{what} must be [1, planes, rows, cols, 1] (patches over the batch or "
                         f"depth dimension are not supported), got {values}")
    if min(values[1:4]) <= 0:
        raise ValueError(f"{what} must be positive, got {values}")
    return values[1:4]


ExtractVolumePatches = define_op(
    "ExtractVolumePatches", inputs=["input: T"], outputs=["patches: T"],
    attrs=["ksizes: list(int)", "strides: list(int)", _T, "padding: {'SAME', 'VALID'}"])


@ExtractVolumePatches.shape_fn
def _extract_volume_patches_shape(input, *, ksizes, strides, padding):  # noqa: A002
    input = input.with_rank(5)  # noqa: A001
    k, s = _window(ksizes, "ksizes"), _window(strides, "strides")
    batch, *sizes, depth = input._dim_list
    out = [None if size is None else _out_size(size, k[i], s[i], 1, padding)[0]
           for i, size in enumerate(sizes)]
    channels = None if depth is None else k[0] * k[1] * k[2] * depth
    return TensorShape([batch, *out, channels])


@ExtractVolumePatches.kernel
def _extract_volume_patches_kernel(input, *, ksizes, strides, padding):  # noqa: A002
    if input.ndim != 5:
        raise errors.InvalidArgumentError(
            None, None, f"input must be 5-D, got shape {list(input.shape)}")
    k, s = _window(ksizes, "ksizes"), _window(strides, "strides")
    batch, planes, rows, cols, depth = input.shape
    taps = [_taps(size, k[i], s[i], 1, padding) for i, size in enumerate((planes, rows, cols))]
    padded = np.zeros((batch, planes + 1, rows + 1, cols + 1, depth), input.dtype)
    padded[:, 1:, 1:, 1:] = input
    p, r, c = taps
    patches = padded[:, p[:, None, None, :, None, None], r[None, :, None, None, :, None],
                     c[None, None, :, None, None, :], :]
    return patches.reshape(batch, p.shape[0], r.shape[0], c.shape[0],
                           k[0] * k[1] * k[2] * depth)


@ExtractVolumePatches.gradient
def _extract_volume_patches_grad(op, grad):
    volume = op.inputs[0]
    attrs = {name: op.get_attr_str(name) for name in ("ksizes", "strides", "padding")}
    shape = array_ops.shape(volume, out_type=dtypes.int64)
    batch, planes, rows, cols, depth = (shape[i] for i in range(5))
    voxels = planes * rows * cols
    # ids 1..voxels of each input voxel; padded taps read 0 and are dropped below
    ids = array_ops.reshape(sequence_ops.range(1, voxels + 1, dtype=dtypes.int64),
                            array_ops.stack([1, planes, rows, cols, 1]))
    source = array_ops.reshape(ExtractVolumePatches(ids, **attrs), [-1])
    grad_shape = array_ops.shape(grad, out_type=dtypes.int64)
    k = attrs["ksizes"][1] * attrs["ksizes"][2] * attrs["ksizes"][3]
    by_tap = array_ops.reshape(grad, array_ops.stack(
        [batch, grad_shape[1] * grad_shape[2] * grad_shape[3] * k, depth]))
    by_tap = array_ops.transpose(by_tap, [1, 0, 2])
    summed = segment_ops.unsorted_segment_sum(by_tap, source, voxels + 1)
    summed = array_ops.reshape(summed[1:], array_ops.stack([planes, rows, cols, batch, depth]))
    return array_ops.transpose(summed, [3, 0, 1, 2, 4])


def extract_volume_patches(input, ksizes, strides, padding, name=None):  # noqa: A002
    """Extracts `ksizes`-sized 3-D patches of a [batch, planes, rows, cols, depth] volume.

    Args:
        input: a 5-D real tensor.
        ksizes: [1, planes, rows, cols, 1], the patch size.
        strides: [1, planes, rows, cols, 1], the distance between patch starts.
        padding: "VALID" or "SAME" (zeros outside the volume).
        name: optional name.

    Returns:
        [batch, out_planes, out_rows, out_cols, ksize_planes * ksize_rows * ksize_cols * depth].
    """
    return ExtractVolumePatches(input, ksizes=list(ksizes), strides=list(strides),
                                padding=padding, name=name)
