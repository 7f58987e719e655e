"""`convert_to_tensor` for Python and NumPy values, and `constant_value` for shape functions.

Python floats become float32, ints int32 (int64 when they do not fit), bools bool, strings
string, as in TensorFlow. Other types (Variables, IndexedSlices, lists holding tensors) register
conversion functions.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.op_def import get_op_def
from tensorflux.framework.tensor import Operation, Tensor
from tensorflux.framework.tensor_shape import Dimension, TensorShape

_CONVERSION_FUNCTIONS: list = []  # (priority, base_type, fn)


def register_tensor_conversion_function(base_type, conversion_func, priority: int = 100) -> None:
    """Registers `conversion_func(value, dtype=None, name=None, as_ref=False) -> Tensor`."""
    _CONVERSION_FUNCTIONS.append((priority, base_type, conversion_func))
    _CONVERSION_FUNCTIONS.sort(key=lambda item: item[0])


def _shape_values(value):
    """`TensorShape`s and `Dimension`s (also inside lists) as ints, as TF converts them."""
    if isinstance(value, TensorShape):
        if not value.is_fully_defined():
            raise ValueError(f"Cannot convert a partially known TensorShape {value} to a Tensor.")
        return value.as_list()
    if isinstance(value, Dimension):
        if value.value is None:
            raise ValueError("Cannot convert an unknown Dimension to a Tensor.")
        return value.value
    if isinstance(value, (list, tuple)) and any(
            isinstance(v, (Dimension, TensorShape, list, tuple)) for v in value):
        return [_shape_values(v) for v in value]
    return value


def _infer_numpy(value, dtype):
    """Returns an ndarray for a Python/NumPy value with TF's dtype inference.

    Raises:
        ValueError: `value` is None (TF's make_tensor_proto: "None values not supported.").
    """
    if value is None:
        raise ValueError("None values not supported.")
    value = _shape_values(value)
    if dtype is not None:
        np_dtype = dtype.as_numpy_dtype
        if dtype.base_dtype is dtypes.string:
            return _string_array(value)
        if isinstance(value, np.ndarray) or isinstance(value, np.generic):
            # NumPy values are cast as NumPy casts them (truncation, wrap-around), as TF's
            # make_tensor_proto does; only Python values are checked for compatibility.
            array = np.asarray(value)
            if array.dtype.kind == "c" and dtype.base_dtype not in (dtypes.complex64,
                                                                    dtypes.complex128):
                array = array.real
            return array.astype(np_dtype, copy=False)
        array = np.array(value)
        if array.dtype == object:
            raise TypeError(f"Expected {dtype.name}, got {value!r} of type "
                            f"'{type(value).__name__}' instead.")
        if array.dtype.kind in "fc" and array.size and (dtype.is_integer or dtype.is_bool):
            raise TypeError(f"Expected {dtype.name}, got {value!r} of type "
                            f"'{type(value).__name__}' instead.")
        if array.dtype.kind == "c" and not dtype.is_complex:
            raise TypeError(f"Expected {dtype.name}, got {value!r} of type "
                            f"'{type(value).__name__}' instead.")
        if array.dtype.kind in "US" or (array.dtype.kind in "iub" and dtype.is_bool
                                         and array.dtype.kind != "b"):
            raise TypeError(f"Expected {dtype.name}, got {value!r} of type "
                            f"'{type(value).__name__}' instead.")
        # Integers out of the dtype's range wrap around, as TF (np.array(v).astype(dtype)):
        # constant([-1, 300], tf.uint8) is [255, 44].
        return array.astype(np_dtype)
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "USO":  # object arrays of Python str/bytes are string tensors
            return _string_array(value)
        return value
    if isinstance(value, np.generic):
        if isinstance(value, (np.bytes_, np.str_)):  # a string scalar: a bytes object
            return _string_array(value)
        return np.asarray(value)
    array = np.array(value)
    kind = array.dtype.kind
    if kind in "fiu" and _holds_numpy_scalars(value):
        # A list of NumPy scalars: TF 1.x's make_tensor_proto takes np.array(list)'s dtype but
        # prefers float32 to float64 and int32 to a lossless int64, as for Python numbers
        # ([np.int64(3)] is int32; [np.float16(1)] stays float16; [np.int64(2**40)] int64).
        if array.dtype == np.float64:
            return array.astype(np.float32)
        if array.dtype == np.int64 and array.size and (
                array.min() >= -(2**31) and array.max() < 2**31):
            return array.astype(np.int32)
        return array
    if kind == "f":
        return array.astype(np.float32)
    if kind in "iu":
        if array.size and (array.min() < -(2**31) or array.max() >= 2**31):
            return array.astype(np.int64)
        return array.astype(np.int32)
    if kind == "O" and any(item is None for item in array.reshape(-1)):
        # A shape list such as [None, 41, 40, 1]: TF names the list, not a string dtype.
        raise TypeError(f"Failed to convert elements of {value!r} to Tensor: None is not a "
                        f"value (use -1 for an unknown reshape dimension, or a placeholder).")
    if kind in "USO":
        return _string_array(value)
    return array


def _holds_numpy_scalars(value) -> bool:
    if isinstance(value, (np.generic, np.ndarray)):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_numpy_scalars(v) for v in value)
    return False


def _string_array(value):
    array = np.array(value, dtype=object)
    flat = array.reshape(-1)
    for i, item in enumerate(flat):
        if isinstance(item, str):
            flat[i] = item.encode()
        elif isinstance(item, np.bytes_):
            flat[i] = bytes(item)
        elif isinstance(item, np.str_):
            flat[i] = str(item).encode()
        elif not isinstance(item, bytes):
            raise TypeError(f"Expected string, got {item!r} of type '{type(item).__name__}'.")
    return array


def _fits(value, preferred) -> bool:
    """False for Python integers outside an integer `preferred` dtype's range: an op input whose
    type attr defaults to int32 then takes the inferred int64 (`reshape(x, [50000**2])`)."""
    if not preferred.is_integer or isinstance(value, (np.ndarray, np.generic)):
        return True
    try:
        array = np.array(_shape_values(value))
    except (TypeError, ValueError):
        return True
    if array.dtype.kind not in "iu" or not array.size:
        return True
    info = np.iinfo(preferred.as_numpy_dtype)
    return info.min <= int(array.min()) and int(array.max()) <= info.max


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, as_ref=False,
                      dtype_hint=None) -> Tensor:
    """Converts a Tensor, registered type, or Python/NumPy value to a Tensor.

    Raises:
        TypeError: the value cannot be converted to `dtype`.
        ValueError: a Tensor's dtype differs from the requested `dtype`.
    """
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    preferred_dtype = preferred_dtype or dtype_hint
    if isinstance(value, Tensor):
        if dtype is not None and not dtype.is_compatible_with(value.dtype.base_dtype):
            raise ValueError(f"Tensor conversion requested dtype {dtype.name} for Tensor with "
                             f"dtype {value.dtype.name}: {value!r}")
        return value
    if isinstance(value, Operation):
        raise TypeError(f"Can't convert Operation '{value.name}' to Tensor (target dtype="
                        f"{dtype}, name={name}, as_ref={as_ref})")
    for _, base_type, fn in _CONVERSION_FUNCTIONS:
        if isinstance(value, base_type):
            result = fn(value, dtype=dtype, name=name, as_ref=as_ref)
            if result is NotImplemented:
                continue
            if dtype is not None and not dtype.is_compatible_with(result.dtype.base_dtype):
                raise ValueError(f"Tensor conversion requested dtype {dtype.name} for Tensor "
                                 f"with dtype {result.dtype.name}: {result!r}")
            return result
    if dtype is None and preferred_dtype is not None:
        preferred = dtypes.as_dtype(preferred_dtype)
        if _fits(value, preferred):
            try:
                return constant(value, preferred, name=name)
            except (TypeError, ValueError):
                pass
    return constant(value, dtype, name=name)


def constant(value, dtype=None, name=None) -> Tensor:
    array = _infer_numpy(value, dtypes.as_dtype(dtype) if dtype is not None else None)
    if isinstance(value, np.ndarray) and np.may_share_memory(array, value):
        # The constant owns its value, as TF's TensorProto does: later in-place changes to
        # the caller's array must not reach the graph.
        array = array.copy()
    return get_op_def("Const")(value=array, dtype=dtypes.as_dtype(array.dtype)
                               if dtype is None else dtypes.as_dtype(dtype),
                               name=name or "Const")


def convert_n_to_tensor(values, dtype=None, name=None, preferred_dtype=None) -> list:
    return [convert_to_tensor(v, dtype, None if name is None else f"{name}_{i}", preferred_dtype)
            for i, v in enumerate(values)]


def is_tensor_like(value) -> bool:
    if isinstance(value, Tensor):
        return True
    return any(isinstance(value, base) for _, base, _ in _CONVERSION_FUNCTIONS)


# -- constant values ------------------------------------------------------------------------

_MAX_FOLD_ELEMENTS = 1 << 16
_NOT_CONSTANT = object()


def constant_value(tensor: Tensor, partial: bool = False):
    """The value of `tensor` if it is computable at graph-construction time, else None.

    Const ops give their value; Shape/Size/Rank of fully known shapes give theirs; any other
    stateless op whose inputs are all constant is evaluated with its CPU kernel (small values
    only). The result is cached on the op.
    """
    if not isinstance(tensor, Tensor):
        return None
    op = tensor.op
    cache = op.__dict__.get("_constant_cache")
    if cache is None or cache[0] != op._graph._version:
        cache = (op._graph._version, {})
        op._constant_cache = cache
    values = cache[1]
    if tensor.value_index in values:
        result = values[tensor.value_index]
    else:
        result = _compute_constant(tensor, 0)
        values[tensor.value_index] = result
    return None if result is _NOT_CONSTANT else result


def _compute_constant(tensor: Tensor, depth: int):
    op = tensor.op
    kind = op.type
    if kind == "Const":
        return op._attrs["value"]
    if depth > 64 or op.op_def.is_stateful or op.op_def.is_control_flow:
        return _NOT_CONSTANT
    if kind in ("Shape", "Size", "Rank"):
        shape = op.inputs[0].shape
        out_type = op._attrs.get("out_type", dtypes.int32).as_numpy_dtype
        if kind == "Rank" and shape.ndims is not None:
            return np.asarray(shape.ndims, np.int32)
        if shape.is_fully_defined():
            if kind == "Shape":
                return np.asarray(shape.as_list(), out_type)
            return np.asarray(shape.num_elements(), out_type)
        return _NOT_CONSTANT
    if kind in ("Placeholder", "PlaceholderWithDefault", "PlaceholderV2"):
        return _NOT_CONSTANT
    if op._control_inputs or op._control_flow_context is not None:
        return _NOT_CONSTANT
    kernel_def = op.op_def.kernels.get("CPU")
    if kernel_def is None or kernel_def.ctx:
        return _NOT_CONSTANT
    inputs = []
    for t in op._inputs:
        value = constant_value(t)
        if value is None:
            return _NOT_CONSTANT
        if np.size(value) > _MAX_FOLD_ELEMENTS:
            return _NOT_CONSTANT
        inputs.append(value)
    try:
        outputs = kernel_def.instantiate(op._attrs)(*inputs)
    except Exception:  # noqa: BLE001 - a failing fold just means "not constant here"
        return _NOT_CONSTANT
    if len(op._outputs) != 1:
        outputs = outputs[tensor.value_index]
    if np.size(outputs) > _MAX_FOLD_ELEMENTS:
        return _NOT_CONSTANT
    return np.asarray(outputs)
