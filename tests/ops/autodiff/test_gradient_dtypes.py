"""Gradients stop at integer, bool and string tensors (TF returns None there)."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64, tf.uint8, tf.int16])
def test_integer_x_gets_none(dtype):
    i = tf.placeholder(dtype, [3])
    x = tf.placeholder(tf.float64, [3])
    y = tf.cast(i, tf.float64) * x
    gi, gx = tf.gradients(y, [i, x])
    assert gi is None
    iv = np.array([1, 2, 3])
    np.testing.assert_allclose(run(gx, {i: iv, x: np.ones(3)}), iv)


def test_path_through_integer_is_cut():
    x = tf.placeholder(tf.float32, [2])
    through_int = tf.cast(tf.cast(x, tf.int32), tf.float32)
    assert tf.gradients(through_int, x) == [None]
    assert tf.gradients(tf.cast(tf.cast(x, tf.bool), tf.float32), x) == [None]
    # A float path alongside the integer one still carries its gradient.
    (g,) = tf.gradients(through_int + 3.0 * x, x)
    np.testing.assert_allclose(run(g, {x: [0.5, 1.5]}), [3.0, 3.0])


def test_integer_y_of_integer_x():
    i = tf.placeholder(tf.int32, [2])
    assert tf.gradients(i * 2, i) == [None]
    (g,) = tf.gradients(i * 2, i, unconnected_gradients="zero")
    np.testing.assert_array_equal(run(g, {i: [4, 5]}), [0, 0])


def test_cond_with_int_outputs_gradient():
    p = tf.placeholder(tf.bool, [])
    x = tf.constant(2.0)
    i = tf.constant(3)
    a, b = tf.cond(p, lambda: (x * 2, i + 1), lambda: (x * 3, i * 2))
    gx, gi = tf.gradients(a * tf.cast(b, tf.float32), [x, i])
    assert gi is None
    assert run([a, b, gx], {p: True}) == [4.0, 4, 8.0]
    assert run([a, b, gx], {p: False}) == [6.0, 6, 18.0]
