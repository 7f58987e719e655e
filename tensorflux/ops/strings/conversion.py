"""String ops: join, reduce-join, format, and conversions to and from numbers and bytes.

String tensors are NumPy object arrays of `bytes`. NumPy has no vectorised bytes operations, so
string kernels map a function over the flat array (object ufuncs or one comprehension); numeric
work around them (offsets, lengths, indices) stays vectorised. Substrings, case, regex and
splitting live in `string_text_ops.py`; hashing and base64 in `string_codec_ops.py`.
"""

from __future__ import annotations

import re

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op, get_op_def
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.debug.logging import summarize_value_v2

__all__ = ["string_join", "as_string", "decode_raw", "string_to_number", "reduce_join"]


def _invalid(message: str):
    return errors.InvalidArgumentError(None, None, message)


def map_bytes(fn, array, dtype=object) -> np.ndarray:
    """`fn` applied to every element of a string array, keeping its shape."""
    array = np.asarray(array, dtype=object)
    flat = array.reshape(-1)
    if dtype is object:
        out = np.empty(flat.size, dtype=object)
        out[:] = [fn(x) for x in flat]
    else:
        out = np.fromiter((fn(x) for x in flat), dtype=dtype, count=flat.size)
    return out.reshape(array.shape)


def scalar_bytes(value: bytes) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = value
    return out


def _shape_text(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


# -- StringJoin ------------------------------------------------------------------------------

StringJoin = define_op("StringJoin", inputs=["inputs: N * string"], outputs=["output: string"],
                       attrs=["N: int >= 0", "separator: string = ''"], differentiable=False)


@StringJoin.shape_fn
def _string_join_shape(inputs):
    result = TensorShape([])
    for shape in inputs:
        if shape.ndims == 0:
            continue
        if result.ndims == 0:
            result = shape
        elif not result.is_compatible_with(shape):
            raise ValueError(f"Input shapes do not match: {result} vs. {shape}")
        else:
            result = result.merge_with(shape)
    return result if any(s.ndims != 0 for s in inputs) else TensorShape([])


@StringJoin.kernel
def _string_join_kernel(*inputs, separator):
    separator = separator.encode()
    shape = None
    for value in inputs:
        if value.ndim:
            if shape is not None and value.shape != shape:
                raise _invalid(f"Input shapes do not match: {_shape_text(shape)} vs. "
                               f"{_shape_text(value.shape)}")
            shape = value.shape
    if not inputs:
        return scalar_bytes(b"")
    result = np.asarray(inputs[0], dtype=object)
    for value in inputs[1:]:
        if separator:
            result = np.add(result, separator, dtype=object)
        result = np.add(result, value, dtype=object)
    if not isinstance(result, np.ndarray):
        return scalar_bytes(result)
    return result


def string_join(inputs, separator="", name=None):
    """Joins string tensors element-wise; scalars broadcast (TF1 `tf.string_join`).

    Args:
        inputs: string tensors of one shape, or scalars.
        separator: put between the joined strings.
        name: optional name.

    Returns:
        A string tensor.

    Example:
        >>> tf.string_join([["a", "b"], "x"], separator="-")   # [b"a-x", b"b-x"]
    """
    tensors = [convert_to_tensor(x, dtype=dtypes.string) for x in inputs]
    return StringJoin(tensors, separator=separator, name=name)


# -- StringFormat ----------------------------------------------------------------------------

StringFormat = define_op("StringFormat", inputs=["inputs: T"], outputs=["output: string"],
                         attrs=["T: list(type) >= 0", "template: string = '%s'",
                                "placeholder: string = '%s'", "summarize: int = 3"],
                         differentiable=False)


@StringFormat.shape_fn
def _string_format_shape(inputs, *, template, placeholder):
    count = template.count(placeholder)
    if count != len(inputs):
        raise ValueError(f"num placeholders in template and num inputs must match: {count} vs. "
                         f"{len(inputs)}")
    return TensorShape([])


@StringFormat.kernel(factory=True)
def _string_format_kernel(template, placeholder, summarize):
    pieces = template.split(placeholder)

    def string_format(*inputs):
        if len(inputs) != len(pieces) - 1:
            raise _invalid(f"num placeholders in template and num inputs must match: "
                           f"{len(pieces) - 1} vs. {len(inputs)}")
        out = [pieces[0]]
        for value, piece in zip(inputs, pieces[1:]):
            out.append(summarize_value_v2(value, summarize))
            out.append(piece)
        return scalar_bytes("".join(out).encode())

    return string_format


def string_format(template, inputs, placeholder="{}", summarize=3, name=None):
    """Formats tensors into a scalar string, each summarized `tf.print` style.

    Args:
        template: text with one `placeholder` per input tensor.
        inputs: a tensor or a list of tensors.
        placeholder: the marker replaced by each tensor in turn.
        summarize: entries shown at each end of every dimension (-1: all).
        name: optional name.

    Returns:
        A scalar string tensor.

    Raises:
        ValueError: the placeholder count differs from the number of inputs.
    """
    if isinstance(inputs, Tensor):
        inputs = [inputs]
    inputs = [convert_to_tensor(x) for x in inputs]
    if template.count(placeholder) != len(inputs):
        raise ValueError(f"The template expects {template.count(placeholder)} tensors, but the "
                         f"inputs only has {len(inputs)}. Please ensure the number of "
                         "placeholders in template matches inputs length.")
    return StringFormat(inputs, template=template, placeholder=placeholder,
                        summarize=summarize, name=name)


# -- AsString --------------------------------------------------------------------------------

AsString = define_op(
    "AsString", inputs=["input: T"], outputs=["output: string"],
    attrs=["T: {float32, float64, int32, uint8, int16, int8, int64, bfloat16, uint16, float16, "
           "uint32, uint64, complex64, complex128, bool, string}",
           "precision: int = -1", "scientific: bool = False", "shortest: bool = False",
           "width: int = -1", "fill: string = ''"], differentiable=False)


@AsString.shape_fn
def _as_string_shape(input):
    return input


def _as_string_format(dtype, precision, scientific, shortest, width, fill):
    """The printf format for one element (raises InvalidArgumentError for bad attrs)."""
    if scientific and shortest:
        raise _invalid("Cannot select both scientific and shortest notation")
    if len(fill) > 1:
        raise _invalid("Fill string must be one or fewer characters")
    if fill and fill not in " +-0#":
        raise _invalid(f'Fill argument not supported: "{fill}"')
    spec = "%" + fill + (str(width) if width > -1 else "")
    if dtype.is_integer:
        if precision > -1:
            raise _invalid(f"precision not supported for datatype {dtype.name}")
        if scientific or shortest:
            raise _invalid(f"scientific and shortest format not supported for datatype "
                           f"{dtype.name}")
        return spec + "d"
    if dtype.base_dtype == dtypes.string:
        return spec + "s"
    spec += f".{precision}" if precision > -1 else ""
    return spec + ("g" if shortest else "e" if scientific else "f")


@AsString.kernel(factory=True)
def _as_string_kernel(T, precision, scientific, shortest, width, fill):
    try:
        spec = _as_string_format(T, precision, scientific, shortest, width, fill)
    except errors.InvalidArgumentError as err:
        error = err

        def failing(value):
            raise error

        return failing

    if T.base_dtype == dtypes.bool_:
        def as_string(value):
            return np.where(value, np.array(b"true", dtype=object),
                            np.array(b"false", dtype=object)).astype(object)
    elif T.base_dtype == dtypes.string:
        byte_spec = spec.encode()

        def as_string(value):
            return map_bytes(lambda s: byte_spec % s, value)
    elif T.is_complex:
        pair = f"({spec},{spec})"

        def as_string(value):
            flat = [(pair % (z.real, z.imag)).encode() for z in value.reshape(-1).tolist()]
            return object_array(flat, value.shape)
    else:
        def as_string(value):
            flat = [(spec % v).encode() for v in value.reshape(-1).tolist()]
            return object_array(flat, value.shape)

    return as_string


def object_array(items: list, shape) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(shape)


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="",
              name=None):
    """Converts numbers (or bools) to strings, printf style (TF1 `tf.as_string`).

    Args:
        input: a numeric or bool tensor.
        precision: digits after the point for floats (-1: printf's default 6).
        scientific: use exponent notation for floats.
        shortest: use the shorter of plain and exponent notation (%g).
        width: pad to at least this many characters.
        fill: the pad flag: one of " ", "+", "-", "0", "#" (or empty for spaces on the left).
        name: optional name.

    Returns:
        A string tensor of the same shape.
    """
    return AsString(input, precision=precision, scientific=scientific, shortest=shortest,
                    width=width, fill=fill, name=name)


# -- DecodeRaw ---------------------------------------------------------------------------------

DecodeRaw = define_op(
    "DecodeRaw", inputs=["bytes: string"], outputs=["output: out_type"],
    attrs=["out_type: {float16, float32, float64, int32, uint16, uint8, int16, int8, int64, "
           "complex64, complex128, bool, bfloat16}", "little_endian: bool = True"],
    differentiable=False)


@DecodeRaw.shape_fn
def _decode_raw_shape(bytes):
    return bytes.concatenate([None])


@DecodeRaw.kernel(factory=True)
def _decode_raw_kernel(out_type, little_endian):
    order = "<" if little_endian else ">"
    if out_type.base_dtype == dtypes.bfloat16:
        wire, itemsize = np.dtype(order + "u2"), 2
    elif out_type.base_dtype == dtypes.bool_:
        wire, itemsize = np.dtype(np.uint8), 1
    else:
        wire = np.dtype(out_type.as_numpy_dtype).newbyteorder(order)
        itemsize = wire.itemsize
    native = np.dtype(out_type.as_numpy_dtype)

    def decode_raw(data):
        if data.size == 1:  # one record per step (a reader's value): no join, no length scan
            record = data.reshape(-1)[0]
            if len(record) % itemsize:
                raise _invalid(f"Input to DecodeRaw has length {len(record)} that is not a "
                               f"multiple of {itemsize}, the size of {out_type.name}")
            values = np.frombuffer(record, dtype=wire)
            if out_type.base_dtype == dtypes.bfloat16:
                values = (values.astype(np.uint32) << 16).view(np.float32)
            elif out_type.base_dtype == dtypes.bool_:
                values = values != 0
            return values.astype(native).reshape(data.shape + (len(record) // itemsize,))
        flat = data.reshape(-1)
        if flat.size == 0:
            return np.zeros(data.shape + (0,), native)
        lengths = np.fromiter(map(len, flat), dtype=np.int64, count=flat.size)
        mismatched = np.flatnonzero(lengths != lengths[0])
        if mismatched.size:
            i = int(mismatched[0])
            raise _invalid(f"DecodeRaw requires input strings to all be the same size, but "
                           f"element {i} has size {int(lengths[0])} != {int(lengths[i])}")
        if lengths[0] % itemsize:
            raise _invalid(f"Input to DecodeRaw has length {int(lengths[0])} that is not a "
                           f"multiple of {itemsize}, the size of {out_type.name}")
        values = np.frombuffer(b"".join(flat), dtype=wire)
        if out_type.base_dtype == dtypes.bfloat16:
            values = (values.astype(np.uint32) << 16).view(np.float32)
        elif out_type.base_dtype == dtypes.bool_:
            values = values != 0
        return values.astype(native).reshape(data.shape + (int(lengths[0]) // itemsize,))

    return decode_raw


def decode_raw(input_bytes=None, out_type=None, little_endian=True, name=None, bytes=None):
    """Reinterprets the bytes of each string as a vector of `out_type` (TF1 `tf.decode_raw`).

    Args:
        input_bytes: a string tensor; every element must have the same length.
        out_type: the element type to read.
        little_endian: byte order of the data.
        name: optional name.
        bytes: deprecated alias of `input_bytes`.

    Returns:
        A tensor with one more dimension than `input_bytes`, of length `len / sizeof(out_type)`.
    """
    if input_bytes is None:
        input_bytes = bytes
    if input_bytes is None or out_type is None:
        raise ValueError("decode_raw needs input_bytes and out_type")
    return DecodeRaw(convert_to_tensor(input_bytes, dtype=dtypes.string),
                     out_type=dtypes.as_dtype(out_type), little_endian=little_endian, name=name)


# -- StringToNumber --------------------------------------------------------------------------

StringToNumber = define_op(
    "StringToNumber", inputs=["string_tensor: string"], outputs=["output: out_type"],
    attrs=["out_type: {float32, float64, int32, int64, uint32, uint64} = float32"],
    differentiable=False)


@StringToNumber.shape_fn
def _string_to_number_shape(string_tensor):
    return string_tensor


_INT_TEXT = re.compile(rb"\s*[+-]?[0-9]+\s*")
_HEX_FLOAT = re.compile(rb"\s*[+-]?0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*([pP][+-]?[0-9]+)?\s*")


def _parse_float(text: bytes) -> float:
    if b"_" not in text:
        try:
            return float(text)
        except ValueError:
            if _HEX_FLOAT.fullmatch(text):
                return float.fromhex(text.decode())
    raise ValueError(text)


def _parse_int(text: bytes) -> int:
    if _INT_TEXT.fullmatch(text):
        return int(text)
    raise ValueError(text)


@StringToNumber.kernel(factory=True)
def _string_to_number_kernel(out_type):
    native = np.dtype(out_type.as_numpy_dtype)
    integer = out_type.is_integer
    parse = _parse_int if integer else _parse_float

    def string_to_number(strings):
        flat = strings.reshape(-1)
        try:
            values = [parse(s) for s in flat]
        except ValueError as err:
            text = err.args[0].decode("utf-8", errors="replace")
            raise _invalid(f"StringToNumberOp could not correctly convert string: {text}") \
                from None
        if integer:
            parsed = np.array(values, dtype=object)
            info = np.iinfo(native)
            bad = np.flatnonzero((parsed < info.min) | (parsed > info.max)) if flat.size else []
            if len(bad):
                text = flat[bad[0]].decode("utf-8", errors="replace")
                raise _invalid(f"StringToNumberOp could not correctly convert string: {text}")
            return np.array(values, dtype=native).reshape(strings.shape)
        with np.errstate(over="ignore"):
            return np.array(values, dtype=np.float64).astype(native).reshape(strings.shape)

    return string_to_number


def string_to_number(string_tensor=None, out_type=dtypes.float32, name=None, input=None):
    """Parses each string as a number (TF1 `tf.string_to_number`).

    Args:
        string_tensor: a string tensor.
        out_type: float32 (default), float64, int32, int64, uint32 or uint64.
        name: optional name.
        input: alias of `string_tensor`.

    Returns:
        A tensor of `out_type` and the same shape.

    Raises (at run time):
        InvalidArgumentError: a string is not a number of that type, naming the string.
    """
    value = string_tensor if string_tensor is not None else input
    return StringToNumber(convert_to_tensor(value, dtype=dtypes.string),
                          out_type=dtypes.as_dtype(out_type), name=name)


# -- ReduceJoin ------------------------------------------------------------------------------

ReduceJoin = define_op("ReduceJoin", inputs=["inputs: string", "reduction_indices: int32"],
                       outputs=["output: string"],
                       attrs=["keep_dims: bool = False", "separator: string = ''"],
                       differentiable=False)


class _DuplicateAxis(ValueError):
    pass


def _reduction_axes(axes, ndims: int) -> list:
    result = []
    for axis in np.asarray(axes).reshape(-1).tolist():
        if not -ndims <= axis < ndims:
            raise ValueError(f"Invalid reduction dimension {axis} for input with {ndims} "
                             "dimensions.")
        axis %= ndims
        if axis in result:
            raise _DuplicateAxis(f"Duplicate reduction dimension {axis}")
        result.append(axis)
    return result


@ReduceJoin.shape_fn(value_inputs=("reduction_indices",))
def _reduce_join_shape(inputs, reduction_indices, *, keep_dims):
    if inputs.ndims is None or reduction_indices is None:
        return TensorShape(None)
    try:
        axes = _reduction_axes(reduction_indices, inputs.ndims)
    except _DuplicateAxis:
        return TensorShape(None)  # duplicates fail when the op runs, as in TensorFlow
    dims = [1 if i in axes else d for i, d in enumerate(inputs._dim_list)]
    return TensorShape(dims if keep_dims else [d for i, d in enumerate(dims) if i not in axes])


@ReduceJoin.kernel
def _reduce_join_kernel(inputs, reduction_indices, *, keep_dims, separator):
    try:
        axes = _reduction_axes(reduction_indices, inputs.ndim)
    except ValueError as err:
        raise _invalid(str(err)) from None
    keep = [d for d in range(inputs.ndim) if d not in axes]
    # The last listed axis varies slowest in each joined run, as in TensorFlow.
    moved = inputs.transpose(keep + axes[::-1])
    outer = tuple(inputs.shape[d] for d in keep)
    joined = int(np.prod([inputs.shape[d] for d in axes], dtype=np.int64))
    rows = moved.reshape(int(np.prod(outer, dtype=np.int64)), joined)
    sep = separator.encode()
    out = object_array([sep.join(row) for row in rows], outer)
    if keep_dims:
        out = out.reshape([1 if d in axes else inputs.shape[d] for d in range(inputs.ndim)])
    return out


def reduce_join(inputs, axis=None, keep_dims=None, separator="", name=None,
                reduction_indices=None, keepdims=None):
    """Joins the strings along `axis` (all axes when None) (TF1 `tf.reduce_join`).

    Args:
        inputs: a string tensor.
        axis: the axes to join over; with several, the last varies slowest.
        keep_dims: keep reduced axes with length 1.
        separator: put between joined strings.
        name: optional name.
        reduction_indices: deprecated alias of `axis`.
        keepdims: alias of `keep_dims`.

    Returns:
        A string tensor.
    """
    inputs = convert_to_tensor(inputs, dtype=dtypes.string)
    if axis is None:
        axis = reduction_indices
    keep = bool(keepdims if keepdims is not None else keep_dims)
    if axis is None:
        ndims = inputs.shape.ndims
        if ndims is None:
            rank = get_op_def("Rank")(inputs)
            axis = get_op_def("Range")(rank - 1, np.int32(-1), np.int32(-1))
        else:
            axis = np.arange(ndims - 1, -1, -1, dtype=np.int32)
    return ReduceJoin(inputs, convert_to_tensor(axis, dtype=dtypes.int32), keep_dims=keep,
                      separator=separator, name=name)
