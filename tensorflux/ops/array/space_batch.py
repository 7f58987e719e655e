"""SpaceToBatchND / BatchToSpaceND and their 4-D forms SpaceToBatch / BatchToSpace.

SpaceToBatchND zero-pads the M spatial dimensions after the batch dimension, cuts them into
blocks of `block_shape`, and moves the offsets within a block into the batch dimension (block
offsets outermost): `[batch, *spatial, *rest] -> [prod(block) * batch, *(padded / block),
*rest]`. BatchToSpaceND is its inverse followed by cropping. Each is the other's gradient.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape

__all__ = ["space_to_batch_nd", "batch_to_space_nd", "space_to_batch", "batch_to_space"]

_INDEX = "{int32, int64}"


def _blocks_and_pads(block_shape, pads, what):
    """Validated (block ints, [M, 2] pad ints); raises ValueError naming what is wrong."""
    block = [int(b) for b in np.reshape(block_shape, [-1])]
    pads = np.asarray(pads)
    if pads.shape != (len(block), 2):
        raise ValueError(f"{what} must have shape [{len(block)}, 2] (one row per block "
                         f"dimension), got {list(pads.shape)}")
    if any(b < 1 for b in block):
        raise ValueError(f"block_shape must be positive, got {block}")
    if pads.size and pads.min() < 0:
        raise ValueError(f"{what} must be non-negative, got {pads.tolist()}")
    return block, pads.astype(np.int64).tolist()


def _block_layout(input, block_shape, pads, what):
    """(input dims, M, block ints or None, [M, 2] pad ints or None) for the shape functions.

    `block_shape` and `pads` are StaticInputs (block_shape may be a plain list: the 4-D ops'
    block_size attr); M, the number of block dimensions, comes from block_shape's length.
    Returns None when M or the input rank is unknown.
    """
    if isinstance(block_shape, list):
        m, block = len(block_shape), block_shape
    else:
        m = block_shape.shape.with_rank(1)._dim_list[0]
        block = block_shape.value
    pad_shape = pads.shape.with_rank(2)
    if m is None:
        m = pad_shape._dim_list[0]
    if pad_shape._dim_list[1] not in (None, 2) or pad_shape._dim_list[0] not in (None, m):
        raise ValueError(f"{what} must have shape [{m}, 2] (one row per block dimension), got "
                         f"{pad_shape}")
    if m is None or input.ndims is None:
        return None
    dims = list(input.with_rank_at_least(m + 1)._dim_list)
    pad_value = pads.value
    if block is not None and pad_value is not None:
        block, pad_value = _blocks_and_pads(block, pad_value, what)
    elif block is not None:
        block = [int(b) for b in np.reshape(block, [-1])]
        if any(b < 1 for b in block):
            raise ValueError(f"block_shape must be positive, got {block}")
    return dims, m, block, pad_value


def _space_to_batch_shape_common(input, block_shape, paddings):
    layout = _block_layout(input, block_shape, paddings, "paddings")
    if layout is None:
        return TensorShape(None) if input.ndims is None else TensorShape([None] * input.ndims)
    dims, m, block, pads = layout
    batch = None if dims[0] is None or block is None else dims[0] * int(np.prod(block))
    spatial = [None] * m
    if block is not None and pads is not None:
        for i, (size, b, (lo, hi)) in enumerate(zip(dims[1:m + 1], block, pads)):
            if size is None:
                continue
            padded = size + lo + hi
            if padded % b:
                raise ValueError(f"Dimension size must be evenly divisible by {b} but is "
                                 f"{padded} (padded spatial dimension {i}: {size} + {lo} + {hi})")
            spatial[i] = padded // b
    return TensorShape([batch, *spatial, *dims[m + 1:]])


def _batch_to_space_shape_common(input, block_shape, crops):
    layout = _block_layout(input, block_shape, crops, "crops")
    if layout is None:
        return TensorShape(None) if input.ndims is None else TensorShape([None] * input.ndims)
    dims, m, block, crop = layout
    batch = dims[0]
    if block is None:
        batch = None
    elif batch is not None:
        total = int(np.prod(block))
        if batch % total:
            raise ValueError(f"Dimension size must be evenly divisible by {total} but is "
                             f"{batch} (input batch dimension; block_shape {block})")
        batch //= total
    spatial = [None] * m
    if block is not None and crop is not None:
        for i, (size, b, (lo, hi)) in enumerate(zip(dims[1:m + 1], block, crop)):
            if size is None:
                continue
            out = size * b - lo - hi
            if out < 0:
                raise ValueError(f"crops {[lo, hi]} are larger than spatial dimension {i} "
                                 f"({size} * {b} = {size * b})")
            spatial[i] = out
    return TensorShape([batch, *spatial, *dims[m + 1:]])


def _kernel_args(block_shape, pads, what):
    try:
        return _blocks_and_pads(block_shape, pads, what)
    except ValueError as err:
        raise errors.InvalidArgumentError(None, None, str(err)) from None


def _check_block_rank(x, block):
    """The number of block dimensions; raises unless `x` has one more dimension at least."""
    m = len(block)
    if x.ndim < m + 1:
        raise errors.InvalidArgumentError(
            None, None, f"input rank must be at least {m + 1} for block_shape {block}, got "
                        f"shape {list(x.shape)}")
    return m


def _space_to_batch(x, block, pads):
    m = _check_block_rank(x, block)
    full_pads = [(0, 0)] + [tuple(p) for p in pads] + [(0, 0)] * (x.ndim - m - 1)
    padded = np.pad(x, full_pads) if any(lo or hi for lo, hi in pads) else x
    spatial = padded.shape[1:m + 1]
    for i, (size, b) in enumerate(zip(spatial, block)):
        if size % b:
            raise errors.InvalidArgumentError(
                None, None, f"padded spatial dimension {i} ({size}) is not divisible by block "
                            f"size {b}")
    batch, rest = padded.shape[0], padded.shape[m + 1:]
    split = [batch]
    for size, b in zip(spatial, block):
        split += [size // b, b]
    view = padded.reshape(split + list(rest))
    block_axes = [2 + 2 * i for i in range(m)]
    grid_axes = [1 + 2 * i for i in range(m)]
    rest_axes = list(range(1 + 2 * m, view.ndim))
    moved = view.transpose(block_axes + [0] + grid_axes + rest_axes)
    out_shape = [batch * int(np.prod(block))] + [s // b for s, b in zip(spatial, block)]
    return np.ascontiguousarray(moved).reshape(out_shape + list(rest))


def _batch_to_space(x, block, crops):
    m = _check_block_rank(x, block)
    total = int(np.prod(block))
    if x.shape[0] % total:
        raise errors.InvalidArgumentError(
            None, None, f"input batch dimension {x.shape[0]} is not divisible by the product "
                        f"of block_shape {block} = {total}")
    batch = x.shape[0] // total
    spatial, rest = x.shape[1:m + 1], x.shape[m + 1:]
    view = x.reshape(list(block) + [batch] + list(spatial) + list(rest))
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, view.ndim))
    full = np.ascontiguousarray(view.transpose(perm)).reshape(
        [batch] + [s * b for s, b in zip(spatial, block)] + list(rest))
    index = [slice(None)]
    for i, (size, (lo, hi)) in enumerate(zip(full.shape[1:m + 1], crops)):
        if lo + hi > size:
            raise errors.InvalidArgumentError(
                None, None, f"crops {[lo, hi]} are larger than spatial dimension {i} ({size})")
        index.append(slice(lo, size - hi))
    return full[tuple(index)]


# -- ops --------------------------------------------------------------------------------------

SpaceToBatchND = define_op(
    "SpaceToBatchND", inputs=["input: T", "block_shape: Tblock_shape", "paddings: Tpaddings"],
    outputs=["output: T"],
    attrs=["T: type", f"Tblock_shape: {_INDEX} = int32", f"Tpaddings: {_INDEX} = int32"])

BatchToSpaceND = define_op(
    "BatchToSpaceND", inputs=["input: T", "block_shape: Tblock_shape", "crops: Tcrops"],
    outputs=["output: T"],
    attrs=["T: type", f"Tblock_shape: {_INDEX} = int32", f"Tcrops: {_INDEX} = int32"])

SpaceToBatch = define_op(
    "SpaceToBatch", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
    attrs=["T: type", f"Tpaddings: {_INDEX} = int32", "block_size: int >= 2"])

BatchToSpace = define_op(
    "BatchToSpace", inputs=["input: T", "crops: Tidx"], outputs=["output: T"],
    attrs=["T: type", "block_size: int >= 2", f"Tidx: {_INDEX} = int32"])


@SpaceToBatchND.shape_fn(static_inputs=("block_shape", "paddings"))
def _space_to_batch_nd_shape(input, block_shape, paddings):
    return _space_to_batch_shape_common(input, block_shape, paddings)


@BatchToSpaceND.shape_fn(static_inputs=("block_shape", "crops"))
def _batch_to_space_nd_shape(input, block_shape, crops):
    return _batch_to_space_shape_common(input, block_shape, crops)


@SpaceToBatch.shape_fn(static_inputs=("paddings",))
def _space_to_batch_shape(input, paddings, *, block_size):
    input = input.with_rank(4)
    return _space_to_batch_shape_common(input, [block_size] * 2, paddings)


@BatchToSpace.shape_fn(static_inputs=("crops",))
def _batch_to_space_shape(input, crops, *, block_size):
    input = input.with_rank(4)
    return _batch_to_space_shape_common(input, [block_size] * 2, crops)


@SpaceToBatchND.kernel
def _space_to_batch_nd_kernel(input, block_shape, paddings):
    return _space_to_batch(input, *_kernel_args(block_shape, paddings, "paddings"))


@BatchToSpaceND.kernel
def _batch_to_space_nd_kernel(input, block_shape, crops):
    return _batch_to_space(input, *_kernel_args(block_shape, crops, "crops"))


def _check_rank4(x):
    if x.ndim != 4:
        raise errors.InvalidArgumentError(
            None, None, f"input must be 4-D [batch, height, width, depth], got shape "
                        f"{list(x.shape)}")


@SpaceToBatch.kernel
def _space_to_batch_kernel(input, paddings, *, block_size):
    _check_rank4(input)
    return _space_to_batch(input, *_kernel_args([block_size] * 2, paddings, "paddings"))


@BatchToSpace.kernel
def _batch_to_space_kernel(input, crops, *, block_size):
    _check_rank4(input)
    return _batch_to_space(input, *_kernel_args([block_size] * 2, crops, "crops"))


@SpaceToBatchND.gradient
def _space_to_batch_nd_grad(op, grad):
    _, block_shape, paddings = op.inputs
    return BatchToSpaceND(grad, block_shape, paddings), None, None


@BatchToSpaceND.gradient
def _batch_to_space_nd_grad(op, grad):
    _, block_shape, crops = op.inputs
    return SpaceToBatchND(grad, block_shape, crops), None, None


@SpaceToBatch.gradient
def _space_to_batch_grad(op, grad):
    return BatchToSpace(grad, op.inputs[1], block_size=op.get_attr("block_size")), None


@BatchToSpace.gradient
def _batch_to_space_grad(op, grad):
    return SpaceToBatch(grad, op.inputs[1], block_size=op.get_attr("block_size")), None


# -- wrappers ---------------------------------------------------------------------------------

def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002 - TF name
    """Moves blocks of the spatial dimensions into the batch dimension.

    Args:
        input: `[batch, *spatial (M dims), *rest]`.
        block_shape: int 1-D `[M]`, every entry >= 1.
        paddings: int `[M, 2]`: zeros added before and after each spatial dimension; each
            padded size must be divisible by its block size.
        name: optional name.

    Returns:
        `[batch * prod(block_shape), *(padded_spatial / block_shape), *rest]`.

    Example:
        >>> tf.space_to_batch_nd(tf.zeros([1, 4, 4, 3]), [2, 2], [[0, 0], [0, 0]])
        ...   # -> shape [4, 2, 2, 3]
    """
    return SpaceToBatchND(input, block_shape, paddings, name=name)


def batch_to_space_nd(input, block_shape, crops, name=None):  # noqa: A002 - TF name
    """The inverse of `space_to_batch_nd`: moves batch blocks back into space, then crops.

    Args:
        input: `[batch * prod(block_shape), *spatial (M dims), *rest]`.
        block_shape: int 1-D `[M]`, every entry >= 1.
        crops: int `[M, 2]`: entries removed from the start and end of each spatial dimension.
        name: optional name.

    Returns:
        `[batch, *(spatial * block_shape - crops), *rest]`.
    """
    return BatchToSpaceND(input, block_shape, crops, name=name)


def _square_block(block_size, block_shape, what):
    """`[b, b]` (int64) of the one given of `block_size` and `block_shape` (its TF2 name);
    `what` names the wrapper in the error when neither is given."""
    if block_size is not None and block_shape is not None:
        raise ValueError("Cannot specify both 'block_size' and 'block_shape'.")
    block_size = block_shape if block_size is None else block_size
    if block_size is None:
        raise ValueError(f"{what} needs block_size")
    return np.array([block_size, block_size], np.int64)


def space_to_batch(input, paddings, block_size=None, name=None,  # noqa: A002 - TF name
                   block_shape=None):
    """`space_to_batch_nd` with a square `block_size` over height and width (NHWC).

    As in TF1 this builds a SpaceToBatchND op (the SpaceToBatch op exists for imported graphs).

    Raises:
        ValueError: both or neither of `block_size` and `block_shape` are given.
    """
    block = _square_block(block_size, block_shape, "space_to_batch")
    result = SpaceToBatchND(input, block, paddings, name=name)
    result.set_shape(result.shape.with_rank(4))  # the 4-D form: rank 4 even when unknown
    return result


def batch_to_space(input, crops, block_size, name=None, block_shape=None):  # noqa: A002
    """`batch_to_space_nd` with a square `block_size` over height and width (NHWC).

    As in TF1 this builds a BatchToSpaceND op (the BatchToSpace op exists for imported graphs).

    Raises:
        ValueError: both or neither of `block_size` and `block_shape` are given.
    """
    block = _square_block(block_size, block_shape, "batch_to_space")
    result = BatchToSpaceND(input, block, crops, name=name)
    result.set_shape(result.shape.with_rank(4))
    return result
