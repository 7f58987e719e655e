"""`IndexedSlices`: a sparse gradient of a tensor's rows (`values[i]` is row `indices[i]`).

Gradients of gather/embedding lookups are IndexedSlices so optimizers update only the touched
rows; they become dense only where an op needs a Tensor (the conversion is registered by the
ops layer). Fetching one gives an `IndexedSlicesValue`.
"""

from __future__ import annotations

import collections

from tensorflux.framework import dtypes
from tensorflux.framework.composite import register_session_run_conversion_functions
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape

IndexedSlicesValue = collections.namedtuple("IndexedSlicesValue",
                                            ["values", "indices", "dense_shape"])


class IndexedSlices:
    """Rows `indices` of a tensor of shape `dense_shape`, with `values` holding the rows."""

    def __init__(self, values, indices, dense_shape=None):
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    @property
    def values(self):
        return self._values

    @property
    def indices(self):
        return self._indices

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def name(self) -> str:
        return self._values.name

    @property
    def device(self) -> str:
        return self._values.device

    @property
    def op(self):
        return self._values.op

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def graph(self):
        return self._values.graph

    @property
    def shape(self):
        if self._dense_shape is None:
            return TensorShape(None).merge_with(
                TensorShape([None]).concatenate(self._values.shape[1:]))
        value = constant_value(self._dense_shape)
        if value is not None:
            return TensorShape(list(value))
        return TensorShape([None]).concatenate(self._values.shape[1:])

    def get_shape(self):
        return self.shape

    def __neg__(self):
        # `-values` is Tensor.__neg__, which the math family installs (framework stays below it).
        return IndexedSlices(-self._values, self._indices, self._dense_shape)

    def __repr__(self) -> str:
        return (f"IndexedSlices(indices={self._indices}, values={self._values}"
                + (f", dense_shape={self._dense_shape})" if self._dense_shape is not None
                   else ")"))


def _fetch(value):
    parts = [value.values, value.indices]
    if value.dense_shape is not None:
        parts.append(value.dense_shape)
        return parts, lambda v: IndexedSlicesValue(v[0], v[1], v[2])
    return parts, lambda v: IndexedSlicesValue(v[0], v[1], None)


def _feed(key, value):
    pairs = [(key.values, value.values), (key.indices, value.indices)]
    if key.dense_shape is not None:
        pairs.append((key.dense_shape, value.dense_shape))
    return pairs


register_session_run_conversion_functions(IndexedSlices, _fetch, _feed)


def convert_to_tensor_or_indexed_slices(value, dtype=None, name=None):
    """Returns an IndexedSlices unchanged (checking `dtype`); converts anything else to a
    Tensor."""
    if isinstance(value, IndexedSlices):
        if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} "
                             f"for IndexedSlices with dtype {value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)
