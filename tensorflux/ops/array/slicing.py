"""Slicing ops: Slice, StridedSlice (and `Tensor.__getitem__`), the Where op (its `tf.where`
wrapper lives in select_ops) and boolean_mask."""

from __future__ import annotations

import builtins

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import Dimension, TensorShape, unknown_shape
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import constants as constant_ops
from tensorflux.ops.array import padding as pad_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.array.gather_scatter import (  # noqa: F401 - gathers lived here first; re-exported
    batch_gather,
    gather,
    gather_nd,
    scatter_nd,
)
from tensorflux.ops.array.gradient_helpers import dense_gradient
from tensorflux.ops.math import binary as binary_ops
from tensorflux.ops.math.casting import cast
from tensorflux.ops.math.reduction import reduce_prod

__all__ = ["slice", "strided_slice", "boolean_mask"]

_INDEX_TYPES = "{int32, int64}"
_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
_MASK_ATTRS = [f"{m}: int = 0" for m in _MASKS]
_pyslice = builtins.slice

# -- Slice ------------------------------------------------------------------------------------

Slice = define_op("Slice", inputs=["input: T", "begin: Index", "size: Index"],
                  outputs=["output: T"], attrs=["T: type", f"Index: {_INDEX_TYPES}"])


@Slice.shape_fn(static_inputs=("begin", "size"))
def _slice_shape(input, begin, size):
    begin_length = begin.shape.with_rank(1)._dim_list[0]
    if size.value is None:
        # TF: a partly known size vector still gives its known entries (-1 counts as unknown)
        known = size.as_shape()
        if known.ndims is None:
            return unknown_shape(input.ndims if input.ndims is not None else begin_length)
        input.with_rank(known.ndims)
        return known
    begin = begin.value
    size = size.value
    sizes = [int(s) for s in np.reshape(size, [-1])]
    if input.ndims is not None and len(sizes) != input.ndims:
        raise ValueError(f"Shape must be rank {input.ndims} but is rank {len(sizes)}: size "
                         f"{sizes} needs one entry per input dimension")
    dims = input._dim_list if input.ndims is not None else [None] * len(sizes)
    starts = None if begin is None else [int(b) for b in np.reshape(begin, [-1])]
    if starts is not None and len(starts) != len(sizes):
        raise ValueError(f"begin {starts} and size {sizes} must have the same length")
    out = []
    for i, (d, s) in enumerate(zip(dims, sizes)):
        b = None if starts is None else starts[i]
        if s < -1:
            raise ValueError(f"size[{i}] = {s} must be non-negative or -1")
        if s == -1:
            # NOTE: out-of-range begin/size fail at run time (InvalidArgumentError), as in TF.
            out.append(None if b is None or d is None or not 0 <= b <= d else d - b)
        else:
            out.append(s)
    return TensorShape(out)


@Slice.kernel
def _slice_kernel(x, begin, size):
    if begin.shape != (x.ndim,) or size.shape != (x.ndim,):
        raise errors.InvalidArgumentError(
            None, None, f"Expected begin and size arguments to be 1-D tensors of size "
                        f"{x.ndim}, but got shapes {list(begin.shape)} and {list(size.shape)}")
    # Python ints: a handful of NumPy calls on 2-element vectors cost more than the slice.
    spec = []
    for i, (dim, b, s) in enumerate(zip(x.shape, begin.tolist(), size.tolist())):
        end = dim if s == -1 else b + s
        if b < 0 or b > dim or end > dim or end < b:
            raise errors.InvalidArgumentError(
                None, None, f"Expected size[{i}] in [0, {dim - b}], but got {s} "
                            f"(begin[{i}] = {b}, input dimension {dim})")
        spec.append(_pyslice(b, end))
    return x[tuple(spec)]


@Slice.gradient
def _slice_grad(op, grad):
    x, begin, _ = op.inputs
    y = op.outputs[0]
    grad = dense_gradient(grad)
    x_shape = shape_ops.shape(x, out_type=begin.dtype)
    y_shape = shape_ops.shape(y, out_type=begin.dtype)
    after = binary_ops.subtract(binary_ops.subtract(x_shape, y_shape), begin)
    paddings = shape_ops.transpose(concat_ops.stack([begin, after]))
    return [pad_ops.pad(grad, paddings), None, None]


def slice(input_, begin, size, name=None):  # noqa: A001 - TF1 name
    """Extracts `size` elements from `begin` (a size of -1 takes the rest of the dimension)."""
    return Slice(input_, begin, size, name=name)


# -- StridedSlice -----------------------------------------------------------------------------

def slice_spec(begin, end, strides, *, begin_mask, end_mask, ellipsis_mask, new_axis_mask,
               shrink_axis_mask) -> tuple:
    """The NumPy index tuple a StridedSlice denotes (ints, slices, None, Ellipsis)."""
    spec = []
    for i, (b, e, s) in enumerate(zip(begin.tolist(), end.tolist(), strides.tolist())):
        bit = 1 << i
        if ellipsis_mask & bit:
            spec.append(Ellipsis)
        elif new_axis_mask & bit:
            spec.append(None)
        elif shrink_axis_mask & bit:
            spec.append(b)
        else:
            if s == 0:
                raise ValueError(f"strides[{i}] must be non-zero")
            spec.append(_pyslice(None if begin_mask & bit else b, None if end_mask & bit else e, s))
    return tuple(spec)


_UNKNOWN = object()


def static_strided_slice_dims(input: TensorShape, begin, end, strides, *, begin_mask, end_mask,
                              ellipsis_mask, new_axis_mask, shrink_axis_mask) -> TensorShape:
    """The static output shape of a StridedSlice; `begin`/`end`/`strides` are lists whose
    entries may be None (unknown), or None when even their length is unknown."""
    if begin is None or end is None or strides is None or input.ndims is None:
        return TensorShape(None)
    if not len(begin) == len(end) == len(strides):
        raise ValueError(f"begin, end and strides must have the same length, got "
                         f"{len(begin)}, {len(end)} and {len(strides)}")
    if bin(ellipsis_mask & ((1 << len(begin)) - 1)).count("1") > 1:
        raise ValueError("Multiple ellipses in slice spec not allowed")
    entries = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if ellipsis_mask & bit:
            entries.append(("ellipsis",))
        elif new_axis_mask & bit:
            entries.append(("new",))
        elif shrink_axis_mask & bit:
            entries.append(("shrink", _UNKNOWN if b is None else b))
        else:
            if s == 0:
                raise ValueError(f"strides[{i}] must be non-zero")
            start = None if begin_mask & bit else (_UNKNOWN if b is None else b)
            stop = None if end_mask & bit else (_UNKNOWN if e is None else e)
            entries.append(("slice", start, stop, _UNKNOWN if s is None else s))
    real = sum(1 for item in entries if item[0] in ("shrink", "slice"))
    fill = input.ndims - real
    if fill < 0:
        raise ValueError(f"Index out of range using input dim {input.ndims}: the slice spec "
                         f"indexes {real} dimensions")
    full = [("slice", None, None, 1)] * fill
    positions = [i for i, item in enumerate(entries) if item[0] == "ellipsis"]
    if positions:
        p = positions[0]
        entries = entries[:p] + full + entries[p + 1:]
    else:
        entries = entries + full
    out = []
    d = 0
    for item in entries:
        if item[0] == "new":
            out.append(1)
            continue
        size = input._dim_list[d]
        if item[0] == "shrink":
            index = item[1]
            if size is not None and index is not _UNKNOWN and not -size <= index < size:
                raise ValueError(f"slice index {index} of dimension {d} out of bounds.")
        elif size is None or _UNKNOWN in item[1:]:
            out.append(None)
        else:
            out.append(len(range(*_pyslice(item[1], item[2], item[3]).indices(size))))
        d += 1
    return TensorShape(out)


StridedSlice = define_op(
    "StridedSlice", inputs=["input: T", "begin: Index", "end: Index", "strides: Index"],
    outputs=["output: T"], attrs=["T: type", f"Index: {_INDEX_TYPES}"] + _MASK_ATTRS)


def _values_list(value):
    return None if value is None else [int(v) for v in np.reshape(value, [-1])]


@StridedSlice.shape_fn(value_inputs=("begin", "end", "strides"))
def _strided_slice_shape(input, begin, end, strides, *, begin_mask, end_mask, ellipsis_mask,
                         new_axis_mask, shrink_axis_mask):
    return static_strided_slice_dims(
        input, _values_list(begin), _values_list(end), _values_list(strides),
        begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis_mask,
        new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask)


def _slice_error(x, spec, err):
    dims_used = sum(1 for item in spec if item is not None and item is not Ellipsis)
    if dims_used > np.ndim(x):
        return errors.InvalidArgumentError(
            None, None, f"Index out of range using input dim {np.ndim(x)}; input has only "
                        f"{np.ndim(x)} dims (strided slice {_spec_text(spec)})")
    return errors.InvalidArgumentError(
        None, None, f"strided slice {_spec_text(spec)} out of bounds for a tensor of shape "
                    f"{list(np.shape(x))}: {err}")


def _spec_text(spec) -> str:
    parts = []
    for item in spec:
        if item is Ellipsis:
            parts.append("...")
        elif item is None:
            parts.append("newaxis")
        elif isinstance(item, _pyslice):
            text = ":".join("" if v is None else str(v) for v in (item.start, item.stop))
            parts.append(text if item.step == 1 else f"{text}:{item.step}")
        else:
            parts.append(str(item))
    return "[" + ", ".join(parts) + "]"


@StridedSlice.kernel(factory=True)
def _strided_slice_kernel(begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask):
    masks = dict(begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                 new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask)

    def strided_slice_kernel(x, begin, end, strides):
        spec = slice_spec(begin, end, strides, **masks)
        try:
            return x[spec]
        except IndexError as err:
            raise _slice_error(x, spec, err) from None

    return strided_slice_kernel


def _masks(op) -> dict:
    return {k: op.get_attr(k) for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                        "new_axis_mask", "shrink_axis_mask")}


@StridedSlice.gradient
def _strided_slice_grad(op, grad):
    x, begin, end, strides = op.inputs
    shape = shape_ops.shape(x, out_type=begin.dtype)
    return [StridedSliceGrad(shape, begin, end, strides, dense_gradient(grad), **_masks(op)),
            None, None, None]


StridedSliceGrad = define_op(
    "StridedSliceGrad",
    inputs=["shape: Index", "begin: Index", "end: Index", "strides: Index", "dy: T"],
    outputs=["output: T"], attrs=["T: type", f"Index: {_INDEX_TYPES}"] + _MASK_ATTRS)


@StridedSliceGrad.shape_fn(value_inputs=("shape",))
def _strided_slice_grad_shape(shape, begin, end, strides, dy):
    if shape is None:
        return TensorShape(None)
    return TensorShape([int(d) for d in np.reshape(shape, [-1])])


@StridedSliceGrad.kernel(factory=True)
def _strided_slice_grad_kernel(begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                               shrink_axis_mask):
    masks = dict(begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                 new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask)

    def strided_slice_grad(shape, begin, end, strides, dy):
        out = np.zeros(shape, dtype=dy.dtype)
        spec = slice_spec(begin, end, strides, **masks)
        try:
            out[spec] = dy
        except (IndexError, ValueError) as err:
            raise _slice_error(out, spec, err) from None
        return out

    return strided_slice_grad


@StridedSliceGrad.gradient
def _strided_slice_grad_grad(op, grad):
    _, begin, end, strides, _ = op.inputs
    return [None, None, None, None,
            strided_slice(dense_gradient(grad), begin, end, strides, **_masks(op))]


def _partial_values(tensor):
    """The entries of a 1-D int tensor that are known at graph construction (None elsewhere)."""
    value = constant_value(tensor)
    if value is not None:
        return [int(v) for v in np.reshape(value, [-1])]
    if tensor.op.type == "Pack":
        items = [constant_value(t) for t in tensor.op.inputs]
        return [None if v is None else int(v) for v in items]
    length = tensor.shape._dim_list[0] if tensor.shape.ndims == 1 else None
    return None if length is None else [None] * length


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """Python-style strided slicing `input_[begin:end:strides]` with TF's masks.

    Args:
        input_: the Tensor to slice.
        begin, end, strides: 1-D int32/int64 vectors of equal length (strides default to 1).
        begin_mask, end_mask: bit i set ignores begin[i] / end[i] (full range).
        ellipsis_mask: bit i set makes entry i an `...`.
        new_axis_mask: bit i set inserts a dimension of size 1 (tf.newaxis).
        shrink_axis_mask: bit i set indexes with begin[i] and removes that dimension.
        var: accepted for TensorFlow compatibility (TF uses it for sliced assignment).
        name: op name (default "StridedSlice").

    Returns:
        The slice, as NumPy basic indexing would give it.

    Raises:
        ValueError: a constant index is out of range or a stride is 0.
        InvalidArgumentError: (at run time) an index is out of range.

    Example:
        >>> tf.strided_slice(x, [0, 1], [2, 3], [1, 1])   # same as x[0:2, 1:3]
    """
    del var
    input_ = convert_to_tensor(input_)
    begin = convert_to_tensor(begin, preferred_dtype=dtypes.int32)
    end = convert_to_tensor(end, dtype=begin.dtype)
    if strides is None:
        strides = constant_ops.ones_like(begin)
    strides = convert_to_tensor(strides, dtype=begin.dtype)
    masks = dict(begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                 new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask)
    result = StridedSlice(input_, begin, end, strides, name=name, **masks)
    if not result.shape.is_fully_defined():
        static = static_strided_slice_dims(input_.shape, _partial_values(begin),
                                           _partial_values(end), _partial_values(strides),
                                           **masks)
        if static.ndims is not None:
            result.set_shape(static)
    return result


_INDEX_ERROR = ("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
                "tf.int32/tf.int64 tensors are valid indices, got {!r}")


def _check_index(index):
    if isinstance(index, (int, np.integer)) and not isinstance(index, (bool, np.bool_)):
        return
    if isinstance(index, Tensor):
        if index.dtype.base_dtype in (dtypes.int32, dtypes.int64) and \
                index.shape.ndims in (None, 0):
            return
    if isinstance(index, np.ndarray) and index.ndim == 0 and index.dtype in (np.int32, np.int64):
        return  # a 0-d int32/int64 array indexes as the integer it holds (TF1 _check_index)
    raise TypeError(_INDEX_ERROR.format(index))


def _known_dimension(item):
    """A `Dimension` (also as a slice bound or step) used as its int, as TF does."""
    if isinstance(item, _pyslice):
        parts = [_known_dimension(v) for v in (item.start, item.stop, item.step)]
        return _pyslice(*parts)
    if isinstance(item, Dimension):
        if item.value is None:
            raise TypeError(_INDEX_ERROR.format(item))
        return item.value
    return item


def _slice_helper(tensor, slice_spec_value, var=None):
    """`tensor[slice_spec]` with TensorFlow's rules (see `Tensor.__getitem__`)."""
    if isinstance(slice_spec_value, (bool, np.bool_)) or (
            isinstance(slice_spec_value, Tensor) and slice_spec_value.dtype.base_dtype is
            dtypes.bool_) or (isinstance(slice_spec_value, np.ndarray)
                              and slice_spec_value.dtype == np.bool_):
        return boolean_mask(tensor, slice_spec_value)
    if not isinstance(slice_spec_value, (list, tuple)):
        slice_spec_value = [slice_spec_value]
    slice_spec_value = [_known_dimension(item) for item in slice_spec_value]
    begin, end, strides = [], [], []
    masks = dict.fromkeys(_MASKS, 0)
    for index, item in enumerate(slice_spec_value):
        bit = 1 << index
        if isinstance(item, _pyslice):
            if item.start is not None:
                _check_index(item.start)
                begin.append(item.start)
            else:
                begin.append(0)
                masks["begin_mask"] |= bit
            if item.stop is not None:
                _check_index(item.stop)
                end.append(item.stop)
            else:
                end.append(0)
                masks["end_mask"] |= bit
            if item.step is not None:
                _check_index(item.step)
                strides.append(item.step)
            else:
                strides.append(1)
        elif item is Ellipsis:
            begin.append(0)
            end.append(0)
            strides.append(1)
            masks["ellipsis_mask"] |= bit
        elif item is None:
            begin.append(0)
            end.append(0)
            strides.append(1)
            masks["new_axis_mask"] |= bit
        else:
            _check_index(item)
            begin.append(item)
            end.append(item + 1 if not isinstance(item, Tensor) else item)
            strides.append(1)
            masks["shrink_axis_mask"] |= bit
    with _scope(None, "strided_slice") as name:
        if begin:
            items = begin + end + strides
            int64 = any(isinstance(v, Tensor) and v.dtype.base_dtype is dtypes.int64
                        for v in items) or any(
                isinstance(v, (int, np.integer)) and not -2**31 <= int(v) < 2**31 for v in items)
            index_dtype = dtypes.int64 if int64 else dtypes.int32
            packed = [_pack_index(values, index_dtype) for values in (begin, end, strides)]
        else:
            empty = constant_ops.constant([], dtype=dtypes.int32)
            packed = [empty, empty, empty]
        return strided_slice(tensor, *packed, var=var, name=name, **masks)


def _pack_index(values, dtype):
    if any(isinstance(v, Tensor) for v in values):
        values = [v if not isinstance(v, Tensor) or v.dtype.base_dtype == dtype else
                  _cast(v, dtype) for v in values]
        return concat_ops.stack(values)

    return constant_ops.constant([int(v) for v in values], dtype=dtype, name="stack")


def _cast(value, dtype):
    return cast(value, dtype)


def _getitem(self, slice_spec_value):
    return _slice_helper(self, slice_spec_value)


_getitem.__doc__ = """Slices the tensor as in NumPy basic indexing: ints, slices (negative steps
too), `...`, `tf.newaxis`, and scalar int32/int64 tensors; a bool tensor applies
`tf.boolean_mask`."""
Tensor._override_operator("__getitem__", _getitem)


# -- Where, boolean_mask ----------------------------------------------------------------------

Where = define_op("Where", inputs=["input: T"], outputs=["index: int64"],
                  attrs=["T: {numbertype, bool} = bool"], differentiable=False)


@Where.shape_fn
def _where_shape(input):
    return TensorShape([None, input.ndims])


@Where.kernel
def _where_kernel(x):
    return np.argwhere(x).astype(np.int64, copy=False)


def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """The elements (or slices along `axis`) of `tensor` where the bool `mask` is true.

    Args:
        tensor: a Tensor of rank R.
        mask: a bool Tensor of known rank K covering dimensions `axis .. axis + K` of `tensor`.
        name: name scope (default "boolean_mask").
        axis: the first dimension `mask` covers (default 0).

    Returns:
        A Tensor of rank R - K + 1: the covered dimensions are flattened into one that keeps
        only the entries where `mask` is true.

    Raises:
        ValueError: `mask` is a scalar, has unknown rank, or its shape does not match.

    Example:
        >>> tf.boolean_mask([[1, 2], [3, 4]], [True, False])   # -> [[1, 2]]
    """

    with _scope(name, "boolean_mask"):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, name="mask")
        mask_rank = mask.shape.ndims
        if mask_rank == 0:
            raise ValueError("mask cannot be scalar.")
        if mask_rank is None:
            raise ValueError("Number of mask dimensions must be specified, even if some "
                             "dimensions are None.  E.g. shape=[None] is ok, but shape=None "
                             "is not.")
        axis = 0 if axis is None else int(constant_value(convert_to_tensor(axis)))
        static = tensor.shape
        if static.ndims is not None:
            if axis < 0:
                axis += static.ndims
            static[axis:axis + mask_rank].assert_is_compatible_with(mask.shape)
        covered = static[axis:axis + mask_rank]
        leading = covered.num_elements()
        if static.is_fully_defined():
            dims = static.as_list()
            tensor = shape_ops.reshape(tensor, dims[:axis] + [leading] + dims[axis + mask_rank:])
        else:
            dyn = shape_ops.shape(tensor)
            count = reduce_prod(dyn[axis:axis + mask_rank], [0], keepdims=True)
            tensor = shape_ops.reshape(
                tensor, concat_ops.concat([dyn[:axis], count, dyn[axis + mask_rank:]], 0))
            if static.ndims is not None:
                tensor.set_shape(static[:axis].concatenate([leading])
                                 .concatenate(static[axis + mask_rank:]))
        flat_mask = shape_ops.reshape(mask, [-1])
        indices = shape_ops.squeeze(Where(flat_mask), axis=[1])
        return gather(tensor, indices, axis=axis)
