"""Data types of tensors, with TensorFlow's names and `DataType` enum values.

A `DType` is an immutable singleton per enum value; reference types (`float32_ref`) are the
value types shifted by 100, as in TensorFlow. Strings are NumPy object arrays of `bytes`.
"""

from __future__ import annotations

import builtins

import numpy as np

_REF_OFFSET = 100


class DType:
    """One TensorFlow data type. Compare with `==`; use `as_dtype` to build one."""

    __slots__ = ("_enum", "_name", "_np")

    def __new__(cls, *args, **kwargs):
        if len(args) + len(kwargs) == 1:
            # TF1's public form `tf.DType(type_enum)`: the canonical instance of that enum.
            enum = args[0] if args else kwargs.get("type_enum")
            found = _BY_ENUM.get(enum) if isinstance(enum, (int, np.integer)) and \
                not isinstance(enum, bool) else None
            if found is None:
                raise TypeError(f"type_enum is not a valid types_pb2.DataType: {enum!r}")
            return found
        return super().__new__(cls)

    def __init__(self, enum: int = None, name: str = None, np_type=None, **kwargs):
        if name is None:
            return  # `DType(type_enum)` returned an already built instance (or a copy's shell)
        self._enum = enum
        self._name = name
        self._np = np_type

    @property
    def as_datatype_enum(self) -> int:
        return self._enum

    @property
    def name(self) -> str:
        return self._name

    @property
    def is_ref_dtype(self) -> bool:
        return self._enum > _REF_OFFSET

    @property
    def base_dtype(self) -> DType:
        return _BY_ENUM[self._enum - _REF_OFFSET] if self.is_ref_dtype else self

    @property
    def real_dtype(self) -> DType:
        base = self.base_dtype
        if base is complex64:
            return float32
        if base is complex128:
            return float64
        return base

    @property
    def _as_ref(self) -> DType:
        return self if self.is_ref_dtype else _BY_ENUM[self._enum + _REF_OFFSET]

    @property
    def as_numpy_dtype(self):
        return self._np

    @property
    def is_numpy_compatible(self) -> bool:
        return self.base_dtype not in (resource, variant)

    @property
    def is_floating(self) -> bool:
        return self.base_dtype in (float16, float32, float64, bfloat16)

    @property
    def is_complex(self) -> bool:
        return self.base_dtype in (complex64, complex128)

    @property
    def is_integer(self) -> bool:
        return self.base_dtype in _INTEGERS

    @property
    def is_unsigned(self) -> bool:
        return self.base_dtype in (uint8, uint16, uint32, uint64)

    @property
    def is_bool(self) -> bool:
        return self.base_dtype is bool_

    @property
    def is_quantized(self) -> bool:
        return False

    @property
    def min(self):
        base = self.base_dtype
        if base.is_floating:
            if base is bfloat16:
                return -3.38953139e38
            return builtins.float(np.finfo(base._np).min)
        if base.is_integer:
            return builtins.int(np.iinfo(base._np).min)
        if base is bool_:
            return False
        raise TypeError(f"Cannot find minimum value of {self}.")

    @property
    def max(self):
        base = self.base_dtype
        if base.is_floating:
            if base is bfloat16:
                return 3.38953139e38
            return builtins.float(np.finfo(base._np).max)
        if base.is_integer:
            return builtins.int(np.iinfo(base._np).max)
        if base is bool_:
            return True
        raise TypeError(f"Cannot find maximum value of {self}.")

    @property
    def size(self) -> int:
        if self.base_dtype in (string, resource, variant):
            return 1
        return np.dtype(self._np).itemsize

    def is_compatible_with(self, other) -> bool:
        other = as_dtype(other)
        return self._enum in (other._enum, other.base_dtype._enum)

    def __eq__(self, other) -> bool:
        if other is None:
            return False
        if isinstance(other, DType):
            return self._enum == other._enum
        try:
            return self._enum == as_dtype(other)._enum
        except TypeError:
            return False

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return self._enum

    def __reduce__(self):
        return as_dtype, (self._name,)

    def __repr__(self) -> str:
        return f"tf.{self._name}"

    def __str__(self) -> str:
        return f"<dtype: '{self._name}'>"


# NOTE: bfloat16 values are carried as float32 arrays in NumPy.
_SPECS = [
    (1, "float32", np.float32), (2, "float64", np.float64), (3, "int32", np.int32),
    (4, "uint8", np.uint8), (5, "int16", np.int16), (6, "int8", np.int8),
    (7, "string", np.object_), (8, "complex64", np.complex64), (9, "int64", np.int64),
    (10, "bool", np.bool_), (11, "qint8", np.int8), (12, "quint8", np.uint8),
    (13, "qint32", np.int32), (14, "bfloat16", np.float32), (15, "qint16", np.int16),
    (16, "quint16", np.uint16), (17, "uint16", np.uint16), (18, "complex128", np.complex128),
    (19, "float16", np.float16), (20, "resource", np.object_), (21, "variant", np.object_),
    (22, "uint32", np.uint32), (23, "uint64", np.uint64),
]

_BY_ENUM: dict[int, DType] = {}
for _enum, _name, _np in _SPECS:
    _BY_ENUM[_enum] = DType(_enum, _name, _np)
    _BY_ENUM[_enum + _REF_OFFSET] = DType(_enum + _REF_OFFSET, _name + "_ref", _np)

float32 = _BY_ENUM[1]
float64 = _BY_ENUM[2]
int32 = _BY_ENUM[3]
uint8 = _BY_ENUM[4]
int16 = _BY_ENUM[5]
int8 = _BY_ENUM[6]
string = _BY_ENUM[7]
complex64 = _BY_ENUM[8]
int64 = _BY_ENUM[9]
bool_ = _BY_ENUM[10]
qint8 = _BY_ENUM[11]
quint8 = _BY_ENUM[12]
qint32 = _BY_ENUM[13]
bfloat16 = _BY_ENUM[14]
qint16 = _BY_ENUM[15]
quint16 = _BY_ENUM[16]
uint16 = _BY_ENUM[17]
complex128 = _BY_ENUM[18]
float16 = _BY_ENUM[19]
resource = _BY_ENUM[20]
variant = _BY_ENUM[21]
uint32 = _BY_ENUM[22]
uint64 = _BY_ENUM[23]
half = float16
float = float32  # noqa: A001 - TF1 alias
double = float64
float32_ref = float32._as_ref
float64_ref = float64._as_ref
int32_ref = int32._as_ref
int64_ref = int64._as_ref
bool_ref = bool_._as_ref

_INTEGERS = (int8, int16, int32, int64, uint8, uint16, uint32, uint64)

_BY_NAME = {d.name: d for d in _BY_ENUM.values()}
_BY_NAME.update({"half": float16, "float": float32, "double": float64, "bool_": bool_})

_BY_NUMPY = {
    np.dtype(np.float32): float32, np.dtype(np.float64): float64, np.dtype(np.float16): float16,
    np.dtype(np.int8): int8, np.dtype(np.int16): int16, np.dtype(np.int32): int32,
    np.dtype(np.int64): int64, np.dtype(np.uint8): uint8, np.dtype(np.uint16): uint16,
    np.dtype(np.uint32): uint32, np.dtype(np.uint64): uint64, np.dtype(np.bool_): bool_,
    np.dtype(np.complex64): complex64, np.dtype(np.complex128): complex128,
    np.dtype(np.object_): string,
}

_BY_PYTHON = {builtins.int: int32, builtins.float: float32, builtins.bool: bool_,
              builtins.complex: complex128, builtins.str: string, builtins.bytes: string}


def as_dtype(type_value) -> DType:
    """Converts a DType, enum int, name, NumPy dtype or Python type to a `DType`.

    Raises:
        TypeError: the value names no TensorFlow type.
    """
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str):
        found = _BY_NAME.get(type_value)
        if found is not None:
            return found
    elif isinstance(type_value, (int, np.integer)) and not isinstance(type_value, bool):
        found = _BY_ENUM.get(builtins.int(type_value))
        if found is not None:
            return found
    elif type_value in _BY_PYTHON:
        return _BY_PYTHON[type_value]
    else:
        try:
            np_dtype = np.dtype(type_value)
        except TypeError:
            np_dtype = None
        if np_dtype is not None:
            if np_dtype.kind in ("S", "U"):
                return string
            found = _BY_NUMPY.get(np_dtype)
            if found is not None:
                return found
    raise TypeError(f"Cannot convert value {type_value!r} to a TensorFlow DType.")


QUANTIZED_DTYPES = frozenset({qint8, quint8, qint16, quint16, qint32})

# The value range of each NumPy type as images use it (TF's `dtypes.dtype_range`): integers span
# their full range, floats the unit interval [-1, 1].
dtype_range = {np.bool_: (False, True), np.float16: (-1, 1), np.float32: (-1, 1),
               np.float64: (-1, 1)}
dtype_range.update({t: (np.iinfo(t).min, np.iinfo(t).max)
                    for t in (np.uint8, np.uint16, np.uint32, np.uint64,
                              np.int8, np.int16, np.int32, np.int64)})

__all__ = ["DType", "as_dtype", "float16", "half", "float32", "float64", "double", "bfloat16",
           "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool_",
           "string", "complex64", "complex128", "qint8", "quint8", "qint16", "quint16", "qint32",
           "resource", "variant", "float32_ref", "float64_ref", "int32_ref", "int64_ref",
           "bool_ref", "QUANTIZED_DTYPES", "dtype_range"]
