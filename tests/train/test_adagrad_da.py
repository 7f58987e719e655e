"""ApplyAdagradDA / SparseApplyAdagradDA and tf.train.AdagradDAOptimizer."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.train import adagrad_da

COVERED_OPS = {"ApplyAdagradDA", "SparseApplyAdagradDA"}


def da_ref(acc, sq, grad, lr, l1, l2, step):
    """(var, acc, sq) after one dual-averaging step, written from the update's definition."""
    acc = acc + grad
    sq = sq + grad ** 2
    numerator = np.where(np.abs(acc) > l1 * step, np.abs(acc) - l1 * step, 0.0) if l1 > 0 \
        else np.abs(acc)
    var = -np.sign(acc) * lr * numerator / (l2 * step * lr + np.sqrt(sq))
    return var, acc, sq


def _variables(*values):
    return [tf.Variable(np.asarray(v, np.float64)) for v in values]


@pytest.mark.parametrize("l1,l2,step", [(0.0, 0.0, 1), (0.3, 0.2, 3), (0.0, 0.5, 7)])
def test_apply_adagrad_da(l1, l2, step):
    rng = np.random.RandomState(0)
    var0, acc0, sq0, grad = (rng.randn(4, 3), rng.randn(4, 3), rng.uniform(0.1, 1, (4, 3)),
                             rng.randn(4, 3))
    with tf.Graph().as_default():
        var, acc, sq = _variables(var0, acc0, sq0)
        out = adagrad_da.ApplyAdagradDA(var, acc, sq, grad, 0.5, l1, l2,
                                        tf.constant(step, tf.int64))
        assert out.dtype == tf.float64_ref and out.shape.as_list() == [4, 3]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(out)
            got = sess.run([var, acc, sq])
    for value, expected in zip(got, da_ref(acc0, sq0, grad, 0.5, l1, l2, step)):
        np.testing.assert_allclose(value, expected, rtol=1e-12)


def test_sparse_apply_adagrad_da_touches_only_rows():
    rng = np.random.RandomState(1)
    var0, acc0, sq0 = rng.randn(5, 2), rng.randn(5, 2), rng.uniform(0.1, 1, (5, 2))
    grad, indices = rng.randn(2, 2), np.array([3, 0], np.int32)
    with tf.Graph().as_default():
        var, acc, sq = _variables(var0, acc0, sq0)
        out = adagrad_da.SparseApplyAdagradDA(var, acc, sq, grad, indices, 0.1, 0.05, 0.1,
                                              tf.constant(2, tf.int64))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(out)
            got = sess.run([var, acc, sq])
    rows = da_ref(acc0[indices], sq0[indices], grad, 0.1, 0.05, 0.1, 2)
    for value, start, expected in zip(got, (var0, acc0, sq0), rows):
        want = start.copy()
        want[indices] = expected
        np.testing.assert_allclose(value, want, rtol=1e-12)


def test_op_errors():
    with tf.Graph().as_default():
        var, acc, sq = _variables(np.zeros((2, 2)), np.zeros((2, 2)), np.ones((2, 2)))
        with pytest.raises(ValueError):
            adagrad_da.ApplyAdagradDA(var, acc, sq, np.zeros((3, 2)), 0.1, 0.0, 0.0,
                                      tf.constant(1, tf.int64))
        bad = adagrad_da.SparseApplyAdagradDA(var, acc, sq, np.zeros((1, 2)), [5], 0.1, 0.0,
                                              0.0, tf.constant(1, tf.int64))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match="indices"):
                sess.run(bad)


def test_optimizer_matches_tensorflow_run():
    # Values from TensorFlow 1.x's AdagradDAOptimizer on the same program (dense + sparse).
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], dtype=tf.float64)
        v2 = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=tf.float64)
        step = tf.train.get_or_create_global_step()
        opt = tf.train.AdagradDAOptimizer(0.5, step, l1_regularization_strength=0.3,
                                          l2_regularization_strength=0.2)
        loss = (tf.reduce_sum(v * v * [1.0, 3.0])
                + tf.reduce_sum(tf.gather(v2, [0, 2, 0]) * [[1.0, 2.0]]))
        train = opt.minimize(loss, global_step=step)
        names = [x.op.name for x in tf.global_variables()]
        assert names == ["Variable", "Variable_1", "global_step", "Variable/AdagradDA",
                         "Variable/AdagradDA_1", "Variable_1/AdagradDA", "Variable_1/AdagradDA_1"]
        assert opt.get_slot_names() == ["gradient_accumulator", "gradient_squared_accumulator"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            v_v, v2_v, step_v = sess.run([v, v2, step])
    assert step_v == 3
    np.testing.assert_allclose(v_v, [-0.00954467, -0.2406525], atol=1e-7)
    np.testing.assert_allclose(v2_v, [[-0.67487001, -0.76706021], [3.0, 4.0],
                                      [-0.50954011, -0.67487001]], atol=1e-7)


def test_optimizer_float32_without_l1_and_errors():
    with tf.Graph().as_default():
        step = tf.Variable(4, dtype=tf.int64, trainable=False)
        v = tf.Variable([0.5, -1.0, 2.0])
        opt = tf.train.AdagradDAOptimizer(tf.constant(0.1, tf.float64), step,
                                          initial_gradient_squared_accumulator_value=0.5,
                                          l2_regularization_strength=0.1)
        train = opt.apply_gradients([(tf.constant([1.0, 2.0, -3.0]), v)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            got = sess.run(v)
        expected, _, _ = da_ref(0.0, 0.5, np.array([1.0, 2.0, -3.0]), 0.1, 0.0, 0.1, 5)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, expected, rtol=1e-6)
        with pytest.raises(ValueError, match="positive"):
            tf.train.AdagradDAOptimizer(0.1, step, initial_gradient_squared_accumulator_value=0)


@settings(max_examples=20, deadline=None)
@given(grad=st.lists(st.floats(-5, 5), min_size=3, max_size=3), l1=st.floats(0, 2),
       l2=st.floats(0, 2), step=st.integers(1, 50))
def test_apply_hypothesis(grad, l1, l2, step):
    grad = np.array(grad)
    with tf.Graph().as_default():
        var, acc, sq = _variables(np.zeros(3), np.full(3, 0.25), np.full(3, 0.1))
        out = adagrad_da.ApplyAdagradDA(var, acc, sq, grad, 0.2, l1, l2,
                                        tf.constant(step, tf.int64))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(out)
            got = sess.run(var)
    expected = da_ref(np.full(3, 0.25), np.full(3, 0.1), grad, 0.2, l1, l2, step)[0]
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
