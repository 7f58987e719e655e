"""tf.GradientTape in graph mode: gradients (nested sources), watch, stop_recording, persistence,
jacobian and batch_jacobian against NumPy references."""

import numpy as np
import pytest

import tensorflux as tf


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def test_gradient_structure_variables_and_stop_recording():
    x = tf.constant([1.0, 2.0, 3.0], tf.float64)
    w = tf.Variable(2.0, dtype=tf.float64)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.reduce_sum(x * x * w)
        with tape.stop_recording():
            frozen = x * 5.0
        z = y + tf.reduce_sum(frozen * x)
    grads = tape.gradient(z, {"x": x, "w": [w]})
    xv = np.array([1.0, 2.0, 3.0])
    got = _run(grads)
    # frozen is a constant: d/dx of sum(frozen * x) is frozen = 5x
    np.testing.assert_allclose(got["x"], 2 * xv * 2.0 + 5 * xv)
    assert got["w"][0] == pytest.approx(np.sum(xv * xv))
    weighted = tape.gradient(y, x, output_gradients=tf.constant(3.0, tf.float64))
    np.testing.assert_allclose(_run(weighted), 3 * 2 * xv * 2.0)
    assert tape.gradient(y, tf.constant(1.0, tf.float64)) is None


def test_non_persistent_tape_answers_once_and_stop_recording_needs_recording():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert _run(tape.gradient(y, x)) == pytest.approx(4.0)
    with pytest.raises(RuntimeError, match="only be called once"):
        tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="not recording"):
        with tape.stop_recording():
            pass


def test_jacobian_and_batch_jacobian_match_references():
    a = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]])
    x = tf.placeholder(tf.float64, [2])
    with tf.GradientTape(persistent=True) as tape:
        y = tf.linalg.matvec(tf.constant(a), x) ** 2
    jac = tape.jacobian(y, x)
    xv = np.array([0.3, -0.8])
    ref = 2 * (a @ xv)[:, None] * a
    np.testing.assert_allclose(_run(jac, {x: xv}), ref)
    b = tf.placeholder(tf.float64, [4, 2])
    with tf.GradientTape() as tape2:
        out = tf.stack([b[:, 0] * b[:, 1], tf.sin(b[:, 0]), b[:, 1] ** 3], axis=1)
    bj = tape2.batch_jacobian(out, b)
    bv = np.random.RandomState(0).uniform(-1, 1, (4, 2))
    ref = np.zeros((4, 3, 2))
    ref[:, 0, 0], ref[:, 0, 1] = bv[:, 1], bv[:, 0]
    ref[:, 1, 0] = np.cos(bv[:, 0])
    ref[:, 2, 1] = 3 * bv[:, 1] ** 2
    np.testing.assert_allclose(_run(bj, {b: bv}), ref)
    with tf.GradientTape() as tape3:
        unknown = tf.placeholder(tf.float64, [None]) * 2.0
    with pytest.raises(ValueError, match="static number of elements"):
        tape3.jacobian(unknown, x)


def test_watch_accessed_variables_false_only_watched_variables_get_gradients():
    a = tf.Variable(2.0)
    b = tf.Variable(3.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(a)
        y = a * b
    ga, gb = tape.gradient(y, [a, b])
    assert gb is None and _run(ga) == pytest.approx(3.0)
    assert tape.watched_variables() == (a,)
