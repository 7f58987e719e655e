"""Helpers shared by the array op modules (array_ops, shape_ops, concat_ops, ...)."""

from __future__ import annotations

import numpy as np

INDEX_TYPES = "{int32, int64} = int32"


def as_outputs(items):
    """Kernel results for a list output: the value itself when the op has one output."""
    items = tuple(items)
    return items[0] if len(items) == 1 else items


def dims_of(value, what: str) -> list:
    """A constant 1-D shape vector as a list of ints; ValueError naming `what` otherwise."""
    array = np.asarray(value)
    if array.ndim != 1:
        raise ValueError(f"{what} must be a vector (rank 1), got shape {list(array.shape)}")
    return [int(d) for d in array]
