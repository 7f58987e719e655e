"""`SparseTensor`: a sparse value as three dense tensors (TF1 `tf.SparseTensor`).

`indices` (int64 `[N, rank]`) lists the coordinates of the non-default elements in row-major
order, `values` (`[N]`) their values, and `dense_shape` (int64 `[rank]`) the shape of the dense
tensor. `Session.run` fetches a SparseTensor as a `SparseTensorValue` and accepts one (or a
3-tuple) as the feed of a SparseTensor made of placeholders.
"""

from __future__ import annotations

import collections

import numpy as np

from tensorflux.framework import dtypes, static_values
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.composite import register_session_run_conversion_functions
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape

__all__ = ["SparseTensor", "SparseTensorValue"]


class SparseTensorValue(collections.namedtuple("SparseTensorValue",
                                               ["indices", "values", "dense_shape"])):
    """The value of a SparseTensor: NumPy `indices`, `values` and `dense_shape`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return (f"SparseTensorValue(indices={self.indices!r}, values={self.values!r}, "
                f"dense_shape={self.dense_shape!r})")


class SparseTensor:
    """A sparse tensor: `indices` [N, rank] int64, `values` [N], `dense_shape` [rank] int64.

    Example:
        >>> st = tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4])
        >>> sess.run(tf.sparse_tensor_to_dense(st))[1, 2]
        2
    """

    @classmethod
    def from_value(cls, sparse_tensor_value) -> SparseTensor:
        if isinstance(sparse_tensor_value, SparseTensor):
            return sparse_tensor_value
        return cls(sparse_tensor_value.indices, sparse_tensor_value.values,
                   sparse_tensor_value.dense_shape)

    def __init__(self, indices, values, dense_shape):
        graph = graph_mod.get_default_graph()
        with graph.name_scope("SparseTensor"):
            self._indices = _as_int64(indices, "indices")
            self._values = values if isinstance(values, Tensor) else \
                convert_to_tensor(values, name="values")
            self._dense_shape = _as_int64(dense_shape, "dense_shape")
        indices_shape = self._indices.shape.with_rank(2)
        values_shape = self._values.shape.with_rank(1)
        shape_shape = self._dense_shape.shape.with_rank(1)
        if not indices_shape[0].is_compatible_with(values_shape[0]):
            raise ValueError(f"SparseTensor: indices has {indices_shape[0]} rows but values has "
                             f"{values_shape[0]} elements")
        if not indices_shape[1].is_compatible_with(shape_shape[0]):
            raise ValueError(f"SparseTensor: indices rows have {indices_shape[1]} coordinates "
                             f"but dense_shape has {shape_shape[0]} dimensions")

    @property
    def indices(self) -> Tensor:
        return self._indices

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def dense_shape(self) -> Tensor:
        return self._dense_shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def op(self):
        return self._values.op

    @property
    def graph(self):
        return self._values.graph

    @property
    def device(self) -> str:
        return self._values.device

    @property
    def shape(self) -> TensorShape:
        """The static dense shape: known where `dense_shape` is a constant."""
        value = constant_value(self._dense_shape)
        if value is not None:
            return TensorShape([int(d) for d in np.reshape(value, [-1])])
        # partly known, as TF's constant_value_as_shape: concat([x.dense_shape[:-1], [5]])
        return static_values.constant_value_as_shape(self._dense_shape)

    def get_shape(self) -> TensorShape:
        return self.shape

    def eval(self, feed_dict=None, session=None) -> SparseTensorValue:
        return graph_mod.run_in_session(self, feed_dict, session)

    def consumers(self) -> list:
        seen = []
        for tensor in (self._indices, self._values, self._dense_shape):
            for op in tensor.consumers():
                if op not in seen:
                    seen.append(op)
        return seen

    def __repr__(self) -> str:
        return (f"SparseTensor(indices={self._indices}, values={self._values}, "
                f"dense_shape={self._dense_shape})")

    def __str__(self) -> str:
        return self.__repr__()


def _as_int64(value, name: str) -> Tensor:
    if isinstance(value, Tensor):
        if value.dtype.base_dtype != dtypes.int64:
            raise TypeError(f"SparseTensor {name} must be int64, got {value.dtype.name} "
                            f"({value.name})")
        return value
    return convert_to_tensor(np.asarray(value, dtype=np.int64), dtype=dtypes.int64, name=name)


def is_sparse(x) -> bool:
    return isinstance(x, (SparseTensor, SparseTensorValue))


def convert_to_tensor_or_sparse_tensor(value, dtype=None, name=None):
    """Returns a SparseTensor for SparseTensor(Value)s, else `convert_to_tensor(value)`."""
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
            raise ValueError(f"Sparse dtype: requested = {dtypes.as_dtype(dtype).name}, actual "
                             f"= {value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


def _fetch(sparse):
    parts = [sparse.indices, sparse.values, sparse.dense_shape]
    return parts, lambda values: SparseTensorValue(*values)


def _feed(sparse, value):
    if isinstance(value, SparseTensor):
        raise TypeError("The value of a feed cannot be a tf.SparseTensor object; feed a "
                        "tf.SparseTensorValue or an (indices, values, dense_shape) tuple.")
    indices, values, dense_shape = value
    return [(sparse.indices, indices), (sparse.values, values),
            (sparse.dense_shape, dense_shape)]


def _feed_for_partial_run(sparse):
    return [sparse.indices, sparse.values, sparse.dense_shape]


register_session_run_conversion_functions(SparseTensor, _fetch, _feed, _feed_for_partial_run)
