"""Optimizer.apply_gradients honours variable constraints (dense gradients) and refuses to
update plain tensors, as TF1 does."""

import numpy as np
import pytest

import tensorflux as tf


@pytest.mark.parametrize("use_resource", [False, True])
def test_constraint_projects_after_the_dense_update(use_resource):
    with tf.Graph().as_default():
        var = tf.get_variable("w", initializer=np.array([0.5, -2.0, 3.0], np.float32),
                              constraint=lambda v: tf.clip_by_value(v, -1.0, 1.0),
                              use_resource=use_resource)
        grad = np.array([0.25, -0.5, 1.0], np.float32)
        step = tf.train.GradientDescentOptimizer(2.0).apply_gradients([(tf.constant(grad), var)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step)
            got = sess.run(var)
    np.testing.assert_allclose(got, np.clip([0.5, -2.0, 3.0] - 2.0 * grad, -1.0, 1.0))


def test_sparse_gradient_for_a_constrained_variable_is_refused():
    with tf.Graph().as_default():
        var = tf.Variable([[1.0], [2.0]], constraint=lambda v: v * 0.5)
        grad = tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([0]), tf.constant([2, 1]))
        with pytest.raises(RuntimeError, match="constraint function on a sparse variable"):
            tf.train.GradientDescentOptimizer(1.0).apply_gradients([(grad, var)])


def test_gradients_of_tensors_compute_but_do_not_apply():
    with tf.Graph().as_default():
        x = tf.constant(3.0)
        opt = tf.train.GradientDescentOptimizer(0.1)
        grads_and_vars = opt.compute_gradients(x * x * x, [x])
        with tf.Session() as sess:
            assert sess.run(grads_and_vars[0][0]) == pytest.approx(27.0)
        with pytest.raises(NotImplementedError, match="Trying to update a Tensor"):
            opt.apply_gradients(grads_and_vars)
