"""Joining and splitting ops: concat, split, stack/unstack, and list autopacking
(`tf.convert_to_tensor([t1, 3.0, t2])` builds a Pack)."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import (
    constant_value,
    convert_to_tensor,
    is_tensor_like,
    register_tensor_conversion_function,
)
from tensorflux.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux.ops.array import constants as constant_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.array import slicing as slicing_ops
from tensorflux.ops.array.gradient_helpers import dense_gradient
from tensorflux.ops.array.util import INDEX_TYPES as _INDEX_TYPES
from tensorflux.ops.array.util import as_outputs as _as_outputs
from tensorflux.ops.math import casting as cast_ops

__all__ = ["concat", "split", "stack", "unstack", "parallel_stack"]

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
        for i, d in enumerate(s._dim_list):
            if i == axis:
                continue
            if d is not None and out[i] is not None and d != out[i]:
                raise ValueError(f"Dimension {i} in both shapes must be equal, but are {out[i]} "
                                 f"and {d}. Shapes are {values[0]} and {s}.")
            out[i] = d if d is not None else out[i]
        if total is not None:
            total = None if s._dim_list[axis] is None else total + s._dim_list[axis]
    out[axis] = total
    return TensorShape(out)


@ConcatV2.kernel
def _concat_kernel(*args):
    values = args[:-1]
    axis = int(args[-1])
    try:
        return np.concatenate(values, axis=axis)
    except ValueError:
        raise errors.InvalidArgumentError(None, None, _concat_mismatch(values, axis)) from None


def _concat_mismatch(values, axis) -> str:
    """TF's ConcatOp wording: the first input whose rank or non-axis dims differ from input 0."""
    first = list(np.shape(values[0]))
    if any(np.ndim(v) == 0 for v in values):
        return "ConcatOp : Can't concatenate scalars (use tf.stack instead)"
    for i, v in enumerate(values[1:], 1):
        shape = list(np.shape(v))
        if len(shape) != len(first):
            return (f"ConcatOp : Ranks of all input tensors should match: shape[0] = {first} "
                    f"vs. shape[{i}] = {shape}")
        if any(a != b for d, (a, b) in enumerate(zip(first, shape)) if d != axis % len(first)):
            return (f"ConcatOp : Dimensions of inputs should match: shape[0] = {first} vs. "
                    f"shape[{i}] = {shape}")
    return f"ConcatOp : axis {axis} is invalid for inputs of shape {first}"


@ConcatV2.gradient
def _concat_grad(op, grad):
    values = op.inputs[:-1]
    axis = op.inputs[-1]
    grad = dense_gradient(grad)
    axis_value = constant_value(axis)
    if axis_value is not None and all(v.shape.ndims is not None for v in values):
        rank = values[0].shape.ndims
        a = int(axis_value) % rank
        sizes = [v.shape._dim_list[a] for v in values]
        if None not in sizes:
            return split(grad, sizes, a) + [None]
    shapes = shape_ops.shape_n(values)
    axis = axis if axis.dtype.base_dtype == dtypes.int32 else _cast(axis, dtypes.int32)
    offsets = ConcatOffset(axis, shapes)
    return [slicing_ops.slice(grad, o, s) for o, s in zip(offsets, shapes)] + [None]


ConcatOffset = define_op("ConcatOffset", inputs=["concat_dim: int32", "shape: N * shape_type"],
                         outputs=["offset: N * shape_type"],
                         attrs=["N: int >= 2", f"shape_type: {_INDEX_TYPES}"],
                         differentiable=False)


@ConcatOffset.shape_fn
def _concat_offset_shape(concat_dim, shape):
    # As TF: each offset has its shape input's shape; the kernel checks ranks and sizes.
    return [list(shape)]


def _vector_text(values) -> str:
    return "[" + " ".join(str(v) for v in values) + "]"


@ConcatOffset.kernel
def _concat_offset_kernel(concat_dim, *shapes):
    if np.ndim(concat_dim) != 0:
        raise errors.InvalidArgumentError(
            None, None, f"Concat dim tensor should be a scalar, but got shape "
                        f"{list(np.shape(concat_dim))}")
    for i, shape in enumerate(shapes):
        if shape.ndim != 1:
            raise errors.InvalidArgumentError(
                None, None, f"input {i} should be a vector, but got shape {list(shape.shape)}")
    rank = shapes[0].size
    axis = int(concat_dim) + rank if int(concat_dim) < 0 else int(concat_dim)
    if not 0 <= axis < rank:
        raise errors.InvalidArgumentError(
            None, None, f"Concat dim is out of range: {int(concat_dim)} vs. {rank}")
    first = shapes[0].tolist()
    for i, shape in enumerate(shapes[1:], 1):
        if shape.size != rank:
            raise errors.InvalidArgumentError(
                None, None, f"input {i} should contain {rank} elements, but got "
                            f"{shape.size}")
        if any(a != b for j, (a, b) in enumerate(zip(first, shape.tolist())) if j != axis):
            raise errors.InvalidArgumentError(
                None, None, f"All dimensions except {axis} must match. Input {i} has shape "
                            f"{_vector_text(shape.tolist())} and doesn't match input 0 with "
                            f"shape {_vector_text(first)}.")
    sizes = np.array([s[axis] for s in shapes], dtype=shapes[0].dtype)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(shapes[0].dtype)
    out = []
    for start in starts:
        offset = np.zeros(rank, dtype=shapes[0].dtype)
        offset[axis] = start
        out.append(offset)
    return tuple(out)


def concat(values, axis, name="concat"):
    """Concatenates tensors along `axis`.

    Args:
        values: a list of Tensors of the same rank and dtype (one: returned via Identity).
        axis: the dimension to join (may be negative, a Python int or a scalar tensor).
        name: op name (default "concat").

    Returns:
        A Tensor whose `axis` dimension is the sum of the inputs'.

    Raises:
        ValueError: ranks or non-`axis` dimensions differ at graph construction.
        InvalidArgumentError: (at run time) the shapes do not match.

    Example:
        >>> tf.concat([[1, 2], [3]], 0)   # -> [1, 2, 3]
    """
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) == 1:
        with _scope(name, "concat"):
            axis_t = convert_to_tensor(axis, dtype=dtypes.int32, name="concat_dim")
            axis_t.shape.with_rank(0)
            return constant_ops.identity(values[0], name=name)
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
    dims = list(value._dim_list)
    if dims[axis] is not None:
        if dims[axis] % num_split:
            raise ValueError(f"Dimension size must be evenly divisible by {num_split} but is "
                             f"{dims[axis]}\n\tNumber of ways to split should evenly divide the "
                             f"split dimension (split_dim {axis}, num_split {num_split})")
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


def _cast(x, dtype):
    return cast_ops.cast(x, dtype)


@Split.gradient
def _split_grad(op, *grads):
    return [None, concat(list(grads), op.inputs[0])]


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
        dims = list(value._dim_list)
        dims[axis] = None
        return [[TensorShape(dims)] * num_split]
    sizes = [int(s) for s in np.reshape(size_splits, [-1])]
    if len(sizes) != num_split:
        raise ValueError(f"size_splits has {len(sizes)} entries but num_split is {num_split}")
    sizes = _resolve_sizes(sizes, value._dim_list[axis], "SplitV")
    out = []
    for s in sizes:
        dims = list(value._dim_list)
        dims[axis] = s
        out.append(TensorShape(dims))
    return [out]


@SplitV.kernel
def _split_v_kernel(value, size_splits, split_dim):
    if np.size(split_dim) != 1:
        raise errors.InvalidArgumentError(
            None, None, f"split_dim_tensor must have exactly one element, got shape "
                        f"{list(np.shape(split_dim))}")
    axis = int(np.reshape(split_dim, []))
    if not -value.ndim <= axis < value.ndim:
        raise errors.InvalidArgumentError(
            None, None, f"-input rank(-{value.ndim}) <= split_dim < input rank ({value.ndim}), "
                        f"but got {axis}")
    try:
        sizes = _resolve_sizes(size_splits.tolist(), value.shape[axis], "SplitV")
    except ValueError as err:
        raise errors.InvalidArgumentError(None, None, str(err)) from None
    if axis < 0:
        axis += value.ndim
    # Views, as np.split gives, without its generic per-call overhead.
    pieces = []
    index = [slice(None)] * value.ndim
    start = 0
    for size in sizes:
        index[axis] = slice(start, start + size)
        pieces.append(value[tuple(index)])
        start += size
    return _as_outputs(pieces)


@SplitV.gradient
def _split_v_grad(op, *grads):
    return [concat(list(grads), op.inputs[2]), None, None]


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits `value` along `axis` into equal parts, or into parts of the given sizes.

    Args:
        value: the Tensor to split.
        num_or_size_splits: an int (that many equal parts: Split), or a 1-D list/tensor of
            sizes, one of which may be -1 (SplitV).
        axis: the dimension to split.
        num: the number of outputs when it cannot be inferred from `num_or_size_splits`.
        name: op name (default "split").

    Returns:
        A list of Tensors.

    Raises:
        ValueError: the sizes do not fit the dimension, or `num` cannot be inferred.

    Example:
        >>> tf.split(tf.zeros([4, 6]), [1, -1], axis=1)   # shapes [4, 1] and [4, 5]
    """
    if isinstance(num_or_size_splits, (int, np.integer)) and not isinstance(
            num_or_size_splits, bool):
        return Split(axis, value, num_split=int(num_or_size_splits), name=name)
    size_splits = convert_to_tensor(num_or_size_splits, preferred_dtype=dtypes.int32)
    if size_splits.shape.ndims == 0:
        raise ValueError(f"Rank-0 tensors are not supported as the num_or_size_splits argument "
                         f"to split. Argument provided: {num_or_size_splits}")
    if num is None:
        size_splits.shape.with_rank(1)
        num = size_splits.shape._dim_list[0] if size_splits.shape.ndims is not None else None
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
    dims = list(merged._dim_list)
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


@Pack.gradient
def _pack_grad(op, grad):
    return unstack(dense_gradient(grad), num=op.get_attr("N"), axis=op.get_attr("axis"))


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
    dims = list(value._dim_list)
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


@Unpack.gradient
def _unpack_grad(op, *grads):
    return stack(list(grads), axis=op.get_attr("axis"))


def stack(values, axis=0, name="stack"):
    """Stacks a list of rank-R tensors into one rank-(R+1) tensor along `axis`.

    Args:
        values: a list of Tensors (or values) with the same shape and dtype.
        axis: where the new dimension goes, in [-(R+1), R+1).
        name: op name (default "stack").

    Returns:
        A Tensor of rank R + 1 (a constant when every value is a Python/NumPy value).

    Raises:
        ValueError: shapes differ, or `axis` is out of range.

    Example:
        >>> tf.stack([[1, 2], [3, 4]], axis=1)   # -> [[1, 3], [2, 4]]
    """
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
        num = shape._dim_list[axis]
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


def _autopack(value, dtype, name, cast=False):
    with _scope(name, "packed") as scope:
        items = []
        for i, item in enumerate(value):
            if _is_tensor_item(item):
                item = convert_to_tensor(item)
                if cast and item.dtype.base_dtype != dtype:
                    item = cast_ops.cast(item, dtype)
                if item.dtype.base_dtype != dtype:
                    raise TypeError(f"Cannot convert a list containing a tensor of dtype "
                                    f"{item.dtype.name} to {dtype.name} (Tensor is: {item!r})")
                items.append(item)
            elif isinstance(item, (list, tuple)) and _contains_tensor(item):
                items.append(_autopack(item, dtype, str(i), cast))
            else:
                items.append(convert_to_tensor(item, dtype=dtype, name=str(i)))
        return Pack(items, axis=0, name=scope)


def _autopacking_conversion(value, dtype=None, name=None, as_ref=False):
    """Packs a (nested) list holding Tensors; other lists fall through to constants."""
    if as_ref or not _contains_tensor(value):
        return NotImplemented
    inferred = _nested_dtype(value)
    dtype = inferred if dtype is None else dtypes.as_dtype(dtype).base_dtype
    # As TF: when the caller asks for another dtype than the first tensor's, every tensor of
    # the list is cast to it (concat([int64_t, [[i]]]) with an int32 `i`).
    return _autopack(value, dtype, name or "packed", cast=dtype != inferred)


register_tensor_conversion_function((list, tuple), _autopacking_conversion, 99)
