"""`tf.TensorSpec`: the dtype and shape a tensor is expected to have."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_shape import TensorShape, as_shape

__all__ = ["TensorSpec"]


class TensorSpec:
    """Describes a tensor: `TensorSpec(shape, dtype=tf.float32, name=None)`.

    Value type: equal specs (same shape, dtype and name) hash alike.
    """

    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(self, shape, dtype=dtypes.float32, name=None):
        self._shape = as_shape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._name = name

    @classmethod
    def from_spec(cls, spec, name=None) -> TensorSpec:
        return cls(spec.shape, spec.dtype, name or spec.name)

    @classmethod
    def from_tensor(cls, tensor, name=None) -> TensorSpec:
        """The spec of a Tensor (its static shape and dtype) or of an array.

        Raises:
            ValueError: `tensor` is neither.
        """
        if isinstance(tensor, Tensor):
            return cls(tensor.shape, tensor.dtype.base_dtype, name or tensor.op.name)
        if isinstance(tensor, np.ndarray):
            return cls(tensor.shape, tensor.dtype, name)
        raise ValueError(f"`tensor` should be a tf.Tensor, got {tensor!r}")

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self):
        return self._name

    def is_compatible_with(self, spec_or_tensor) -> bool:
        """True when the dtypes are equal and the shapes compatible (a TensorSpec, Tensor or
        array)."""
        if isinstance(spec_or_tensor, np.ndarray):
            spec_or_tensor = TensorSpec(spec_or_tensor.shape, spec_or_tensor.dtype)
        dtype = dtypes.as_dtype(spec_or_tensor.dtype).base_dtype
        return dtype == self._dtype and self._shape.is_compatible_with(spec_or_tensor.shape)

    def most_specific_compatible_type(self, other) -> TensorSpec:
        """The most specific spec both specs satisfy.

        Raises:
            ValueError: the dtypes differ.
        """
        if self._dtype != other.dtype:
            raise ValueError(f"Types are not compatible: {self} vs {other}")
        return TensorSpec(self._shape.most_specific_compatible_shape(other.shape), self._dtype)

    def _key(self):
        shape = None if self._shape.ndims is None else tuple(self._shape.as_list())
        return (shape, self._dtype, self._name)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and self._key() == other._key()

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"TensorSpec(shape={self._shape}, dtype={self._dtype!r}, name={self._name!r})"
