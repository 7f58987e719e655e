"""`tf.ragged.constant` and `tf.ragged.range`."""

from __future__ import annotations

import builtins

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array.gather_scatter import gather
from tensorflux.ops.ragged.ragged_tensor import RaggedTensor

__all__ = ["constant", "range"]


def _depth(value) -> tuple:
    """(nesting depth of scalars in `value`, exact?): an empty list fits any depth >= 1."""
    if not isinstance(value, (list, tuple)):
        return 0, True
    if not value:
        return 1, False
    children = [_depth(v) for v in value]
    exact = {d for d, known in children if known}
    if len(exact) > 1 or (exact and any(d > min(exact) for d, _ in children)):
        raise ValueError(f"all scalar values must have the same nesting depth, got "
                         f"{sorted({d for d, _ in children})}.")
    if exact:
        return 1 + exact.pop(), True
    return 1 + builtins.max(d for d, _ in children), False


def _default_width(flat: np.ndarray) -> np.ndarray:
    """Python floats are float32 and ints int32, as in tf.constant (an empty list: float32)."""
    if flat.dtype == np.float64 or flat.size == 0 and flat.dtype.kind != "S":
        return flat.astype(np.float32)
    if flat.dtype == np.int64:
        return flat.astype(np.int32)
    return flat


def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None,
             row_splits_dtype=dtypes.int64):
    """A RaggedTensor from nested Python lists (rows may differ in length).

    Args:
        pylist: nested lists of scalars.
        dtype: the values' dtype (inferred when None).
        ragged_rank: ragged dimensions (default: all but the scalars' nesting).
        inner_shape, name, row_splits_dtype: accepted for compatibility.

    Raises:
        ValueError: inconsistent nesting depth or a ragged_rank out of range.
    """
    del inner_shape, name, row_splits_dtype
    depth, _ = _depth(pylist)
    if depth < 1:
        raise ValueError("tf.ragged.constant expects a list, got a scalar.")
    if ragged_rank is None:
        ragged_rank = builtins.max(depth - 1, 1) if depth > 1 else 1
    if ragged_rank == 0:  # no ragged dimension: a dense constant, as TF returns
        value = np.array(pylist, dtype=dtypes.as_dtype(dtype).as_numpy_dtype if dtype else None)
        return convert_to_tensor(_default_width(value), dtype=dtype)
    if not 0 <= ragged_rank < builtins.max(depth, 2):
        raise ValueError(f"ragged_rank must be between 0 and {depth - 1}, got {ragged_rank}.")
    levels = []
    rows = list(pylist)
    for _ in builtins.range(ragged_rank):
        splits = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
        levels.append(splits)
        rows = [item for row in rows for item in row]
    flat = np.array(rows, dtype=dtypes.as_dtype(dtype).as_numpy_dtype if dtype else None)
    result = convert_to_tensor(flat if dtype else _default_width(flat), dtype=dtype)
    for splits in reversed(levels):
        result = RaggedTensor.from_row_splits(result, splits)
    return result


def range(starts, limits=None, deltas=1, dtype=None, name=None,  # noqa: A001 - TF name
          row_splits_dtype=dtypes.int64):
    """Row `i` is `range(starts[i], limits[i], deltas[i])` (scalars broadcast).

    Raises:
        InvalidArgumentError: (at run time) a delta of 0.
    """
    del name, row_splits_dtype
    if limits is None:
        starts, limits = 0, starts
    starts = convert_to_tensor(starts, dtype=dtype)
    limits = convert_to_tensor(limits, dtype=starts.dtype)
    deltas = convert_to_tensor(deltas, dtype=starts.dtype)
    shape = array_ops.shape(starts + limits + deltas)
    starts, limits, deltas = (array_ops.broadcast_to(t, shape) for t in (starts, limits, deltas))
    real = math_ops.cast(limits - starts, dtypes.float64) / math_ops.cast(deltas, dtypes.float64)
    lengths = math_ops.cast(math_ops.maximum(math_ops.ceil(real), 0.0), dtypes.int64)
    rows = RaggedTensor.from_row_lengths(array_ops.zeros([0], starts.dtype), lengths,
                                         validate=False)
    rowids = rows.value_rowids()
    nvals = array_ops.shape(rowids, out_type=dtypes.int64)[0]
    offsets = math_ops.range(nvals, dtype=dtypes.int64) - gather(rows.row_splits, rowids)
    values = gather(starts, rowids) + math_ops.cast(offsets, starts.dtype) * gather(deltas,
                                                                                   rowids)
    return RaggedTensor.from_row_splits(values, rows.row_splits, validate=False)
