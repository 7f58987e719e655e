"""TF1 names outside the public API that TF1-era programs and tests use: `dtypes.dtype_range`
and `Tensor._shape_as_list()`."""

import numpy as np

import tensorflux as tf
from tensorflux.framework import dtypes


def test_dtype_range_values():
    for t in (np.uint8, np.uint16, np.int8, np.int16, np.int32, np.int64, np.uint32):
        assert dtypes.dtype_range[t] == (np.iinfo(t).min, np.iinfo(t).max)
    for t in (np.float16, np.float32, np.float64):
        assert dtypes.dtype_range[t] == (-1, 1)
    assert dtypes.dtype_range[np.bool_] == (False, True)
    # Keyed by the NumPy type, as `tensor.dtype.as_numpy_dtype` gives it.
    assert dtypes.dtype_range[tf.uint8.as_numpy_dtype] == (0, 255)
    assert tf.dtypes.dtype_range is dtypes.dtype_range


def test_shape_as_list():
    with tf.Graph().as_default():
        assert tf.zeros([2, 3])._shape_as_list() == [2, 3]
        assert tf.placeholder(tf.float32, [None, 4])._shape_as_list() == [None, 4]
        assert tf.placeholder(tf.float32)._shape_as_list() is None
        assert tf.constant(1.0)._shape_as_list() == []
