"""tf.debugging.assert_shapes: static checks at construction, the rest at run time."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf


def test_consistent_static_shapes_give_a_no_op():
    x, y = tf.zeros([10, 3]), tf.ones([10, 7])
    param = tf.Variable([1.0, 2.0, 3.0])
    op = tf.debugging.assert_shapes([(x, ("N", "Q")), (y, ("N", "D")), (param, ("Q",)),
                                     (1.0, ())])
    assert op.type == "NoOp"
    assert tf.debugging.assert_shapes({x: (10, None), y: ("*", 7), param: (".",)}).type == \
        "NoOp"


@pytest.mark.parametrize("shapes,error,words", [
    (lambda x, y: [(x, ("N", "D")), (y, ("N", "D"))], tf.errors.InvalidArgumentError,
     "Symbol 'D'"),
    (lambda x, y: [(x, ("N",))], ValueError, "must have rank 1"),
    (lambda x, y: {x: (10, 4)}, tf.errors.InvalidArgumentError, "must have size 4"),
    (lambda x, y: [(x, ("*", "A", "B", "C"))], ValueError, "rank at least 3"),
    (lambda x, y: [(x, ("N", "N"))], tf.errors.InvalidArgumentError, "Symbol 'N'"),
])
def test_static_violations(shapes, error, words):
    x, y = tf.zeros([10, 3]), tf.ones([10, 7])
    with pytest.raises(error, match=words):
        tf.debugging.assert_shapes(shapes(x, y))


def test_dynamic_checks_run_in_the_session():
    p = tf.placeholder(tf.float32, [None, 3])
    q = tf.placeholder(tf.float32, [None, None])
    op = tf.debugging.assert_shapes([(p, ("N", 3)), (q, ("*", "N"))], message="custom")
    with tf.control_dependencies([op]):
        out = tf.identity(p)
    with tf.Session() as sess:
        np.testing.assert_array_equal(
            sess.run(out, {p: np.ones([2, 3]), q: np.zeros([5, 2])}), np.ones([2, 3]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="custom"):
            sess.run(out, {p: np.ones([2, 3]), q: np.zeros([5, 4])})


def test_scalar_is_one_dimension_of_size_one():
    s = tf.placeholder(tf.float32, [])
    assert tf.debugging.assert_shapes([(s, ())]).type == "NoOp"
    assert tf.debugging.assert_shapes([(s, (1,))]).type == "NoOp"
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.debugging.assert_shapes([(s, (2,))])
