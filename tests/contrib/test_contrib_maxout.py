"""tf.contrib.layers.maxout: grouped channel maxima against NumPy, gradient routing, errors."""

import numpy as np
import pytest

import tensorflux as tf


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_last_axis_groups_of_consecutive_channels_with_unknown_batch():
    x = np.random.RandomState(0).randn(5, 3, 4, 12).astype(np.float32)
    ph = tf.placeholder(tf.float32, [None, 3, 4, 12])
    out = tf.contrib.layers.maxout(ph, num_units=4)
    assert out.shape.as_list() == [None, 3, 4, 4]
    assert out.op.name.startswith("MaxOut/")
    with tf.Session() as sess:
        got = sess.run(out, {ph: x})
    np.testing.assert_array_equal(got, x.reshape(5, 3, 4, 4, 3).max(-1))


def test_other_axis_keeps_tf_layout():
    # TF 1.x sets shape[axis] = num_units and appends the group size as a trailing axis.
    x = np.arange(2 * 6 * 3, dtype=np.float32).reshape(2, 6, 3)
    out = tf.contrib.layers.maxout(x, num_units=3, axis=1)
    with tf.Session() as sess:
        got = sess.run(out)
    np.testing.assert_array_equal(got, x.reshape(2, 3, 3, 2).max(-1))


def test_gradient_goes_to_each_group_maximum():
    x = np.array([[1.0, 5.0, 2.0, -1.0, 0.5, 3.0]], np.float32)
    ph = tf.placeholder(tf.float32, [1, 6])
    (grad,) = tf.gradients(tf.reduce_sum(tf.contrib.layers.maxout(ph, 2) * [10.0, 100.0]), [ph])
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(grad, {ph: x}), [[0, 10, 0, 0, 0, 100]])


def test_channels_not_a_multiple_of_num_units():
    with pytest.raises(ValueError, match=r"number of features\(6\) is not a multiple of "
                                         r"num_units\(4\)"):
        tf.contrib.layers.maxout(tf.zeros([2, 6]), 4)
