"""Element structures of `tf.data`: nesting, component types and shapes, value conversion.

An element is a nested structure of components. As in TF1's `tf.data`, tuples, namedtuples and
dicts (flattened in sorted key order) nest; a Python list is a *value* (converted to one tensor),
not a structure. Inside the pipeline an element travels as a flat tuple of ndarrays.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import _infer_numpy, convert_to_tensor, is_tensor_like
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.ops.array import stack


def is_nested(value) -> bool:
    return isinstance(value, (tuple, dict))


def flatten(structure) -> list:
    """The leaves of `structure` in order (dicts by sorted key)."""
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in flatten(structure[key])]
    if isinstance(structure, tuple):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def _pack(template, leaves, pos):
    if isinstance(template, dict):
        built = {}
        for key in sorted(template):
            built[key], pos = _pack(template[key], leaves, pos)
        return type(template)(built) if type(template) is not dict else built, pos
    if isinstance(template, tuple):
        items = []
        for item in template:
            value, pos = _pack(item, leaves, pos)
            items.append(value)
        if hasattr(template, "_fields"):
            return type(template)(*items), pos
        return tuple(items), pos
    return leaves[pos], pos + 1


def pack(template, leaves):
    """Rebuilds `template`'s nesting around the flat `leaves`."""
    leaves = list(leaves)
    built, used = _pack(template, leaves, 0)
    if used != len(leaves):
        raise ValueError(f"Structure has {used} components but {len(leaves)} values were given")
    return built


def map_structure(fn, structure):
    return pack(structure, [fn(leaf) for leaf in flatten(structure)])


def same_nesting(first, second) -> bool:
    if isinstance(first, dict) or isinstance(second, dict):
        return (isinstance(first, dict) and isinstance(second, dict)
                and sorted(first) == sorted(second)
                and all(same_nesting(first[k], second[k]) for k in first))
    if isinstance(first, tuple) or isinstance(second, tuple):
        return (isinstance(first, tuple) and isinstance(second, tuple)
                and len(first) == len(second)
                and all(same_nesting(a, b) for a, b in zip(first, second)))
    return True


def as_array(value, dtype=None) -> np.ndarray:
    """A Python/NumPy leaf as an ndarray with TF's dtype inference (strings as bytes objects)."""
    return _infer_numpy(value, None if dtype is None else dtypes.as_dtype(dtype))


def dtype_of(array: np.ndarray):
    if array.dtype == object:
        return dtypes.string
    return dtypes.as_dtype(array.dtype)


def normalize(value, what: str):
    """Nested Python/NumPy/Tensor values -> the same nesting with Tensor or ndarray leaves."""
    if isinstance(value, dict):
        return {key: normalize(item, what) for key, item in value.items()}
    if isinstance(value, tuple):
        items = [normalize(item, what) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, Tensor):
        return value
    if not isinstance(value, (np.ndarray, np.generic, list, str, bytes, int, float, bool)) \
            and is_tensor_like(value):
        return convert_to_tensor(value)  # a Variable: read when the iterator is initialized
    if hasattr(value, "indices") and hasattr(value, "dense_shape"):
        raise TypeError(f"{what}: sparse components are not supported by tensorflux's tf.data; "
                        "got a SparseTensor")
    if isinstance(value, list) and any(isinstance(v, Tensor) for v in value):
        return stack(value)
    try:
        return as_array(value)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{what}: cannot convert {value!r} to a tensor: {err}") from None


def leaf_spec(leaf):
    """(DType, TensorShape) of a Tensor or ndarray leaf."""
    if isinstance(leaf, Tensor):
        return leaf.dtype.base_dtype, leaf.shape
    return dtype_of(leaf), TensorShape(list(leaf.shape))


def most_specific_compatible(first: TensorShape, second: TensorShape) -> TensorShape:
    if first.ndims is None or second.ndims is None or first.ndims != second.ndims:
        return TensorShape(None)
    return TensorShape([a if a == b else None
                        for a, b in zip(first.as_list(), second.as_list())])


def check_value(value, dtype, shape: TensorShape, where: str) -> np.ndarray:
    """Converts a produced component to `dtype` and checks it against `shape`."""

    array = np.asarray(value) if not isinstance(value, np.ndarray) else value
    if dtype is dtypes.string:
        if array.dtype != object:
            array = as_array(array, dtypes.string)
    elif array.dtype != dtype.as_numpy_dtype:
        try:
            array = as_array(array, dtype)
        except (TypeError, ValueError) as err:
            raise errors.InvalidArgumentError(
                None, None, f"{where}: expected a value of type {dtype.name}, got "
                f"{array.dtype}: {err}") from None
    if not shape.is_compatible_with(array.shape):
        raise errors.InvalidArgumentError(
            None, None, f"{where}: expected a value of shape {shape}, got shape "
            f"{list(array.shape)}")
    return array


def as_shapes(structure, template, what: str):
    """Nested shapes (lists, TensorShapes, None) matching `template` -> flat TensorShapes."""
    if isinstance(template, dict):
        if not isinstance(structure, dict) or sorted(structure) != sorted(template):
            raise ValueError(f"{what} must have the structure of the element: {template}")
        return [shape for key in sorted(template)
                for shape in as_shapes(structure[key], template[key], what)]
    if isinstance(template, tuple):
        if not isinstance(structure, tuple) or len(structure) != len(template):
            raise ValueError(f"{what} must have the structure of the element: {template}")
        return [shape for a, b in zip(structure, template) for shape in as_shapes(a, b, what)]
    return [as_shape(structure)]


__all__: list = []
