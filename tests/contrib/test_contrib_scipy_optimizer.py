"""tf.contrib.opt.ScipyOptimizerInterface: solutions against scipy.optimize on the same problem."""

import numpy as np
import pytest

import tensorflux as tf

optimize = pytest.importorskip("scipy.optimize")

RNG = np.random.RandomState(5)


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_least_squares_matches_scipy_lbfgsb_and_callbacks_run():
    a = RNG.randn(6, 3)
    b = RNG.randn(6)
    x = tf.Variable(np.zeros(3), dtype=tf.float64)
    loss = tf.reduce_sum(tf.square(tf.linalg.matvec(tf.constant(a), x) - b))
    losses, steps = [], []
    opt = tf.contrib.opt.ScipyOptimizerInterface(loss, options={"maxiter": 100})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        opt.minimize(sess, fetches=[loss], loss_callback=losses.append,
                     step_callback=steps.append)
        got = sess.run(x)
    want = np.linalg.lstsq(a, b, rcond=None)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert losses[0] == pytest.approx(float(np.sum(b ** 2)))
    assert len(steps) >= 1 and len(losses) >= len(steps)
    assert steps[-1].shape == (3,)


def test_bounds_per_variable_and_feed_dict():
    target = tf.placeholder(tf.float32, [2, 2])
    v = tf.Variable(tf.zeros([2, 2]))
    w = tf.Variable(1.0)
    loss = tf.reduce_sum(tf.square(v - target)) + tf.square(w - 3.0)
    t = np.array([[2.0, -2.0], [0.5, 9.0]], np.float32)
    opt = tf.contrib.opt.ScipyOptimizerInterface(
        loss, var_to_bounds={v: (-1.0, [[1.0, 1.0], [1.0, 5.0]])})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        opt.minimize(sess, feed_dict={target: t})
        got_v, got_w = sess.run([v, w])
    ref = optimize.minimize(
        lambda z: (np.sum((z[:4] - t.ravel()) ** 2) + (z[4] - 3) ** 2,
                   np.concatenate([2 * (z[:4] - t.ravel()), [2 * (z[4] - 3)]])),
        np.array([0, 0, 0, 0, 1.0]), jac=True, method="L-BFGS-B",
        bounds=[(-1, 1), (-1, 1), (-1, 1), (-1, 5), (-np.inf, np.inf)])
    np.testing.assert_allclose(got_v.ravel(), ref.x[:4], atol=1e-5)
    np.testing.assert_allclose(got_w, ref.x[4], atol=1e-5)
    np.testing.assert_allclose(got_v, [[1.0, -1.0], [0.5, 5.0]], atol=1e-5)


def test_equality_and_inequality_constraints_with_slsqp():
    # min (x-1)^2 + (y-2.5)^2 s.t. x - 2y + 2 >= 0, x + y = 2 -> SciPy's own answer.
    xy = tf.Variable([2.0, 0.0], dtype=tf.float64)
    loss = tf.square(xy[0] - 1) + tf.square(xy[1] - 2.5)
    opt = tf.contrib.opt.ScipyOptimizerInterface(
        loss, equalities=[xy[0] + xy[1] - 2], inequalities=[xy[0] - 2 * xy[1] + 2],
        method="SLSQP")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with sess.as_default():
            opt.minimize()
        got = sess.run(xy)
    ref = optimize.minimize(lambda z: (z[0] - 1) ** 2 + (z[1] - 2.5) ** 2, [2.0, 0.0],
                            method="SLSQP",
                            constraints=[{"type": "eq", "fun": lambda z: z[0] + z[1] - 2},
                                         {"type": "ineq", "fun": lambda z: z[0] - 2 * z[1] + 2}])
    np.testing.assert_allclose(got, ref.x, atol=1e-5)
    np.testing.assert_allclose(got.sum(), 2.0, atol=1e-6)


def test_var_list_subset_and_unconnected_variable_keep_their_values():
    a = tf.Variable(5.0)
    b = tf.Variable(7.0)
    c = tf.Variable(-4.0)
    loss = tf.square(a - 1.0) + tf.square(b - 2.0)
    opt = tf.contrib.opt.ScipyOptimizerInterface(loss, var_list=[a, c])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        opt.minimize(sess)
        got = sess.run([a, b, c])
    np.testing.assert_allclose(got, [1.0, 7.0, -4.0], atol=1e-5)


def test_interface_owned_arguments_and_bad_variables_are_refused():
    v = tf.Variable([1.0, 2.0])
    loss = tf.reduce_sum(tf.square(v))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for key, pattern in [("bounds", "var_to_bounds"), ("jac", "Jacobian"),
                             ("callback", "step_callback"),
                             ("constraints", "equalities and inequalities")]:
            opt = tf.contrib.opt.ScipyOptimizerInterface(loss, **{key: None})
            with pytest.raises(ValueError, match=pattern):
                opt.minimize(sess)
    opt = tf.contrib.opt.ScipyOptimizerInterface(loss)
    with pytest.raises(ValueError, match="No session"):
        opt.minimize()
    with pytest.raises(ValueError, match="No variables"):
        tf.contrib.opt.ScipyOptimizerInterface(tf.constant(1.0), var_list=[])
