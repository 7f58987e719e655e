"""A while_loop that never waits still honours RunOptions.timeout_in_ms."""

import time

import pytest
from op_helpers import graph  # noqa: F401

import tensorflux as tf


def test_endless_while_loop_times_out():
    i = tf.while_loop(lambda i: i < 10**9, lambda i: i + 1, [tf.constant(0)])
    with tf.Session() as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(i, options=tf.RunOptions(timeout_in_ms=200))
        assert time.monotonic() - start < 5
        # The session stays usable for a step that fits its deadline.
        short = tf.while_loop(lambda j: j < 10, lambda j: j + 1, [tf.constant(0)])
        assert sess.run(short, options=tf.RunOptions(timeout_in_ms=5000)) == 10
