"""TF1 value conventions: integer constants out of their dtype's range wrap around as in TensorFlow
(`np.array(values).astype(dtype)`), for lists and scalars of every integer dtype; the known
entries of `TensorShape.dims` answer TF1's `Dimension.value`."""

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


def test_shape_dims_answer_tf1_dimension_value():
    shape = tf.TensorShape([4, None, 2])
    dims = shape.dims
    assert [d.value for d in dims] == [4, None, 2]
    assert dims[0] == 4 and dims[1].value is None and dims[2] * 3 == 6
    assert tf.TensorShape(None).dims is None
    with tf.Graph().as_default():
        st = tf.SparseTensor([[0, 1]], [1.0], [3, 5])
        assert st.dense_shape.get_shape().dims[0].value == 2
