"""Joining and rearranging ops: concat, split, stack/unstack (and list autopacking), tile, pad,
reverse and one_hot."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import (
    constant_value,
    convert_to_tensor,
    is_tensor_like,
    register_tensor_conversion_function,
)
from tensorflux.framework.tensor_shape import TensorShape, unknown_shape

__all__ = ["concat", "split", "stack", "unstack", "tile", "pad", "reverse", "reverse_v2",
           "reverse_sequence", "one_hot", "parallel_stack"]

_INDEX_TYPES = "{int32, int64} = int32"


def _scope(name, default):
    return graph_mod.get_default_graph().name_scope(name or default)


def _as_outputs(items):
    """Kernel results for a list output: the value itself when the op has one output."""
    items = tuple(items)
    return items[0] if len(items) == 1 else items


def _axis(value, rank: int, what: str = "axis") -> int:
    axis = int(np.reshape(value, [-1])[0]) if np.size(value) == 1 else None
    if axis is None:
        raise ValueError(f"{what} must be a scalar, got {np.asarray(value).tolist()}")
    if not -rank <= axis < rank:
        raise ValueError(f"{what} {axis} is out of range for a tensor of rank {rank} "
                         f"(expected [{-rank}, {rank}))")
    return axis + rank if axis < 0 else axis


def _merge_all(shapes, what: str) -> TensorShape:
    merged = TensorShape(None)
    for i, s in enumerate(shapes):
        if not merged.is_compatible_with(s):
            raise ValueError(f"{what}: shapes of all inputs must match: values[0].shape = "
                             f"{shapes[0]} != values[{i}].shape = {s}")
        merged = merged.merge_with(s)
    return merged


# -- ConcatV2, ConcatOffset -------------------------------------------------------------------

ConcatV2 = define_op("ConcatV2", inputs=["values: N * T", "axis: Tidx"], outputs=["output: T"],
                     attrs=["N: int >= 2", "T: type", f"Tidx: {_INDEX_TYPES}"])


@ConcatV2.shape_fn(value_inputs=("axis",))
def _concat_shape(values, axis):
    rank = next((s.ndims for s in values if s.ndims is not None), None)
    if rank is None:
        return TensorShape(None)
    for s in values:
        if s.ndims is not None and s.ndims != rank:
            raise ValueError(f"Shape must be rank {rank} but is rank {s.ndims} (all inputs to "
                             "concat need the same rank)")
    if rank == 0:
        raise ValueError("Can't concatenate scalars (use tf.stack instead)")
    if axis is None:
        return unknown_shape(rank)
    axis = _axis(axis, rank)
    out = [None] * rank
    total = 0
    for s in values:
        if s.ndims is None:
            total = None
            continue
        for i, d in enumerate(s.dims):
            if i == axis:
                continue
            if d is not None and out[i] is not None and d != out[i]:
                raise ValueError(f"Dimension {i} in both shapes must be equal, but are {out[i]} "
                                 f"and {d}. Shapes are {values[0]} and {s}.")
            out[i] = d if d is not None else out[i]
        if total is not None:
            total = None if s.dims[axis] is None else total + s.dims[axis]
    out[axis] = total
    return TensorShape(out)


@ConcatV2.kernel
def _concat_kernel(*args):
    values = args[:-1]
    axis = int(args[-1])
    try:
        return np.concatenate(values, axis=axis)
    except ValueError:
        shapes = ", ".join(str(list(np.shape(v))) for v in values)
        raise errors.InvalidArgumentError(
            None, None, f"ConcatOp: dimensions of inputs should match except along axis "
                        f"{axis}: shapes {shapes}") from None


ConcatOffset = define_op("ConcatOffset", inputs=["concat_dim: int32", "shape: N * shape_type"],
                         outputs=["offset: N * shape_type"],
                         attrs=["N: int >= 2", f"shape_type: {_INDEX_TYPES}"],
                         differentiable=False)


@ConcatOffset.shape_fn
def _concat_offset_shape(concat_dim, shape):
    return [list(shape)]


@ConcatOffset.kernel
def _concat_offset_kernel(concat_dim, *shapes):
    rank = shapes[0].size
    axis = int(concat_dim) + rank if int(concat_dim) < 0 else int(concat_dim)
    sizes = np.array([s[axis] for s in shapes], dtype=shapes[0].dtype)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(shapes[0].dtype)
    out = []
    for start in starts:
        offset = np.zeros(rank, dtype=shapes[0].dtype)
        offset[axis] = start
        out.append(offset)
    return tuple(out)


def concat(values, axis, name="concat"):
    """Concatenates tensors along `axis` (one tensor: returned through an identity)."""
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) == 1:
        from tensorflux.ops.array_ops import identity

        with _scope(name, "concat"):
            axis_t = convert_to_tensor(axis, dtype=dtypes.int32, name="concat_dim")
            axis_t.shape.with_rank(0)
            return identity(values[0], name=name)
    return ConcatV2(list(values), axis, name=name)


# -- Split, SplitV ----------------------------------------------------------------------------

Split = define_op("Split", inputs=["split_dim: int32", "value: T"],
                  outputs=["output: num_split * T"], attrs=["num_split: int >= 1", "T: type"])


@Split.shape_fn(value_inputs=("split_dim",))
def _split_shape(split_dim, value, *, num_split):
    if value.ndims is None:
        return [[TensorShape(None)] * num_split]
    if split_dim is None:
        return [[unknown_shape(value.ndims)] * num_split]
    axis = _axis(split_dim, value.ndims, "split_dim")
    dims = list(value.dims)
    if dims[axis] is not None:
        if dims[axis] % num_split:
            raise ValueError(f"Dimension size must be evenly divisible by {num_split} but is "
                             f"{dims[axis]}")
        dims[axis] //= num_split
    return [[TensorShape(dims)] * num_split]


@Split.kernel(factory=True)
def _split_kernel(num_split):
    def split_kernel(split_dim, value):
        axis = int(split_dim)
        try:
            return _as_outputs(np.split(value, num_split, axis=axis))
        except ValueError:
            raise errors.InvalidArgumentError(
                None, None, f"Number of ways to split should evenly divide the split dimension, "
                            f"but got split_dim {axis} (size = {value.shape[axis]}) and "
                            f"num_split {num_split}") from None

    return split_kernel


SplitV = define_op("SplitV", inputs=["value: T", "size_splits: Tlen", "split_dim: int32"],
                   outputs=["output: num_split * T"],
                   attrs=["num_split: int >= 1", "T: type", "Tlen: {int8, int32, int64} = int64"])


def _resolve_sizes(sizes: list, total, where: str) -> list:
    unknown = [i for i, s in enumerate(sizes) if s == -1]
    if len(unknown) > 1:
        raise ValueError(f"{where}: only one size in size_splits may be -1, got {sizes}")
    if any(s < -1 for s in sizes):
        raise ValueError(f"{where}: size_splits must be >= 0 (or -1), got {sizes}")
    if total is None:
        return [None if s == -1 else s for s in sizes]
    known = sum(s for s in sizes if s != -1)
    if unknown:
        if known > total:
            raise ValueError(f"{where}: can't split axis of size {total} into pieces of size "
                             f"{sizes}")
        sizes = list(sizes)
        sizes[unknown[0]] = total - known
    elif known != total:
        raise ValueError(f"{where}: can't split axis of size {total} into pieces of size "
                         f"{sizes}")
    return sizes


@SplitV.shape_fn(value_inputs=("size_splits", "split_dim"))
def _split_v_shape(value, size_splits, split_dim, *, num_split):
    if value.ndims is None:
        return [[TensorShape(None)] * num_split]
    if split_dim is None:
        return [[unknown_shape(value.ndims)] * num_split]
    axis = _axis(split_dim, value.ndims, "split_dim")
    if size_splits is None:
        dims = list(value.dims)
        dims[axis] = None
        return [[TensorShape(dims)] * num_split]
    sizes = [int(s) for s in np.reshape(size_splits, [-1])]
    if len(sizes) != num_split:
        raise ValueError(f"size_splits has {len(sizes)} entries but num_split is {num_split}")
    sizes = _resolve_sizes(sizes, value.dims[axis], "SplitV")
    out = []
    for s in sizes:
        dims = list(value.dims)
        dims[axis] = s
        out.append(TensorShape(dims))
    return [out]


@SplitV.kernel
def _split_v_kernel(value, size_splits, split_dim):
    axis = int(split_dim)
    try:
        sizes = _resolve_sizes(size_splits.tolist(), value.shape[axis], "SplitV")
    except ValueError as err:
        raise errors.InvalidArgumentError(None, None, str(err)) from None
    return _as_outputs(np.split(value, np.cumsum(sizes[:-1]), axis=axis))


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits `value` along `axis` into equal parts, or into parts of the given sizes."""
    if isinstance(num_or_size_splits, (int, np.integer)) and not isinstance(
            num_or_size_splits, bool):
        return Split(axis, value, num_split=int(num_or_size_splits), name=name)
    size_splits = convert_to_tensor(num_or_size_splits, preferred_dtype=dtypes.int32)
    if size_splits.shape.ndims == 0 and size_splits.dtype.is_integer:
        count = constant_value(size_splits)
        if count is None:
            raise ValueError("Cannot infer the number of splits from a non-constant scalar "
                             "num_or_size_splits")
        return Split(axis, value, num_split=int(count), name=name)
    if num is None:
        size_splits.shape.with_rank(1)
        num = size_splits.shape.dims[0]
        if num is None:
            raise ValueError(f"Cannot infer num from shape {num_or_size_splits}")
    return SplitV(value, size_splits, axis, num_split=num, name=name)


# -- Pack, Unpack, autopacking ----------------------------------------------------------------

Pack = define_op("Pack", inputs=["values: N * T"], outputs=["output: T"],
                 attrs=["N: int >= 1", "T: type", "axis: int = 0"])


@Pack.shape_fn
def _pack_shape(values, *, axis):
    merged = _merge_all(values, "Pack")
    if merged.ndims is None:
        return TensorShape(None)
    rank = merged.ndims + 1
    if not -rank <= axis < rank:
        raise ValueError(f"axis = {axis} not in [{-rank}, {rank})")
    axis = axis + rank if axis < 0 else axis
    dims = list(merged.dims)
    return TensorShape(dims[:axis] + [len(values)] + dims[axis:])


@Pack.kernel(factory=True)
def _pack_kernel(axis):
    def pack(*values):
        try:
            return np.stack(values, axis=axis)
        except ValueError:
            shapes = [list(np.shape(v)) for v in values]
            raise errors.InvalidArgumentError(
                None, None, f"Shapes of all inputs must match: {shapes}") from None

    return pack


Unpack = define_op("Unpack", inputs=["value: T"], outputs=["output: num * T"],
                   attrs=["num: int >= 0", "T: type", "axis: int = 0"])


@Unpack.shape_fn
def _unpack_shape(value, *, num, axis):
    if value.ndims is None:
        return [[TensorShape(None)] * num]
    rank = value.ndims
    if not -rank <= axis < rank:
        raise ValueError(f"axis = {axis} not in [{-rank}, {rank})")
    axis = axis + rank if axis < 0 else axis
    dims = list(value.dims)
    if dims[axis] is not None and dims[axis] != num:
        raise ValueError(f"Dimension must be {num} but is {dims[axis]}")
    del dims[axis]
    return [[TensorShape(dims)] * num]


@Unpack.kernel(factory=True)
def _unpack_kernel(num, axis):
    def unpack(value):
        if value.shape[axis] != num:
            raise errors.InvalidArgumentError(
                None, None, f"Input shape axis {axis} must equal {num}, got shape "
                            f"{list(value.shape)}")
        return _as_outputs(np.moveaxis(value, axis, 0))

    return unpack


def stack(values, axis=0, name="stack"):
    """Stacks a list of rank-R tensors into one rank-(R+1) tensor along `axis`."""
    if axis == 0:
        try:
            return convert_to_tensor(values, name=name)
        except (TypeError, ValueError):
            pass
    first = convert_to_tensor(values[0])
    if first.shape.ndims is not None:
        rank = first.shape.ndims + 1
        if not -rank <= axis < rank:
            raise ValueError(f"axis = {axis} not in [{-rank}, {rank})")
    return Pack(list(values), axis=axis, name=name)


def parallel_stack(values, name="parallel_stack"):
    """Stacks `values` along a new first axis (same result as `stack`)."""
    return Pack(list(values), axis=0, name=name)


def unstack(value, num=None, axis=0, name="unstack"):
    """Splits `value` along `axis` into a list of tensors of rank R-1."""
    value = convert_to_tensor(value)
    if num is None:
        shape = value.shape
        if shape.ndims is None:
            raise ValueError(f"Cannot infer num from shape {shape}")
        if not -shape.ndims <= axis < shape.ndims:
            raise ValueError(f"axis = {axis} not in [{-shape.ndims}, {shape.ndims})")
        num = shape.dims[axis]
        if num is None:
            raise ValueError(f"Cannot infer num from shape {shape}")
    return Unpack(value, num=num, axis=axis, name=name)


def _is_tensor_item(item) -> bool:
    if isinstance(item, Tensor):
        return True
    if isinstance(item, (list, tuple, np.ndarray, np.generic, int, float, bool, complex, str,
                         bytes)):
        return False
    return is_tensor_like(item)


def _contains_tensor(value) -> bool:
    for item in value:
        if _is_tensor_item(item):
            return True
        if isinstance(item, (list, tuple)) and _contains_tensor(item):
            return True
    return False


def _nested_dtype(value):
    for item in value:
        if _is_tensor_item(item):
            return dtypes.as_dtype(item.dtype).base_dtype
        if isinstance(item, (list, tuple)):
            found = _nested_dtype(item)
            if found is not None:
                return found
    return None


def _autopack(value, dtype, name):
    with _scope(name, "packed") as scope:
        items = []
        for i, item in enumerate(value):
            if _is_tensor_item(item):
                item = convert_to_tensor(item)
                if item.dtype.base_dtype != dtype:
                    raise TypeError(f"Cannot convert a list containing a tensor of dtype "
                                    f"{item.dtype.name} to {dtype.name} (Tensor is: {item!r})")
                items.append(item)
            elif isinstance(item, (list, tuple)) and _contains_tensor(item):
                items.append(_autopack(item, dtype, str(i)))
            else:
                items.append(convert_to_tensor(item, dtype=dtype, name=str(i)))
        return Pack(items, axis=0, name=scope)


def _autopacking_conversion(value, dtype=None, name=None, as_ref=False):
    """Packs a (nested) list holding Tensors; other lists fall through to constants."""
    if as_ref or not _contains_tensor(value):
        return NotImplemented
    inferred = _nested_dtype(value)
    dtype = inferred if dtype is None else dtypes.as_dtype(dtype).base_dtype
    return _autopack(value, dtype, name or "packed")


register_tensor_conversion_function((list, tuple), _autopacking_conversion, 99)


# -- Tile -------------------------------------------------------------------------------------

Tile = define_op("Tile", inputs=["input: T", "multiples: Tmultiples"], outputs=["output: T"],
                 attrs=["T: type", f"Tmultiples: {_INDEX_TYPES}"])


@Tile.shape_fn(value_inputs=("multiples",))
def _tile_shape(input, multiples):
    if multiples is None:
        return unknown_shape(input.ndims)
    multiples = [int(m) for m in np.reshape(multiples, [-1])]
    if input.ndims is not None and input.ndims != len(multiples):
        raise ValueError(f"Shape must be rank {input.ndims} but is rank {len(multiples)}: "
                         f"multiples {multiples} must have one entry per input dimension")
    if any(m < 0 for m in multiples):
        raise ValueError(f"Expected multiples to be non-negative, got {multiples}")
    if input.ndims is None:
        return unknown_shape(len(multiples))
    return TensorShape([None if d is None else d * m for d, m in zip(input.dims, multiples)])


@Tile.kernel
def _tile_kernel(x, multiples):
    if multiples.shape != (x.ndim,) or (multiples.size and multiples.min() < 0):
        raise errors.InvalidArgumentError(
            None, None, f"Expected multiples argument to be a vector of length {x.ndim} with "
                        f"non-negative entries, got {multiples.tolist()}")
    return np.tile(x, multiples)


def tile(input, multiples, name=None):
    """Repeats `input` `multiples[i]` times along each dimension i."""
    return Tile(input, multiples, name=name)


# -- Pad, PadV2, MirrorPad, MirrorPadGrad -------------------------------------------------------

Pad = define_op("Pad", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
                attrs=["T: type", f"Tpaddings: {_INDEX_TYPES}"])
PadV2 = define_op("PadV2", inputs=["input: T", "paddings: Tpaddings", "constant_values: T"],
                  outputs=["output: T"], attrs=["T: type", f"Tpaddings: {_INDEX_TYPES}"])
MirrorPad = define_op("MirrorPad", inputs=["input: T", "paddings: Tpaddings"],
                      outputs=["output: T"],
                      attrs=["T: type", f"Tpaddings: {_INDEX_TYPES}",
                             "mode: {'REFLECT', 'SYMMETRIC'}"])
MirrorPadGrad = define_op("MirrorPadGrad", inputs=["input: T", "paddings: Tpaddings"],
                          outputs=["output: T"],
                          attrs=["T: type", f"Tpaddings: {_INDEX_TYPES}",
                                 "mode: {'REFLECT', 'SYMMETRIC'}"])


def _paddings_list(paddings, rank) -> list | None:
    array = np.asarray(paddings)
    if array.ndim != 2 or array.shape[1] != 2:
        raise ValueError(f"paddings must be a matrix with 2 columns, got shape "
                         f"{list(array.shape)}")
    if rank is not None and array.shape[0] != rank:
        raise ValueError(f"Shape must be rank 1 but is rank {array.shape[0]}: paddings has "
                         f"{array.shape[0]} rows for an input of rank {rank}")
    if array.size and array.min() < 0:
        raise ValueError(f"paddings must be non-negative, got {array.tolist()}")
    return array.tolist()


def _pad_shape_common(input, paddings, sign=1):
    if paddings is None:
        return unknown_shape(input.ndims)
    pads = _paddings_list(paddings, input.ndims)
    dims = input.dims if input.ndims is not None else [None] * len(pads)
    out = []
    for d, (a, b) in zip(dims, pads):
        if d is None:
            out.append(None)
        else:
            size = d + sign * (a + b)
            if size < 0:
                raise ValueError(f"paddings {pads} are larger than the input {input}")
            out.append(size)
    return TensorShape(out)


@Pad.shape_fn(value_inputs=("paddings",))
def _pad_shape(input, paddings):
    return _pad_shape_common(input, paddings)


@PadV2.shape_fn(value_inputs=("paddings",))
def _pad_v2_shape(input, paddings, constant_values):
    constant_values.with_rank(0)
    return _pad_shape_common(input, paddings)


@MirrorPad.shape_fn(value_inputs=("paddings",))
def _mirror_pad_shape(input, paddings, *, mode):
    # NOTE: paddings too large for the mode fail at run time (InvalidArgumentError), as in TF.
    return _pad_shape_common(input, paddings)


@MirrorPadGrad.shape_fn(value_inputs=("paddings",))
def _mirror_pad_grad_shape(input, paddings, *, mode):
    return _pad_shape_common(input, paddings, sign=-1)


def _check_paddings(x, paddings):
    if paddings.shape != (x.ndim, 2) or (paddings.size and paddings.min() < 0):
        raise errors.InvalidArgumentError(
            None, None, f"paddings must be a non-negative matrix of shape [{x.ndim}, 2], got "
                        f"{paddings.tolist()}")


@Pad.kernel
def _pad_kernel(x, paddings):
    _check_paddings(x, paddings)
    return np.pad(x, paddings)


@PadV2.kernel
def _pad_v2_kernel(x, paddings, constant_values):
    _check_paddings(x, paddings)
    return np.pad(x, paddings, constant_values=constant_values)


@MirrorPad.kernel(factory=True)
def _mirror_pad_kernel(mode):
    np_mode = mode.lower()
    offset = 1 if mode == "REFLECT" else 0

    def mirror_pad(x, paddings):
        _check_paddings(x, paddings)
        if paddings.size and (paddings.max(axis=1) > np.array(x.shape) - offset).any():
            raise errors.InvalidArgumentError(
                None, None, f"paddings must be less than{' or equal to' if not offset else ''} "
                            f"the dimension size for mode {mode}: paddings {paddings.tolist()}, "
                            f"input shape {list(x.shape)}")
        return np.pad(x, paddings, mode=np_mode)

    return mirror_pad


@MirrorPadGrad.kernel(factory=True)
def _mirror_pad_grad_kernel(mode):
    reflect = mode == "REFLECT"

    def mirror_pad_grad(g, paddings):
        out = g
        for axis, (a, b) in enumerate(paddings.tolist()):
            if a == 0 and b == 0:
                continue
            n = out.shape[axis] - a - b
            moved = np.moveaxis(out, axis, 0)
            core = moved[a:a + n].copy()
            left = moved[:a][::-1]
            right = moved[a + n:][::-1]
            if reflect:
                core[1:a + 1] += left
                core[n - 1 - b:n - 1] += right
            else:
                core[:a] += left
                core[n - b:] += right
            out = np.moveaxis(core, 0, axis)
        return np.ascontiguousarray(out)

    return mirror_pad_grad


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """Pads `tensor` by `paddings` (`[[before, after], ...]`) in mode CONSTANT, REFLECT or
    SYMMETRIC (case-insensitive)."""
    mode = mode.upper()
    if mode == "CONSTANT":
        if not isinstance(constant_values, Tensor) and np.all(np.asarray(constant_values) == 0):
            return Pad(tensor, paddings, name=name)
        tensor = convert_to_tensor(tensor)
        return PadV2(tensor, paddings, constant_values, name=name)
    if mode in ("REFLECT", "SYMMETRIC"):
        return MirrorPad(tensor, paddings, mode=mode, name=name)
    raise ValueError(f"Unknown padding mode: {mode}")


# -- ReverseV2, ReverseSequence ---------------------------------------------------------------

ReverseV2 = define_op("ReverseV2", inputs=["tensor: T", "axis: Tidx"], outputs=["output: T"],
                      attrs=[f"Tidx: {_INDEX_TYPES}", "T: type"])


@ReverseV2.shape_fn(value_inputs=("axis",))
def _reverse_shape(tensor, axis):
    if axis is not None and tensor.ndims is not None:
        seen = set()
        for a in np.reshape(axis, [-1]).tolist():
            canonical = _axis(a, tensor.ndims)
            if canonical in seen:
                raise ValueError(f"axis {canonical} specified more than once.")
            seen.add(canonical)
    return tensor


@ReverseV2.kernel
def _reverse_kernel(x, axis):
    try:
        return np.flip(x, axis=tuple(axis.tolist()))
    except (ValueError, np.exceptions.AxisError):
        raise errors.InvalidArgumentError(
            None, None, f"reverse: invalid axis {axis.tolist()} for a tensor of rank "
                        f"{x.ndim} (out of range or repeated)") from None


def reverse(tensor, axis, name=None):
    """Reverses `tensor` along each dimension in `axis`."""
    return ReverseV2(tensor, axis, name=name)


reverse_v2 = reverse

ReverseSequence = define_op(
    "ReverseSequence", inputs=["input: T", "seq_lengths: Tlen"], outputs=["output: T"],
    attrs=["seq_dim: int", "batch_dim: int = 0", "T: type", "Tlen: {int32, int64} = int64"])


@ReverseSequence.shape_fn
def _reverse_sequence_shape(input, seq_lengths, *, seq_dim, batch_dim):
    seq_lengths.with_rank(1)
    if input.ndims is not None:
        if not (0 <= seq_dim < input.ndims and 0 <= batch_dim < input.ndims):
            raise ValueError(f"seq_dim {seq_dim} and batch_dim {batch_dim} must be in "
                             f"[0, {input.ndims})")
        if seq_dim == batch_dim:
            raise ValueError(f"seq_dim ({seq_dim}) == batch_dim ({batch_dim})")
        batch, lengths = input.dims[batch_dim], seq_lengths.dims[0]
        if batch is not None and lengths is not None and batch != lengths:
            raise ValueError(f"Length of seq_lengths ({lengths}) != input.dims({batch_dim}) "
                             f"({batch})")
    return input


@ReverseSequence.kernel(factory=True)
def _reverse_sequence_kernel(seq_dim, batch_dim):
    def reverse_sequence(x, lengths):
        moved = np.moveaxis(x, (batch_dim, seq_dim), (0, 1))
        batch, steps = moved.shape[:2]
        if lengths.shape != (batch,):
            raise errors.InvalidArgumentError(
                None, None, f"Length of seq_lengths {list(lengths.shape)} != input.dims"
                            f"({batch_dim}) ({batch})")
        if lengths.size and (lengths.max() > steps or lengths.min() < 0):
            raise errors.InvalidArgumentError(
                None, None, f"seq_lengths must be in [0, {steps}] = input.dims({seq_dim}), got "
                            f"{lengths.tolist()}")
        i = np.arange(steps)
        ends = lengths.astype(np.int64)[:, None]
        index = np.where(i < ends, ends - 1 - i, i)
        out = moved[np.arange(batch)[:, None], index]
        return np.moveaxis(out, (0, 1), (batch_dim, seq_dim))

    return reverse_sequence


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None,
                     seq_dim=None, batch_dim=None):
    """Reverses the first `seq_lengths[b]` entries along `seq_axis` of each batch row b."""
    seq_axis = seq_dim if seq_axis is None else seq_axis
    batch_axis = (batch_dim if batch_dim is not None else 0) if batch_axis is None else batch_axis
    if seq_axis is None:
        raise ValueError("reverse_sequence needs seq_axis (or seq_dim)")
    return ReverseSequence(input, seq_lengths, seq_dim=seq_axis, batch_dim=batch_axis, name=name)


# -- OneHot -----------------------------------------------------------------------------------

OneHot = define_op("OneHot",
                   inputs=["indices: TI", "depth: int32", "on_value: T", "off_value: T"],
                   outputs=["output: T"],
                   attrs=["axis: int = -1", "T: type", "TI: {uint8, int32, int64} = int64"],
                   differentiable=False)


@OneHot.shape_fn(value_inputs=("depth",))
def _one_hot_shape(indices, depth, on_value, off_value, *, axis):
    on_value.with_rank(0)
    off_value.with_rank(0)
    if depth is not None and int(depth) < 0:
        raise ValueError(f"depth must be non-negative, got {int(depth)}")
    if indices.ndims is None:
        return TensorShape(None)
    rank = indices.ndims + 1
    if not -1 <= axis < rank:
        raise ValueError(f"Expected axis to be -1 or between [0, {rank}).  But received: "
                         f"{axis}")
    pos = rank - 1 if axis == -1 else axis
    dims = list(indices.dims)
    return TensorShape(dims[:pos] + [None if depth is None else int(depth)] + dims[pos:])


@OneHot.kernel(factory=True)
def _one_hot_kernel(axis):
    def one_hot(indices, depth, on_value, off_value):
        depth = int(depth)
        if depth < 0:
            raise errors.InvalidArgumentError(None, None, f"depth must be non-negative, got "
                                                          f"{depth}")
        pos = indices.ndim if axis == -1 else axis
        shape = [1] * (indices.ndim + 1)
        shape[pos] = depth
        hot = np.expand_dims(indices, pos) == np.arange(depth).reshape(shape)
        return np.where(hot, on_value, off_value)

    return one_hot


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """One-hot encoding: `on_value` where the index matches, `off_value` elsewhere."""
    with _scope(name, "one_hot") as scope:
        on_t = None if on_value is None else convert_to_tensor(on_value, dtype=dtype,
                                                               name="on_value")
        off_t = None if off_value is None else convert_to_tensor(off_value, dtype=dtype,
                                                                 name="off_value")
        if on_t is not None and off_t is not None and on_t.dtype != off_t.dtype:
            raise TypeError(f"dtype of on_value ({on_t.dtype.name}) and off_value "
                            f"({off_t.dtype.name}) must be the same")
        if dtype is None:
            known = on_t if on_t is not None else off_t
            dtype = dtypes.float32 if known is None else known.dtype.base_dtype
        dtype = dtypes.as_dtype(dtype)
        if on_t is None:
            on_t = convert_to_tensor(np.ones([], dtype.as_numpy_dtype), name="on_value")
        if off_t is None:
            off_t = convert_to_tensor(np.zeros([], dtype.as_numpy_dtype), name="off_value")
        indices = convert_to_tensor(indices, name="indices")
        return OneHot(indices, depth, on_t, off_t, axis=-1 if axis is None else axis,
                      name=scope)
