"""Values known in part while a graph is built, for shape functions.

- `partial_constant_value(t)`: the value of `t` with unknown elements as None (a `Pack` of a
  constant and a placeholder), as TF's `constant_value(t, partial=True)`.
- `constant_value_as_shape(t)`: the partially known shape a 1-D shape tensor denotes, following
  `Shape(N)`, `Pack`, `ConcatV2`, `Cast` and (registered by the array family) `StridedSlice`.
- `StaticInput`: what a shape function gets for an input named in `static_inputs`: the input's
  shape and, computed on first use, its constant, partial and shape-tensor values.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, unknown_shape

_SHAPE_RULES: dict = {}  # op type -> fn(op) -> TensorShape or None
_MAX_PARTIAL_ELEMENTS = 1 << 12


def register_shape_value_rule(op_type: str):
    """Registers `fn(op) -> TensorShape | None`: the shape an op's 1-D output denotes.

    Used by `constant_value_as_shape` for op types framework cannot evaluate itself
    (`StridedSlice` lives in the array family). A duplicate registration raises.
    """

    def register(fn):
        if op_type in _SHAPE_RULES:
            raise KeyError(f"A shape value rule for '{op_type}' is already registered "
                           f"({_SHAPE_RULES[op_type].__module__}).")
        _SHAPE_RULES[op_type] = fn
        return fn

    return register


def _known_dim(value):
    if value is None or np.ndim(value) != 0:
        return None
    value = int(value)
    return None if value < 0 else value


def constant_value_as_shape(tensor) -> TensorShape:
    """The (partially) known shape a 1-D shape tensor describes; -1 or unknown entries are None.

    Follows Shape, ShapeN, Pack, ConcatV2, Cast and constant subgraphs, so
    `tf.stack([tf.shape(x)[0], 3])` gives `[None, 3]`. A scalar shape tensor stands for an
    unknown rank.
    """
    tensor = convert_to_tensor(tensor)
    if tensor.shape.ndims == 0:
        return TensorShape(None)
    value = constant_value(tensor)
    if value is not None:
        return TensorShape([None if int(d) < 0 else int(d) for d in np.reshape(value, [-1])])
    op = tensor.op
    result = None
    if op.type == "Shape":
        result = op.inputs[0].shape
    elif op.type == "ShapeN":
        result = op.inputs[tensor.value_index].shape
    elif op.type == "Pack" and op.inputs and all(t.shape.ndims in (0, None) for t in op.inputs):
        result = TensorShape([_known_dim(constant_value(item)) for item in op.inputs])
    elif op.type == "ConcatV2":
        result = TensorShape([])
        for item in op.inputs[:-1]:
            result = result.concatenate(constant_value_as_shape(item))
    elif op.type == "Cast" and op.inputs[0].dtype.base_dtype.is_integer:
        result = constant_value_as_shape(op.inputs[0])
    elif op.type in _SHAPE_RULES:
        result = _SHAPE_RULES[op.type](op)
    length = tensor.shape.with_rank(1)._dim_list[0]
    if result is None or result.ndims is None:
        return unknown_shape(length)
    if length is not None and result.ndims != length:
        return unknown_shape(length)
    return result


def partial_constant_value(tensor):
    """The value of `tensor` with its unknown elements as None, or None if nothing is known.

    A fully known value is the ndarray `constant_value` gives; a partly known one is an object
    ndarray of the tensor's (fully defined) shape: `tf.stack([[1, 2], p])` with `p` a [2]
    placeholder gives `[[1, 2], [None, None]]`. Follows Pack, ConcatV2 (constant axis) and
    Identity, as TF's `constant_value(t, partial=True)`.
    """
    if not isinstance(tensor, Tensor):
        return None
    value = constant_value(tensor)
    if value is not None:
        return value
    shape = tensor.shape
    if not shape.is_fully_defined() or shape.num_elements() > _MAX_PARTIAL_ELEMENTS:
        return None
    op = tensor.op
    parts = None
    if op.type == "Pack":
        axis = op.get_attr("axis")
        items = [_partial_or_unknown(t) for t in op.inputs]
        if any(item is None for item in items):
            return None
        parts = np.stack(items, axis=axis)
    elif op.type == "ConcatV2":
        axis = constant_value(op.inputs[-1])
        if axis is None:
            return None
        items = [_partial_or_unknown(t) for t in op.inputs[:-1]]
        if any(item is None for item in items):
            return None
        parts = np.concatenate(items, axis=int(axis))
    elif op.type == "Identity":
        parts = _partial_or_unknown(op.inputs[0])
    if parts is None or parts.shape != tuple(shape.as_list()):
        return None
    if all(v is None for v in parts.reshape(-1)):
        return None
    return parts


def _partial_or_unknown(tensor):
    """`tensor`'s partial value as an object array, all None when unknown (None: no shape)."""
    value = partial_constant_value(tensor)
    if value is not None:
        return np.asarray(value).astype(object)
    shape = tensor.shape
    if not shape.is_fully_defined():
        return None
    return np.full(shape.as_list(), None, dtype=object)


class StaticInput:
    """An input as a shape function named in `static_inputs` sees it.

    `shape` is the input's static TensorShape; `value` its constant value (ndarray or None);
    `partial` its partially known value (see `partial_constant_value`); `as_shape()` the shape
    it denotes as a shape tensor (see `constant_value_as_shape`). Values are computed on first
    use only.
    """

    __slots__ = ("_tensor", "shape", "_cache")

    def __init__(self, tensor: Tensor):
        self._tensor = tensor
        self.shape = tensor.shape
        self._cache: dict = {}

    def _get(self, key, compute):
        if key not in self._cache:
            self._cache[key] = compute(self._tensor)
        return self._cache[key]

    @property
    def value(self):
        return self._get("value", constant_value)

    @property
    def partial(self):
        return self._get("partial", partial_constant_value)

    def as_shape(self) -> TensorShape:
        return self._get("shape", constant_value_as_shape)

    def __repr__(self) -> str:
        return f"StaticInput({self._tensor.name}, shape={self.shape})"
