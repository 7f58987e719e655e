"""tf.grad_pass_through: forward values of f, gradients of the identity."""

import numpy as np
from op_helpers import graph, run  # noqa: F401 - autouse fixture

import tensorflux as tf


def test_pass_through_an_assignment_and_a_step_function():
    x = tf.Variable(1.0)
    z = tf.Variable(3.0)
    y = tf.grad_pass_through(x.assign)(z ** 2)
    rounded = tf.grad_pass_through(tf.round)(z * 1.3)
    grads = tf.gradients([y, rounded], [z])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        value, r, g = sess.run([y, rounded, grads[0]])
        assert value == 9.0 and sess.run(x) == 9.0
        assert r == np.round(3.9)
        # d(z^2)/dz through the identity plus d(1.3 z)/dz through the identity.
        np.testing.assert_allclose(g, 2 * 3.0 + 1.3, rtol=1e-6)


def test_nested_results_and_several_arguments():
    a = tf.placeholder(tf.float64, [3])
    b = tf.placeholder(tf.float64, [3])
    out = tf.grad_pass_through(lambda u, v: (tf.floor(u), tf.sign(v)))(a * 2.0, b * 3.0)
    ga, gb = tf.gradients(out[0] + 2.0 * out[1], [a, b])
    av, bv = np.array([0.3, 1.7, -2.2]), np.array([-1.0, 0.5, 2.0])
    values = run([out[0], out[1], ga, gb], {a: av, b: bv})
    np.testing.assert_array_equal(values[0], np.floor(av * 2))
    np.testing.assert_array_equal(values[1], np.sign(bv * 3))
    np.testing.assert_allclose(values[2], np.full(3, 2.0))
    np.testing.assert_allclose(values[3], np.full(3, 6.0))
