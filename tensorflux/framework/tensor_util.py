"""ndarray <-> `TensorProto`, with TensorFlow's encoding rules.

Numeric tensors are written as raw little-endian `tensor_content`; strings as `string_val`.
Reading also accepts the typed repeated fields TensorFlow writes for small constants, where a
shorter list is padded with its last value.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import _infer_numpy, constant_value
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.protos import tensor_pb2

# The largest tensor a TensorProto may declare (bytes of the decoded array): a proto that
# declares more is refused before anything is allocated, whatever its own size.
DEFAULT_MAX_TENSOR_BYTES = (1 << 31) - 1
MAX_TENSOR_PROTO_BYTES = 1 << 31  # a TensorProto's content must stay under 2 GB (as TF)
MAX_RANK = 254


def make_tensor_proto(values, dtype=None, shape=None, verify_shape=False, allow_broadcast=False):
    """Builds a TensorProto from a value (TF's `tf.make_tensor_proto`)."""

    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    array = _infer_numpy(values, dtype)
    if dtype is None:
        dtype = dtypes.as_dtype(array.dtype)
    if shape is not None:
        shape = [int(d) for d in shape]
        if verify_shape and list(array.shape) != shape:
            raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got {array.shape}.")
        if array.size == int(np.prod(shape)):
            array = array.reshape(shape)
        elif array.size == 1 or allow_broadcast:
            array = np.broadcast_to(array.reshape(-1)[:1] if array.size else array, shape)
        else:
            raise ValueError(f"Too many elements provided. Needed at most {np.prod(shape)}, "
                             f"but received {array.size}")
    if dtype.base_dtype is not dtypes.string and \
            array.size * np.dtype(dtype.as_numpy_dtype).itemsize >= MAX_TENSOR_PROTO_BYTES:
        raise ValueError(f"Cannot create a tensor proto whose content is larger than 2GB "
                         f"(shape {list(array.shape)} of {dtype.base_dtype.name}).")
    proto = tensor_pb2.TensorProto(dtype=dtype.as_datatype_enum)
    proto.tensor_shape.CopyFrom(TensorShape(array.shape).as_proto())
    if dtype.base_dtype is dtypes.string:
        proto.string_val.extend(
            v if isinstance(v, bytes) else str(v).encode() for v in array.reshape(-1))
    else:
        np_dtype = np.dtype(dtype.as_numpy_dtype).newbyteorder("<")
        proto.tensor_content = np.ascontiguousarray(array, dtype=np_dtype).tobytes()
    return proto


_TYPED_FIELDS = {
    dtypes.float32: "float_val", dtypes.float64: "double_val", dtypes.int32: "int_val",
    dtypes.int16: "int_val", dtypes.int8: "int_val", dtypes.uint8: "int_val",
    dtypes.uint16: "int_val", dtypes.int64: "int64_val", dtypes.bool_: "bool_val",
    dtypes.uint32: "uint32_val", dtypes.uint64: "uint64_val", dtypes.float16: "half_val",
    dtypes.bfloat16: "half_val", dtypes.complex64: "scomplex_val",
    dtypes.complex128: "dcomplex_val", dtypes.qint8: "int_val", dtypes.quint8: "int_val",
    dtypes.qint32: "int_val", dtypes.qint16: "int_val", dtypes.quint16: "int_val",
}


def declared_size(proto, max_bytes: int = DEFAULT_MAX_TENSOR_BYTES) -> tuple:
    """(DType, shape list, element count) a TensorProto declares, checked before any allocation.

    Raises:
        InvalidArgumentError: an unknown dtype, a negative dimension, rank over 254, or a
            declared size over `max_bytes`.
    """
    try:
        dtype = dtypes.as_dtype(proto.dtype)
    except TypeError:
        raise errors.InvalidArgumentError(
            None, None, f"TensorProto has an invalid dtype enum {proto.dtype}") from None
    if dtype.base_dtype is dtypes.resource or dtype.base_dtype is dtypes.variant:
        raise errors.InvalidArgumentError(
            None, None, f"TensorProto of dtype {dtype.name} cannot be decoded")
    dims = proto.tensor_shape.dim
    if len(dims) > MAX_RANK:
        raise errors.InvalidArgumentError(
            None, None, f"TensorProto has rank {len(dims)}, more than the maximum {MAX_RANK}")
    shape = [d.size for d in dims]
    if any(size < 0 for size in shape):
        raise errors.InvalidArgumentError(
            None, None, f"TensorProto has a negative dimension in its shape {shape}")
    count = 1
    for size in shape:
        count *= size
    itemsize = 8 if dtype.base_dtype is dtypes.string else \
        np.dtype(dtype.base_dtype.as_numpy_dtype).itemsize
    if count * itemsize > max_bytes:
        raise errors.InvalidArgumentError(
            None, None, f"TensorProto declares shape {shape} of {dtype.base_dtype.name}: "
            f"{count * itemsize} bytes, over the limit of {max_bytes} bytes")
    return dtype, shape, count


def make_ndarray(proto, max_bytes: int = DEFAULT_MAX_TENSOR_BYTES) -> np.ndarray:
    """Returns the ndarray a TensorProto holds (TF's `tf.make_ndarray`).

    Args:
        proto: a TensorProto.
        max_bytes: the largest decoded size accepted (the proto's declared shape is checked
            before anything is allocated: a short proto cannot make this allocate gigabytes).

    Raises:
        InvalidArgumentError: a declared size over `max_bytes`, or content inconsistent with
            the declared shape (more values than elements, a `tensor_content` of the wrong
            length).
    """
    dtype, shape, count = declared_size(proto, max_bytes)
    if dtype.base_dtype is dtypes.string:
        values = list(proto.string_val)
        array = np.empty(len(values), dtype=object)
        array[:] = values
        return _pad(array, count).reshape(shape)
    np_dtype = np.dtype(dtype.base_dtype.as_numpy_dtype)
    if proto.tensor_content:
        if len(proto.tensor_content) != count * np_dtype.itemsize:
            raise errors.InvalidArgumentError(
                None, None, f"TensorProto's tensor_content has {len(proto.tensor_content)} "
                f"bytes; its shape {shape} of {dtype.base_dtype.name} needs "
                f"{count * np_dtype.itemsize}")
        data = np.frombuffer(proto.tensor_content, dtype=np_dtype.newbyteorder("<"))
        return data.astype(np_dtype).reshape(shape)
    field = _TYPED_FIELDS.get(dtype.base_dtype)
    if field is None:
        raise TypeError(f"Unsupported tensor dtype {dtype.name} in TensorProto")
    values = getattr(proto, field)
    per_element = 2 if field in ("scomplex_val", "dcomplex_val") else 1
    if len(values) > count * per_element:
        raise errors.InvalidArgumentError(
            None, None, f"TensorProto has {len(values)} values in {field} for {count} "
            f"elements of shape {shape}")
    if field == "half_val":
        raw = np.asarray(values, dtype=np.int64)
        if dtype.base_dtype is dtypes.bfloat16:
            array = (raw.astype(np.uint32) << 16).view(np.float32)
        else:
            array = raw.astype(np.uint16).view(np.float16)
    elif per_element == 2:
        if len(values) % 2:
            raise errors.InvalidArgumentError(
                None, None, f"TensorProto's {field} has an odd number of values")
        pairs = np.asarray(values, dtype=np.float64).reshape(-1, 2)
        array = (pairs[:, 0] + 1j * pairs[:, 1]).astype(np_dtype)
    else:
        array = np.asarray(values).astype(np_dtype)
    return _pad(array, count).reshape(shape)


def _pad(array: np.ndarray, count: int) -> np.ndarray:
    if array.size == count:
        return array
    if array.size == 0:
        return np.zeros(count, dtype=array.dtype) if array.dtype != object else \
            np.full(count, b"", dtype=object)
    if array.size > count:
        raise errors.InvalidArgumentError(
            None, None, f"TensorProto has {array.size} values for {count} elements")
    return np.concatenate([array, np.repeat(array[-1:], count - array.size)])


# Graph values that are not Tensors but count as tensors for `tf.is_tensor` (Variable registers
# itself: framework sits below the op families).
_TENSOR_LIKE_TYPES: list = []


def register_tensor_like_type(cls) -> None:
    """Makes `tf.is_tensor` true for instances of `cls` (and `tf.get_static_value` None)."""
    if cls not in _TENSOR_LIKE_TYPES:
        _TENSOR_LIKE_TYPES.append(cls)


def is_tensor(x) -> bool:
    """Whether `x` is a tensor-like graph value (Tensor, Variable, SparseTensor, IndexedSlices).

    NumPy arrays and Python values are not tensors.
    """
    return isinstance(x, (Tensor, SparseTensor, IndexedSlices, *_TENSOR_LIKE_TYPES))


def get_static_value(tensor, partial: bool = False):
    """The value of `tensor` if it can be computed while the graph is built, else None.

    Args:
        tensor: a Tensor, or any other value (returned unchanged, as in TF).
        partial: accepted for TF compatibility; only fully known values are returned.

    Returns:
        A NumPy value, None when it depends on feeds or state, or `tensor` itself when it is
        not a graph value.

    Example:
        >>> tf.get_static_value(tf.constant([1, 2]))   # -> array([1, 2], dtype=int32)
    """
    if _TENSOR_LIKE_TYPES and isinstance(tensor, tuple(_TENSOR_LIKE_TYPES)):
        return None
    if not isinstance(tensor, Tensor):
        return tensor
    return constant_value(tensor)


_NON_NUMERIC = {dtypes.bool_, dtypes.string}


def is_numeric_tensor(tensor) -> bool:
    """Whether `tensor` is a Tensor of a number dtype (not bool, string or resource)."""
    if not isinstance(tensor, Tensor):
        return False
    dtype = tensor.dtype.base_dtype
    return dtype not in _NON_NUMERIC and (dtype.is_floating or dtype.is_integer
                                          or dtype.is_complex or dtype.is_quantized)
