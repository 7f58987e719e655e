"""Cast and the TF1 conversion helpers (to_float, to_int32, ..., saturate_cast).

Float to integer truncates toward zero; NaN and out-of-range values follow the C conversion of
the machine (NumPy's astype), as TensorFlow's kernel does. Complex to real keeps the real part;
anything to bool is `x != 0`.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.op_def import define_op
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.math.select import ClipByValue

__all__ = ["bitcast", "cast", "to_float", "to_double", "to_int32", "to_int64", "to_bfloat16",
           "saturate_cast"]

Cast = define_op("Cast", inputs=["x: SrcT"], outputs=["y: DstT"],
                 attrs=["SrcT: type", "DstT: type", "Truncate: bool = False"])


@Cast.shape_fn
def _cast_shape(x):
    return x


@Cast.kernel(factory=True)
def _cast_factory(SrcT, DstT):
    out = DstT.as_numpy_dtype
    if SrcT.base_dtype == dtypes.string or DstT.base_dtype == dtypes.string:
        if SrcT.base_dtype != DstT.base_dtype:
            raise errors.UnimplementedError(
                None, None, f"Cast {SrcT.name} to {DstT.name} is not supported")
        return lambda x: x
    if DstT.is_bool:
        return lambda x: x != 0
    if SrcT.is_complex and not DstT.is_complex:
        def complex_to_real(x):
            with np.errstate(invalid="ignore", over="ignore"):
                return np.real(x).astype(out)

        return complex_to_real

    def cast_kernel(x):
        with np.errstate(invalid="ignore", over="ignore"):
            return x.astype(out, copy=False) if isinstance(x, np.ndarray) else np.asarray(
                x).astype(out)

    if (SrcT.is_integer or SrcT.is_bool) and (DstT.is_integer or DstT.base_dtype in (
            dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)):
        # Integers wrap and fit these floats: no floating-point flag to silence.
        def exact_cast_kernel(x):
            return x.astype(out, copy=False) if isinstance(x, np.ndarray) else np.asarray(
                x).astype(out)

        return exact_cast_kernel
    return cast_kernel


def _differentiable(dtype) -> bool:
    return dtype.is_floating or dtype.is_complex


@Cast.gradient
def _cast_grad(op, grad):
    src = op.inputs[0].dtype.base_dtype
    dst = op.outputs[0].dtype.base_dtype
    if _differentiable(src) and _differentiable(dst):
        return cast(grad, src)
    return None


def cast(x, dtype, name=None):
    """Casts `x` to `dtype`; a tensor already of that dtype is returned unchanged.

    Args:
        x: a tensor or value, or a SparseTensor / IndexedSlices (their values are cast).
        dtype: the target DType (or anything `tf.as_dtype` accepts).
        name: op name (default "Cast").

    Returns:
        A tensor of `dtype` with `x`'s shape.

    Example:
        >>> tf.cast([-1.7, 1.7], tf.int32)   # -> [-1, 1]
    """
    dtype = dtypes.as_dtype(dtype).base_dtype
    graph = graph_mod.get_default_graph()

    if isinstance(x, Tensor) and x.dtype.base_dtype == dtype:
        return x
    if isinstance(x, (SparseTensor, IndexedSlices)):  # casts the values, keeps the indices
        with graph.name_scope(name or "Cast"):
            values = cast(x.values, dtype, name="Cast")
        if isinstance(x, SparseTensor):
            return SparseTensor(x.indices, values, x.dense_shape)
        return IndexedSlices(values, x.indices, x.dense_shape)
    with graph.name_scope(name or "Cast") as scope:
        value = convert_to_tensor(x, name="x")
        if value.dtype.base_dtype == dtype:
            return value
        return Cast(value, DstT=dtype, name=scope)


def to_float(x, name="ToFloat"):
    """cast(x, float32)."""
    return cast(x, dtypes.float32, name=name)


def to_double(x, name="ToDouble"):
    """cast(x, float64)."""
    return cast(x, dtypes.float64, name=name)


def to_int32(x, name="ToInt32"):
    """cast(x, int32)."""
    return cast(x, dtypes.int32, name=name)


def to_int64(x, name="ToInt64"):
    """cast(x, int64)."""
    return cast(x, dtypes.int64, name=name)


def to_bfloat16(x, name="ToBFloat16"):
    """cast(x, bfloat16)."""
    return cast(x, dtypes.bfloat16, name=name)


def saturate_cast(value, dtype, name=None):
    """Casts with clamping to `dtype`'s range instead of wrapping around."""

    dtype = dtypes.as_dtype(dtype).base_dtype
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "saturate_cast") as scope:
        value = convert_to_tensor(value, name="value")
        src = value.dtype.base_dtype
        if not src.is_bool and not dtype.is_bool:
            low = max(src.min, dtype.min)
            high = min(src.max, dtype.max)
            if low > src.min or high < src.max:
                np_src = src.as_numpy_dtype
                value = ClipByValue(value, np.asarray(low).astype(np_src),
                                    np.asarray(_representable_below(high, np_src)),
                                    name="clamp")
        return cast(value, dtype, name=scope)


def _representable_below(high, np_dtype):
    """The largest value of `np_dtype` not above `high` (float32 rounds 2**31-1 up)."""
    value = np.asarray(high).astype(np_dtype)
    if np.issubdtype(np_dtype, np.floating) and float(value) > high:
        value = np.nextafter(value, np_dtype(0))
    return value


def to_complex64(x, name="ToComplex64"):
    """Casts `x` to complex64 (old name for `tf.cast(x, tf.complex64)`)."""
    return cast(x, dtypes.complex64, name=name)


def to_complex128(x, name="ToComplex128"):
    """Casts `x` to complex128 (old name for `tf.cast(x, tf.complex128)`)."""
    return cast(x, dtypes.complex128, name=name)


# -- Bitcast ---------------------------------------------------------------------------------

_BITCAST_TYPES = ("{bfloat16, float16, float32, float64, int64, int32, uint8, uint16, uint32, "
                  "uint64, int8, int16, complex64, complex128, qint8, quint8, qint16, quint16, "
                  "qint32}")
Bitcast = define_op("Bitcast", inputs=["input: T"], outputs=["output: type"],
                    attrs=[f"T: {_BITCAST_TYPES}", f"type: {_BITCAST_TYPES}"],
                    differentiable=False)


def _bitcast_sizes(T, type_) -> tuple[int, int]:
    return np.dtype(T.as_numpy_dtype).itemsize, np.dtype(type_.as_numpy_dtype).itemsize


def _bitcast_words(T, type) -> str:  # noqa: A002, N803 - TF attr names
    """TF names the types by their DataType numbers (DT_INT8 = 6); the names follow."""
    return (f"Cannot bitcast from {T.as_datatype_enum} to {type.as_datatype_enum} "
            f"({T.name} to {type.name})")


@Bitcast.shape_fn
def _bitcast_shape(x, *, T, type):
    size_in, size_out = _bitcast_sizes(T, type)
    if size_in == size_out or x.ndims is None:
        return x if size_in == size_out else TensorShape(None)
    if size_in > size_out:
        return x.concatenate([size_in // size_out])
    if x.ndims == 0:
        raise ValueError(f"{_bitcast_words(T, type)}: the input must have at least one "
                         f"dimension (of size {size_out // size_in})")
    last = x.as_list()[-1]
    if last is not None and last != size_out // size_in:
        raise ValueError(f"{_bitcast_words(T, type)}: the last dimension must be "
                         f"{size_out // size_in}, got {last}")
    return x[:-1]


@Bitcast.kernel(factory=True)
def _bitcast_factory(T, type):
    size_in, size_out = _bitcast_sizes(T, type)
    out = np.dtype(type.as_numpy_dtype)

    def bitcast_kernel(x):
        x = np.ascontiguousarray(x)
        if size_in < size_out and (x.ndim == 0 or x.shape[-1] != size_out // size_in):
            raise errors.InvalidArgumentError(
                None, None, f"{_bitcast_words(T, type)}: shape {list(x.shape)} must end in "
                            f"{size_out // size_in}")
        y = x.view(out)
        if size_in > size_out:
            return y.reshape(*x.shape, size_in // size_out)
        if size_in < size_out:
            return y.reshape(x.shape[:-1])
        return y

    return bitcast_kernel


def bitcast(input, type, name=None):  # noqa: A002 - TF's argument names
    """Reinterprets the bytes of `input` as `type` without copying values (TF's tf.bitcast).

    Types of one size keep the shape; a wider input gains a last dimension of size
    `sizeof(T) / sizeof(type)`; a narrower input must end in `sizeof(type) / sizeof(T)`,
    which is removed.

    Raises:
        ValueError: the static shape cannot be bitcast.
    """
    return Bitcast(input, type=dtypes.as_dtype(type), name=name)
