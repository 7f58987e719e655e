"""Legacy Stack handles: a [container, name] string vector as in TF 1.x, unique per op."""

import numpy as np
from op_helpers import graph  # noqa: F401

import tensorflux as tf
from tensorflux.ops.data_flow import stack as stack_ops


def test_legacy_handle_is_a_string_pair_with_static_shape():
    h = stack_ops.StackOp(elem_type=tf.int64, stack_name="pairs")
    assert h.shape.as_list() == [2]
    with tf.Session() as sess:
        value = sess.run(h)
    assert value.shape == (2,)
    assert all(isinstance(v, bytes) for v in value)
    assert b"pairs" in value[1]


def test_two_legacy_stacks_of_one_name_stay_apart():
    h1 = stack_ops.StackOp(elem_type=tf.float64, stack_name="twin")
    h2 = stack_ops.StackOp(elem_type=tf.float64, stack_name="twin")
    push1 = stack_ops.StackPush(h1, tf.constant([1.5, -2.0], tf.float64))
    with tf.control_dependencies([push1]):
        push2 = stack_ops.StackPush(h2, tf.constant([7.25], tf.float64))
    with tf.control_dependencies([push2]):
        pop1 = stack_ops.StackPop(h1, elem_type=tf.float64)
        pop2 = stack_ops.StackPop(h2, elem_type=tf.float64)
    with tf.Session() as sess:
        n1, n2, a, b = sess.run([h1, h2, pop1, pop2])
    assert n1[1] != n2[1]
    np.testing.assert_array_equal(a, [1.5, -2.0])
    np.testing.assert_array_equal(b, [7.25])
