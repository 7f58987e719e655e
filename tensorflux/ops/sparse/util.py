"""Helpers shared by the sparse op modules: SparseTensor argument checks and the linear
(row-major) positions of index rows that the kernels sort, group and match on."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.sparse_tensor import SparseTensor, SparseTensorValue


def as_sparse(sp_input, what: str = "sp_input") -> SparseTensor:
    """`sp_input` as a SparseTensor (a SparseTensorValue is converted); TypeError otherwise."""
    if isinstance(sp_input, SparseTensorValue):
        return SparseTensor.from_value(sp_input)
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"{what} must be a SparseTensor, got {type(sp_input).__name__}")
    return sp_input


def dims_of(shape) -> np.ndarray:
    return np.asarray(shape, np.int64).reshape(-1)


def linear(indices: np.ndarray, dims: np.ndarray) -> np.ndarray:
    """Row-major linear positions of index rows within `dims` (no bounds check)."""
    if indices.shape[1] == 0:
        return np.zeros(indices.shape[0], np.int64)
    strides = np.ones(len(dims), np.int64)
    strides[:-1] = np.cumprod(dims[::-1])[::-1][1:]
    return np.asarray(indices, np.int64) @ strides


def unlinear(flat: np.ndarray, dims: np.ndarray) -> np.ndarray:
    """Inverse of `linear`: [n, len(dims)] int64 index rows."""
    if len(dims) == 0:
        return np.zeros((flat.shape[0], 0), np.int64)
    return np.stack(np.unravel_index(flat, tuple(int(d) for d in dims)), axis=1).astype(np.int64)


def index_matrix(indices, rank: int, what: str = "indices") -> np.ndarray:
    indices = np.asarray(indices, np.int64)
    if indices.ndim != 2 or indices.shape[1] != rank:
        raise errors.InvalidArgumentError(
            None, None, f"{what} must be an [N, {rank}] matrix, got shape {list(indices.shape)}")
    return indices


def check_bounds(indices: np.ndarray, dims: np.ndarray, what: str = "indices") -> None:
    bad = np.any((indices < 0) | (indices >= dims), axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        raise errors.InvalidArgumentError(
            None, None, f"Sparse tensor has an invalid index: {what}[{i}] = "
            f"{indices[i].tolist()} is out of bounds: need 0 <= index < {dims.tolist()}")


def group_sum(groups: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """out[g] = sum of values with group g (values' trailing dims kept); exact dtype."""
    out = np.zeros((size,) + values.shape[1:], values.dtype)
    if groups.size == 0:
        return out
    order = np.argsort(groups, kind="stable")
    sorted_groups = groups[order]
    starts = np.flatnonzero(np.r_[True, sorted_groups[1:] != sorted_groups[:-1]])
    out[sorted_groups[starts]] = np.add.reduceat(values[order], starts, axis=0)
    return out


def pick(new_name, new, old_name, old):
    if new is not None and old is not None:
        raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'")
    return new if new is not None else old


def match_rows(query: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Position in `table` of each row of `query`, or -1 when absent."""
    if len(table) == 0 or len(query) == 0:
        return np.full(len(query), -1, np.int64)
    both = np.concatenate([query, table])
    low = both.min(axis=0)
    dims = both.max(axis=0) - low + 1
    q_flat, t_flat = linear(query - low, dims), linear(table - low, dims)
    order = np.argsort(t_flat, kind="stable")
    pos = np.minimum(np.searchsorted(t_flat[order], q_flat), len(t_flat) - 1)
    return np.where(t_flat[order][pos] == q_flat, order[pos], -1)
