"""Integer constants out of their dtype's range wrap around as in TensorFlow
(`np.array(values).astype(dtype)`), for lists and scalars of every integer dtype."""

import numpy as np
import pytest

import tensorflux as tf


@pytest.mark.parametrize("dtype", [tf.uint8, tf.int8, tf.uint16, tf.int16, tf.uint32,
                                   tf.int32, tf.uint64])
def test_out_of_range_python_ints_wrap(dtype):
    values = [999, 1, -1000, -1, 300, 2 ** 31]
    with tf.Graph().as_default():
        got = tf.Session().run(tf.constant(values, dtype))
    np_dtype = dtype.as_numpy_dtype
    expected = np.array([v % 2 ** (8 * np.dtype(np_dtype).itemsize) for v in values],
                        np.uint64).astype(np_dtype)
    assert got.dtype == np_dtype
    np.testing.assert_array_equal(got, expected)


def test_scalar_and_non_integer_inputs():
    with tf.Graph().as_default():
        assert tf.Session().run(tf.constant(-1, tf.uint8)) == 255
        with pytest.raises(TypeError):
            tf.constant([1.5], tf.uint8)  # floats still need an integral value
