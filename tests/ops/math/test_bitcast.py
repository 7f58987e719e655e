"""tf.bitcast against NumPy's view: same-size, widening and narrowing casts, static shapes and
the errors of a bad last dimension (graph construction and run time)."""

import numpy as np
import pytest

import tensorflux as tf

COVERED_OPS = {"Bitcast"}


@pytest.mark.parametrize("src,dst", [(np.float32, np.int32), (np.float32, np.uint8),
                                     (np.float64, np.int16), (np.uint8, np.float32),
                                     (np.int16, np.float64), (np.int64, np.complex64),
                                     (np.complex128, np.float64), (np.float16, np.uint16)])
def test_bitcast_matches_numpy_view(src, dst):
    rng = np.random.RandomState(0)
    ratio = np.dtype(dst).itemsize // np.dtype(src).itemsize
    shape = (3, max(ratio, 1)) if ratio > 1 else (3, 2)
    value = (rng.rand(*shape) * 100).astype(src)
    if np.issubdtype(src, np.complexfloating):
        value = value + 1j * value
    out_dtype = tf.as_dtype(dst)
    with tf.Graph().as_default(), tf.Session() as sess:
        y = tf.bitcast(tf.constant(value), out_dtype)
        got = sess.run(y)
    want = value.view(dst)
    if np.dtype(src).itemsize > np.dtype(dst).itemsize:
        want = want.reshape(*value.shape, -1)
    elif np.dtype(src).itemsize < np.dtype(dst).itemsize:
        want = want.reshape(value.shape[:-1])
    assert y.shape.as_list() == list(want.shape)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_bitcast_static_and_run_time_errors():
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(ValueError, match="last dimension must be 2, got 3"):
            tf.bitcast(tf.constant([1, 2, 3], tf.uint8), tf.int16)
        with pytest.raises(ValueError, match="at least one dimension"):
            tf.bitcast(tf.constant(1, tf.uint8), tf.int16)
        p = tf.placeholder(tf.uint8, [None, None])
        y = tf.bitcast(p, tf.int16)
        assert y.shape.as_list() == [None]
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[2, 3\] must end in 2"):
            sess.run(y, {p: np.zeros((2, 3), np.uint8)})
        with pytest.raises(TypeError):
            tf.bitcast(tf.constant(["a"]), tf.int32)
        x = tf.constant([1.0, 2.0])
        loss = tf.reduce_sum(tf.cast(tf.bitcast(x, tf.int32), tf.float32))
        assert tf.gradients(loss, x) == [None]  # not differentiable, as in TF


def test_shape_error_names_the_datatype_numbers():
    # TF's message gives the DataType enum values (DT_INT8 = 6, DT_INT32 = 3).
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"Cannot bitcast from 6 to 3 \(int8 to int32\): the "
                                             r"last dimension must be 4, got 1"):
            tf.bitcast(np.zeros([1, 1], np.int8), tf.int32)
