"""assert_rank / assert_rank_at_least / assert_rank_in with ranks only known at run time: a
rank fed as a vector fails with "Rank must be a scalar" (as TF), a scalar rank is compared
with the tensor's actual rank."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import errors


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


@pytest.mark.parametrize("check", [
    lambda x, r: tf.assert_rank(x, r),
    lambda x, r: tf.assert_rank_at_least(x, r),
    lambda x, r: tf.assert_rank_in(x, (r, tf.constant(5))),
])
def test_vector_rank_is_reported_as_not_scalar(check):
    x = tf.constant(np.zeros((2, 3), np.float32))
    r = tf.placeholder(tf.int32)
    op = check(x, r)
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError, match="Rank must be a scalar"):
            sess.run(op, {r: [2, 1]})


@pytest.mark.parametrize("fed,passes", [(2, True), (1, False), (3, False)])
def test_assert_rank_with_fed_rank(fed, passes):
    x = tf.placeholder(tf.float32)
    r = tf.placeholder(tf.int32)
    with tf.control_dependencies([tf.assert_rank(x, r, message="bad rank")]):
        out = tf.identity(x)
    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tf.Session() as sess:
        if passes:
            np.testing.assert_array_equal(sess.run(out, {x: value, r: fed}), value)
        else:
            with pytest.raises(errors.InvalidArgumentError, match="bad rank"):
                sess.run(out, {x: value, r: fed})


def test_assert_rank_in_with_one_fed_rank():
    x = tf.placeholder(tf.float32)
    r = tf.placeholder(tf.int32)
    check = tf.assert_rank_in(x, (1, r))
    with tf.Session() as sess:
        sess.run(check, {x: np.zeros((4, 1, 2)), r: 3})
        sess.run(check, {x: np.zeros(4), r: 0})
        with pytest.raises(errors.InvalidArgumentError, match="must have rank in"):
            sess.run(check, {x: np.zeros((4, 1)), r: 3})
