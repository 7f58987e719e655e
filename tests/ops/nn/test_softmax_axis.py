"""softmax / log_softmax along an axis given as a Tensor (known only at run time)."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf


def _np_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
def test_softmax_axis_fed_at_run_time(axis):
    x = np.random.RandomState(3).randn(2, 3, 4)
    a = tf.placeholder(tf.int32, [])
    y = tf.nn.softmax(x, axis=a)
    log_y = tf.nn.log_softmax(x, axis=a)
    assert y.shape.as_list() == [2, 3, 4]
    got, got_log = run([y, log_y], {a: axis})
    np.testing.assert_allclose(got, _np_softmax(x, axis), rtol=1e-12)
    np.testing.assert_allclose(got_log, np.log(_np_softmax(x, axis)), rtol=1e-12)


@pytest.mark.parametrize("axis", [3, 100, -4, -9])
def test_softmax_axis_tensor_out_of_range_fails_at_run_time(axis):
    a = tf.placeholder(tf.int32, [])
    y = tf.nn.softmax(np.ones([2, 3, 4]), axis=a)
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(y, {a: axis})


def test_softmax_constant_axis_tensor_is_checked_at_construction():
    x = np.random.RandomState(2).randn(2, 3)
    np.testing.assert_allclose(run(tf.nn.softmax(x, axis=tf.constant(0))), _np_softmax(x, 0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="dim=5"):
        tf.nn.softmax(x, axis=tf.constant(5))


def test_softmax_axis_tensor_gradient_matches_finite_differences():
    x0 = np.random.RandomState(1).randn(3, 4)
    x = tf.placeholder(tf.float64, [3, 4])
    a = tf.placeholder_with_default(0, [])
    w = np.cos(np.arange(12.0)).reshape(3, 4)
    loss = tf.reduce_sum(tf.nn.softmax(x, axis=a) * w)
    grad = run(tf.gradients(loss, x)[0], {x: x0})
    eps = 1e-6
    numeric = np.zeros_like(x0)
    for i in np.ndindex(*x0.shape):
        up, down = x0.copy(), x0.copy()
        up[i] += eps
        down[i] -= eps
        numeric[i] = ((_np_softmax(up, 0) * w).sum() - (_np_softmax(down, 0) * w).sum()) / (
            2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)
