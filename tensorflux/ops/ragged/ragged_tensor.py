"""`tf.RaggedTensor`: rows of different lengths, as flat `values` plus `row_splits`.

Contract: a RaggedTensor is a composite of tensors, like SparseTensor: `values` (a Tensor, or
a RaggedTensor for more ragged dimensions) and `row_splits` (int64, `[nrows + 1]`, starting at
0 and non-decreasing); row `i` is `values[row_splits[i]:row_splits[i + 1]]`. Everything is
built from existing ops. `Session.run` fetches one as a `RaggedTensorValue` (NumPy parts,
`to_list()`). Factories check constant splits when they are known at graph construction.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.composite import register_session_run_conversion_functions
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array.gather_scatter import gather, scatter_nd
from tensorflux.ops.math.reduction import cumsum, reduce_max, reduce_prod
from tensorflux.ops.math.segment import unsorted_segment_sum

__all__ = ["RaggedTensor", "RaggedTensorValue"]


class RaggedTensorValue:
    """A fetched RaggedTensor: NumPy `values` (or a nested RaggedTensorValue) and
    `row_splits`."""

    def __init__(self, values, row_splits):
        self.values = values
        self.row_splits = np.asarray(row_splits)

    @property
    def flat_values(self):
        values = self.values
        while isinstance(values, RaggedTensorValue):
            values = values.values
        return values

    @property
    def ragged_rank(self) -> int:
        return 1 + (self.values.ragged_rank if isinstance(self.values, RaggedTensorValue) else 0)

    @property
    def dtype(self):
        return self.flat_values.dtype

    def nrows(self) -> int:
        return len(self.row_splits) - 1

    def to_list(self) -> list:
        """The rows as nested Python lists."""
        inner = self.values.to_list() if isinstance(self.values, RaggedTensorValue) \
            else np.asarray(self.values).tolist()
        splits = self.row_splits.tolist()
        return [inner[splits[i]:splits[i + 1]] for i in range(len(splits) - 1)]

    def __repr__(self) -> str:
        return f"<tf.RaggedTensorValue {self.to_list()}>"


def _check_splits(splits: Tensor, nvals) -> None:
    value = constant_value(splits)
    if value is None:
        return
    if value.ndim != 1 or value.size == 0:
        raise ValueError(f"row_splits must be a non-empty vector, got shape {value.shape}.")
    if value[0] != 0:
        raise ValueError(f"row_splits must start with 0, got {value.tolist()}.")
    if np.any(np.diff(value) < 0):
        raise ValueError(f"row_splits must be sorted in ascending order, got {value.tolist()}.")
    if nvals is not None and value[-1] != nvals:
        raise ValueError(f"row_splits must end with the number of values ({nvals}), got "
                         f"{value.tolist()}.")


def _nvals(values):
    if isinstance(values, RaggedTensor):
        return constant_value(values.nrows())
    return values.shape._dim_list[0] if values.shape.ndims else None


class RaggedTensor:
    """A tensor with ragged rows (see the module docstring). Build with the `from_*`
    factories or `tf.ragged.constant`."""

    def __init__(self, values, row_splits, internal=False):
        if not internal:
            raise ValueError("RaggedTensor constructor is private; please use one of the "
                             "factory methods instead (e.g., RaggedTensor.from_row_lengths())")
        self._values = values
        self._row_splits = row_splits

    # -- factories ----------------------------------------------------------------------------

    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate=True) -> RaggedTensor:
        """Rows `values[row_splits[i]:row_splits[i + 1]]`.

        Raises:
            ValueError: constant splits that do not start at 0, decrease, or do not end at
                the number of values (when `validate`).
        """
        del name
        if not isinstance(values, RaggedTensor):
            values = convert_to_tensor(values, name="values")
            if values.shape.ndims == 0:
                raise ValueError("values must have rank >= 1, got a scalar.")
        splits = math_ops.cast(convert_to_tensor(row_splits, name="row_splits"), dtypes.int64)
        if splits.shape.ndims not in (None, 1):
            raise ValueError(f"row_splits must be a vector, got shape {splits.shape}.")
        if validate:
            nvals = _nvals(values)
            _check_splits(splits, None if nvals is None else int(nvals))
        return cls(values, splits, internal=True)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate=True) -> RaggedTensor:
        """Rows of the given lengths, taken in order from `values`.

        Raises:
            ValueError: constant negative lengths (when `validate`).
        """
        lengths = math_ops.cast(convert_to_tensor(row_lengths, name="row_lengths"),
                                dtypes.int64)
        value = constant_value(lengths)
        if validate and value is not None and np.any(value < 0):
            raise ValueError(f"row_lengths must be non-negative, got {value.tolist()}.")
        splits = array_ops.concat([array_ops.zeros([1], dtypes.int64), cumsum(lengths)], 0)
        return cls.from_row_splits(values, splits, name, validate)

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, name=None,
                          validate=True) -> RaggedTensor:
        """Value `k` goes to row `value_rowids[k]` (sorted); `nrows` defaults to the last
        row id + 1."""
        rowids = math_ops.cast(convert_to_tensor(value_rowids, name="value_rowids"),
                               dtypes.int64)
        value = constant_value(rowids)
        if validate and value is not None and (np.any(np.diff(value) < 0) or
                                               np.any(value < 0)):
            raise ValueError(f"value_rowids must be sorted and non-negative, got "
                             f"{value.tolist()}.")
        if nrows is None:
            nrows = array_ops.concat([rowids[-1:] + 1, array_ops.zeros([1], dtypes.int64)],
                                     0)[0]
        nrows = math_ops.cast(convert_to_tensor(nrows), dtypes.int64)
        lengths = unsorted_segment_sum(array_ops.ones_like(rowids), rowids, nrows)
        return cls.from_row_lengths(values, lengths, name, validate)

    # -- parts --------------------------------------------------------------------------------

    @property
    def values(self):
        return self._values

    @property
    def row_splits(self) -> Tensor:
        return self._row_splits

    @property
    def flat_values(self) -> Tensor:
        values = self._values
        while isinstance(values, RaggedTensor):
            values = values.values
        return values

    @property
    def nested_row_splits(self) -> tuple:
        inner = self._values.nested_row_splits if isinstance(self._values, RaggedTensor) else ()
        return (self._row_splits,) + inner

    @property
    def ragged_rank(self) -> int:
        return 1 + (self._values.ragged_rank if isinstance(self._values, RaggedTensor) else 0)

    @property
    def dtype(self):
        return self.flat_values.dtype

    @property
    def shape(self) -> TensorShape:
        nrows = self._row_splits.shape._dim_list[0] if self._row_splits.shape.ndims else None
        inner = self._values.shape
        rows = None if nrows is None else nrows - 1
        return TensorShape([rows, None] + (inner.as_list()[1:] if inner.ndims else []))

    def nrows(self, out_type=dtypes.int64, name=None) -> Tensor:
        del name
        return math_ops.cast(array_ops.shape(self._row_splits, out_type=dtypes.int64)[0] - 1,
                             out_type)

    def row_lengths(self, axis=1, name=None) -> Tensor:
        del axis, name
        return self._row_splits[1:] - self._row_splits[:-1]

    def value_rowids(self, name=None) -> Tensor:
        """The row of each value (int64)."""
        del name
        splits = self._row_splits
        nvals = splits[-1]
        marks = scatter_nd(array_ops.expand_dims(splits[1:-1], 1),
                           array_ops.ones_like(splits[1:-1]),
                           array_ops.expand_dims(nvals + 1, 0))
        return cumsum(marks[:-1])

    # -- conversion ---------------------------------------------------------------------------

    def to_tensor(self, default_value=None, name=None) -> Tensor:
        """A dense tensor `[nrows, longest row, ...]`, padded with `default_value` (0)."""
        del name
        values = self._values.to_tensor(default_value) if isinstance(
            self._values, RaggedTensor) else self._values
        lengths = self.row_lengths()
        width = reduce_max(array_ops.concat([lengths, array_ops.zeros([1], dtypes.int64)], 0))
        rowids = self.value_rowids()
        positions = math_ops.range(array_ops.shape(rowids, out_type=dtypes.int64)[0],
                                   dtype=dtypes.int64) - gather(self._row_splits, rowids)
        indices = array_ops.stack([rowids, positions], axis=1)
        shape = array_ops.concat([array_ops.stack([self.nrows(), width]),
                                  array_ops.shape(values, out_type=dtypes.int64)[1:]], 0)
        if default_value is None:
            return scatter_nd(indices, values, shape)
        default = convert_to_tensor(default_value, dtype=values.dtype)
        return scatter_nd(indices, values - default, shape) + default

    def with_flat_values(self, new_values) -> RaggedTensor:
        """The same nested row splits over `new_values` (whose outer dimension must match the
        flat values'); `new_values` may itself be a RaggedTensor."""
        inner = self._values.with_flat_values(new_values) if isinstance(
            self._values, RaggedTensor) else new_values
        return RaggedTensor(inner, self._row_splits, internal=True)

    def to_sparse(self, name=None):
        """The SparseTensor of this tensor's values: one index per flat scalar, in row-major
        order; `dense_shape` is the bounding shape (longest row in each ragged dimension)."""
        del name
        if isinstance(self._values, RaggedTensor):
            inner = self._values.to_sparse()
            inner_indices, flat, inner_shape = inner.indices, inner.values, inner.dense_shape
        else:
            values = self._values
            dims = array_ops.shape(values, out_type=dtypes.int64)
            inner_indices = array_ops.where(array_ops.ones(dims, dtypes.bool_))
            flat = array_ops.reshape(values, [-1])
            inner_shape = dims
        position = inner_indices[:, 0]
        rowids = gather(self.value_rowids(), position)
        column = position - gather(self._row_splits, rowids)
        indices = array_ops.concat([array_ops.stack([rowids, column], axis=1),
                                    inner_indices[:, 1:]], 1)
        lengths = self.row_lengths()
        width = reduce_max(array_ops.concat([lengths, array_ops.zeros([1], dtypes.int64)], 0))
        shape = array_ops.concat([array_ops.stack([self.nrows(), width]), inner_shape[1:]], 0)
        return SparseTensor(indices, flat, shape)

    def __repr__(self) -> str:
        return f"tf.RaggedTensor(values={self._values}, row_splits={self._row_splits})"


def from_dense_rows(values, dims, rank: int) -> RaggedTensor:
    """Nests `values` (one row per element of a dense tensor of shape `dims`, row-major) so
    that the result's outer `rank` dimensions are `dims` (uniform) followed by `values`' own.

    Args:
        values: a Tensor or RaggedTensor with `prod(dims)` rows.
        dims: an int64 vector of length `rank` (the dense shape the rows came from).
        rank: the static length of `dims` (>= 1).
    """
    result = values
    for axis in reversed(range(1, rank)):
        outer = reduce_prod(dims[:axis])
        splits = math_ops.range(outer + 1, dtype=dtypes.int64) * dims[axis]
        result = RaggedTensor.from_row_splits(result, splits, validate=False)
    return result


def _fetch(ragged):
    parts = list(ragged.nested_row_splits) + [ragged.flat_values]

    def build(values):
        result = values[-1]
        for splits in reversed(values[:-1]):
            result = RaggedTensorValue(result, splits)
        return result

    return parts, build


register_session_run_conversion_functions(RaggedTensor, _fetch)
