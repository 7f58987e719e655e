"""Row scatters into a variable's buffer (ScatterAdd/ScatterSub and their resource twins).

`scatter_at(ufunc, buffer, indices, updates)` is `ufunc.at(buffer, indices, updates)` for
indices into the first axis: each update row is combined into its row of `buffer` in the order
the indices come, one after another, so duplicate indices give the same float rounding as TF's
scatter kernels (which loop over the indices) and as the reference `ufunc.at`.

`ufunc.at` is slow (~20 ns per element, ~0.5 ms for the 192 rows x 128 of a word2vec NCE
update). Two faster paths keep its results bit for bit:

- With numba (`jit.available()`), add and subtract of float32/float64/int32/int64 rows: a
  compiled loop over the indices in order (`_add_rows` / `_subtract_rows`).
- Otherwise, distinct indices (no row written twice): one fancy-indexed pass,
  `buffer[idx] = ufunc(buffer[idx], updates)`.

Everything else (duplicates with no compiled loop for them, scalar or differently typed
updates, fewer than 4 indices) runs `ufunc.at` itself.
Indices must already be checked to lie in `[0, buffer.shape[0])`: the compiled loop does not
check them.
"""

from __future__ import annotations

import numpy as np

from tensorflux.lib.numerics import jit as jit_mod

__all__ = ["scatter_at", "checked_scatter_at"]

_COMPILED_TYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))

# Below this many indices, sorting them to look for duplicates costs more than it saves.
_MIN_INDICES = 4


@jit_mod.jit
def _add_rows(buffer, indices, updates):
    for i in range(indices.shape[0]):
        row = indices[i]
        for j in range(buffer.shape[1]):
            buffer[row, j] += updates[i, j]


@jit_mod.jit
def _subtract_rows(buffer, indices, updates):
    for i in range(indices.shape[0]):
        row = indices[i]
        for j in range(buffer.shape[1]):
            buffer[row, j] -= updates[i, j]


@jit_mod.jit
def _first_out_of_range(indices, limit):
    for i in range(indices.shape[0]):
        if indices[i] < 0 or indices[i] >= limit:
            return i
    return -1


@jit_mod.jit
def _checked_add_rows(buffer, indices, updates):
    bad = _first_out_of_range(indices, buffer.shape[0])
    if bad < 0:
        _add_rows(buffer, indices, updates)
    return bad


@jit_mod.jit
def _checked_subtract_rows(buffer, indices, updates):
    bad = _first_out_of_range(indices, buffer.shape[0])
    if bad < 0:
        _subtract_rows(buffer, indices, updates)
    return bad


# By name: the first compiled call swaps the module's functions for numba's dispatchers.
_COMPILED = {np.add: "_add_rows", np.subtract: "_subtract_rows"}
_CHECKED = {np.add: "_checked_add_rows", np.subtract: "_checked_subtract_rows"}
_INDEX_TYPES = frozenset(np.dtype(t) for t in (np.int32, np.int64))


def checked_scatter_at(ufunc, buffer: np.ndarray, indices: np.ndarray, updates) -> int:
    """`scatter_at` after checking that every index lies in `[0, buffer.shape[0])`.

    For add and subtract of same-typed rows with numba, one compiled call checks the indices
    and then applies the rows (the check folded into the kernel call instead of NumPy's
    min/max passes); otherwise NumPy checks, then `scatter_at` applies.

    Args:
        ufunc, buffer, indices, updates: as for `scatter_at`; `buffer` at least 1-D, `updates`
            already of shape `indices.shape + buffer.shape[1:]` or a scalar.

    Returns:
        -1 when the update was applied; else the flat position of the first index out of
        range, and `buffer` is left unchanged.
    """
    limit = buffer.shape[0]
    updates = np.asarray(updates)
    checked = _CHECKED.get(ufunc)
    if (checked is not None and updates.ndim != 0 and indices.dtype in _INDEX_TYPES
            and indices.size >= _MIN_INDICES and updates.dtype == buffer.dtype
            and buffer.dtype in _COMPILED_TYPES and buffer.flags.c_contiguous
            and jit_mod.available()):
        flat = indices.reshape(-1)
        width = buffer.size // limit if limit else 0
        rows = np.ascontiguousarray(updates).reshape(flat.size, width)
        return int(globals()[checked](buffer.reshape(limit, width), flat, rows))
    if indices.size and (indices.min() < 0 or indices.max() >= limit):
        flat = indices.reshape(-1)
        return int(np.argmax((flat < 0) | (flat >= limit)))
    scatter_at(ufunc, buffer, indices, updates)
    return -1


def _distinct(flat: np.ndarray) -> bool:
    ordered = np.sort(flat)
    return not (ordered[1:] == ordered[:-1]).any()


def scatter_at(ufunc, buffer: np.ndarray, indices: np.ndarray, updates: np.ndarray) -> None:
    """`ufunc.at(buffer, indices, updates)` for integer `indices` into `buffer`'s first axis.

    Args:
        ufunc: a binary NumPy ufunc (np.add, np.subtract, np.maximum, ...).
        buffer: the array updated in place (at least 1-D).
        indices: integer indices of rows of `buffer`, any shape, all in range.
        updates: `indices.shape + buffer.shape[1:]`, or a scalar.
    """
    updates = np.asarray(updates)
    if updates.ndim == 0 or indices.size < _MIN_INDICES or updates.dtype != buffer.dtype:
        ufunc.at(buffer, indices, updates)
        return
    flat = indices.reshape(-1)
    rows = updates.reshape((flat.size,) + buffer.shape[1:])
    compiled = _COMPILED.get(ufunc)
    if (compiled is not None and buffer.dtype in _COMPILED_TYPES and buffer.flags.c_contiguous
            and jit_mod.available()):
        width = rows[0].size
        globals()[compiled](buffer.reshape(buffer.shape[0], width),
                            flat.astype(np.int64, copy=False),
                            np.ascontiguousarray(rows).reshape(flat.size, width))
        return
    if _distinct(flat):
        buffer[flat] = ufunc(buffer[flat], rows)
        return
    ufunc.at(buffer, indices, updates)
