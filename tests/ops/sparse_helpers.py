"""Dense NumPy images of sparse values, shared by the SparseTensor op tests."""

import numpy as np


def dense_value(value):
    """The dense array of a fetched `SparseTensorValue` (indices assumed distinct)."""
    out = np.zeros(value.dense_shape, np.asarray(value.values).dtype)
    out[tuple(np.asarray(value.indices).T)] = value.values
    return out


def dense_sum(indices, values, shape):
    """The dense array of `indices`/`values`/`shape`, summing repeated indices."""
    out = np.zeros(shape, np.asarray(values).dtype)
    np.add.at(out, tuple(np.asarray(indices).T), values)
    return out
