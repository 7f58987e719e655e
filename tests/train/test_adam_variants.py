"""AdaMax, Nadam (contrib: Nesterov Adam; Keras: scheduled) and the Keras optimizers built on
them, against NumPy implementations of the published update rules."""

import numpy as np
import pytest

import tensorflux as tf

# Hyper-parameters become float32 tensors (as in TF), so float64 results agree to ~1e-6.
G = [np.array([0.5, -1.0, 2.0]), np.array([-0.3, 0.2, 1.0]), np.array([1.5, 0.0, -0.7])]


def _run_steps(optimizer, grads, sparse_rows=None):
    """Applies `grads` (a list of per-step gradients) to a variable starting at ones."""
    with tf.Graph().as_default():
        var = tf.Variable(np.ones(3, np.float64))
        g = tf.placeholder(tf.float64, [3])
        if sparse_rows is None:
            grad = g
        else:
            grad = tf.IndexedSlices(tf.gather(g, sparse_rows), tf.constant(sparse_rows),
                                    tf.constant([3]))
        step = optimizer().apply_gradients([(grad, var)])
        out = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for value in grads:
                sess.run(step, {g: value})
                out.append(sess.run(var))
        return np.array(out)


def _adamax(grads, lr=0.1, b1=0.9, b2=0.999, eps=1e-8, rows=None):
    var, m, v = np.ones(3), np.zeros(3), np.zeros(3)
    out = []
    for t, g in enumerate(grads, 1):
        rows_ = np.arange(3) if rows is None else np.array(rows)
        m = b1 * m
        m[rows_] += (1 - b1) * g[rows_]
        v[rows_] = np.maximum(b2 * v[rows_], np.abs(g[rows_]))
        var[rows_] -= lr / (1 - b1 ** t) * m[rows_] / (v[rows_] + eps)
        out.append(var.copy())
    return np.array(out)


def _nesterov_adam(grads, lr=0.1, b1=0.9, b2=0.999, eps=1e-8, rows=None):
    var, m, v = np.ones(3), np.zeros(3), np.zeros(3)
    out = []
    for t, g in enumerate(grads, 1):
        rows_ = np.arange(3) if rows is None else np.array(rows)
        gg = np.zeros(3)
        gg[rows_] = g[rows_]
        m = b1 * m + (1 - b1) * gg
        v = b2 * v + (1 - b2) * gg ** 2
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        var[rows_] -= lr_t * (b1 * m[rows_] + (1 - b1) * gg[rows_]) / (np.sqrt(v[rows_]) + eps)
        out.append(var.copy())
    return np.array(out)


def _scheduled_nadam(grads, lr=0.1, b1=0.9, b2=0.999, eps=1e-7):
    var, m, v, cache = np.ones(3), np.zeros(3), np.zeros(3), 1.0
    out = []
    for t, g in enumerate(grads, 1):
        mu_t = b1 * (1 - 0.5 * 0.96 ** (0.004 * t))
        mu_next = b1 * (1 - 0.5 * 0.96 ** (0.004 * (t + 1)))
        cache_new = cache * mu_t
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g ** 2
        m_bar = (1 - mu_t) * g / (1 - cache_new) + mu_next * m / (1 - cache_new * mu_next)
        var = var - lr * m_bar / (np.sqrt(v / (1 - b2 ** t)) + eps)
        cache = cache_new
        out.append(var.copy())
    return np.array(out)


def test_adamax_dense_and_sparse():
    np.testing.assert_allclose(_run_steps(lambda: tf.contrib.opt.AdaMaxOptimizer(0.1), G),
                               _adamax(G), rtol=2e-6)
    np.testing.assert_allclose(
        _run_steps(lambda: tf.contrib.opt.AdaMaxOptimizer(0.1), G, sparse_rows=[0, 2]),
        _adamax(G, rows=[0, 2]), rtol=2e-6)


def test_contrib_nadam_is_nesterov_adam_dense_and_sparse():
    np.testing.assert_allclose(_run_steps(lambda: tf.contrib.opt.NadamOptimizer(0.1), G),
                               _nesterov_adam(G), rtol=2e-6)
    np.testing.assert_allclose(
        _run_steps(lambda: tf.contrib.opt.NadamOptimizer(0.1), G, sparse_rows=[1]),
        _nesterov_adam(G, rows=[1]), rtol=2e-6)


def test_keras_nadam_momentum_schedule():
    from tensorflux.train.adam_variants import ScheduledNadamOptimizer
    got = _run_steps(lambda: ScheduledNadamOptimizer(0.1), G)
    np.testing.assert_allclose(got, _scheduled_nadam(G), rtol=2e-6)
    sparse = _run_steps(lambda: ScheduledNadamOptimizer(0.1), G, sparse_rows=[0, 1, 2])
    np.testing.assert_allclose(sparse, got, rtol=2e-6)


@pytest.mark.parametrize("name,cls,defaults", [
    ("adadelta", "Adadelta", {"learning_rate": 0.001, "rho": 0.95, "epsilon": 1e-7}),
    ("adamax", "Adamax", {"learning_rate": 0.001, "beta_1": 0.9, "epsilon": 1e-7}),
    ("nadam", "Nadam", {"learning_rate": 0.001, "beta_2": 0.999, "epsilon": 1e-7}),
    ("ftrl", "Ftrl", {"learning_rate": 0.001, "learning_rate_power": -0.5,
                      "initial_accumulator_value": 0.1}),
])
def test_keras_optimizers_by_name_with_tf115_defaults(name, cls, defaults):
    optimizer = tf.keras.optimizers.get(name)
    assert type(optimizer).__name__ == cls
    config = optimizer.get_config()
    for key, value in defaults.items():
        assert config[key] == pytest.approx(value), key
    x = np.random.RandomState(0).randn(32, 4).astype(np.float32)
    y = x.sum(axis=1, keepdims=True)
    with tf.Graph().as_default():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
        model.compile(getattr(tf.keras.optimizers, cls)(learning_rate=0.05), "mse")
        loss = model.fit(x, y, epochs=4, batch_size=8, verbose=0).history["loss"]
    assert loss[-1] < loss[0]


def test_keras_nadam_rejects_another_schedule_decay():
    with pytest.raises(ValueError, match="schedule_decay"):
        tf.keras.optimizers.Nadam(schedule_decay=0.01)
