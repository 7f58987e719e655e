"""Control dependencies on a fed Placeholder: satisfied by the feed, as in TF."""

import numpy as np
import pytest

import tensorflux as tf


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def test_control_input_on_fed_placeholder_runs():
    x = tf.placeholder(tf.float32, [None])
    gate = tf.placeholder(tf.bool, [])
    with tf.control_dependencies([gate]):
        y = tf.scan(lambda acc, v: acc * v, x)
    with tf.Session() as sess:
        got = sess.run(y, {x: [2.0, -1.5, 4.0], gate: False})
    np.testing.assert_allclose(got, np.cumprod([2.0, -1.5, 4.0]))


def test_unfed_placeholder_control_input_still_reported():
    x = tf.placeholder(tf.float32, [])
    gate = tf.placeholder(tf.bool, [], name="gate")
    with tf.control_dependencies([gate]):
        y = tf.identity(x)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="gate"):
            sess.run(y, {x: 1.0})
