"""Optimizers end to end: updates match NumPy over several steps; slots; sparse updates."""

import numpy as np
import pytest

import tensorflux as tf

W0 = np.array([[1.0, -2.0], [0.5, 3.0], [-1.5, 0.25]])
TARGET = np.array([[0.0, 1.0], [2.0, -1.0], [0.5, 0.5]])


def _grad(w):
    return 2 * (w - TARGET)  # d/dw sum((w - target)^2)


def _numpy_steps(name, steps=3):
    w = W0.copy()
    lr = 0.1
    if name == "sgd":
        for _ in range(steps):
            w -= lr * _grad(w)
    elif name == "momentum":
        acc = np.zeros_like(w)
        for _ in range(steps):
            acc = 0.9 * acc + _grad(w)
            w -= lr * acc
    elif name == "nesterov":
        acc = np.zeros_like(w)
        for _ in range(steps):
            g = _grad(w)
            acc = 0.9 * acc + g
            w -= lr * (g + 0.9 * acc)
    elif name == "adagrad":
        acc = np.full_like(w, 0.1)
        for _ in range(steps):
            g = _grad(w)
            acc += g * g
            w -= lr * g / np.sqrt(acc)
    elif name == "adam":
        m, v = np.zeros_like(w), np.zeros_like(w)
        for t in range(1, steps + 1):
            g = _grad(w)
            m = 0.9 * m + 0.1 * g
            v = 0.999 * v + 0.001 * g * g
            lr_t = lr * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
            w -= lr_t * m / (np.sqrt(v) + 1e-8)
    elif name == "rmsprop":
        ms, mom = np.ones_like(w), np.zeros_like(w)
        for _ in range(steps):
            g = _grad(w)
            ms = ms + (g * g - ms) * 0.1
            mom = 0.0 * mom + lr * g / np.sqrt(ms + 1e-10)
            w -= mom
    return w


OPTIMIZERS = {
    "sgd": lambda: tf.train.GradientDescentOptimizer(0.1),
    "momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9),
    "nesterov": lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "adagrad": lambda: tf.train.AdagradOptimizer(0.1),
    "adam": lambda: tf.train.AdamOptimizer(0.1),
    "rmsprop": lambda: tf.train.RMSPropOptimizer(0.1),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_dense_updates_match_numpy(name):
    with tf.Graph().as_default():
        w = tf.Variable(W0, name="w")
        loss = tf.reduce_sum(tf.square(w - TARGET))
        step = tf.train.get_or_create_global_step()
        train = OPTIMIZERS[name]().minimize(loss, global_step=step)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            # NOTE: hyperparameters are float32 tensors cast to float64, as in TF.
            np.testing.assert_allclose(sess.run(w), _numpy_steps(name), rtol=1e-5)
            assert sess.run(step) == 3


@pytest.mark.parametrize("name", ["adadelta", "ftrl", "proximal_adagrad", "proximal_sgd",
                                  "centered_rmsprop"])
def test_other_optimizers_reduce_the_loss(name):
    make = {
        "adadelta": lambda: tf.train.AdadeltaOptimizer(1.0, epsilon=1e-2),
        "ftrl": lambda: tf.train.FtrlOptimizer(0.5, l1_regularization_strength=0.001),
        "proximal_adagrad": lambda: tf.train.ProximalAdagradOptimizer(
            0.5, l2_regularization_strength=0.001),
        "proximal_sgd": lambda: tf.train.ProximalGradientDescentOptimizer(
            0.1, l1_regularization_strength=0.001),
        "centered_rmsprop": lambda: tf.train.RMSPropOptimizer(0.05, momentum=0.5,
                                                              centered=True),
    }[name]
    with tf.Graph().as_default():
        w = tf.Variable(W0)
        loss = tf.reduce_sum(tf.square(w - TARGET))
        train = make().minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(loss)
            for _ in range(50):
                sess.run(train)
            assert sess.run(loss) < 0.2 * first


def test_slots_are_named_and_colocated():
    with tf.Graph().as_default():
        w = tf.Variable(W0, name="w")
        opt = tf.train.AdamOptimizer()
        opt.minimize(tf.reduce_sum(w * w))
        assert opt.get_slot_names() == ["m", "v"]
        assert opt.get_slot(w, "m").op.name == "w/Adam"
        assert opt.get_slot(w, "v").op.name == "w/Adam_1"
        names = {v.op.name for v in tf.global_variables()}
        assert {"w", "w/Adam", "w/Adam_1", "beta1_power", "beta2_power"} <= names
        assert [v.op.name for v in tf.trainable_variables()] == ["w"]
        assert opt.get_slot(w, "m").op.colocation_groups() == [b"loc:@w"]


@pytest.mark.parametrize("name", ["sgd", "momentum", "adagrad", "adam"])
def test_sparse_updates_touch_only_looked_up_rows(name):
    table0 = np.arange(12, dtype=np.float64).reshape(6, 2) / 10
    ids = np.array([4, 1, 4])
    with tf.Graph().as_default():
        table = tf.Variable(table0)
        rows = tf.nn.embedding_lookup(table, ids)
        loss = tf.reduce_sum(rows * rows)
        opt = OPTIMIZERS[name]()
        grads_and_vars = opt.compute_gradients(loss, [table])
        assert isinstance(grads_and_vars[0][0], tf.IndexedSlices)
        train = opt.apply_gradients(grads_and_vars)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            after = sess.run(table)
    untouched = [0, 2, 3, 5]
    np.testing.assert_array_equal(after[untouched], table0[untouched])
    dense_grad = np.zeros_like(table0)
    np.add.at(dense_grad, ids, 2 * table0[ids])
    if name == "sgd":
        np.testing.assert_allclose(after, table0 - 0.1 * dense_grad)
    else:
        assert np.all(np.abs(after[[1, 4]]) < np.abs(table0[[1, 4]]))


def test_no_gradients_is_an_error_naming_variables():
    with tf.Graph().as_default():
        w = tf.Variable(1.0, name="lonely")
        with pytest.raises(ValueError, match="lonely"):
            tf.train.GradientDescentOptimizer(0.1).minimize(tf.constant(1.0) * 2.0,
                                                            var_list=[w])


def test_learning_rate_schedules():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int64, [])
        schedules = {
            "exp": tf.train.exponential_decay(0.1, step, 10, 0.5),
            "exp_stair": tf.train.exponential_decay(0.1, step, 10, 0.5, staircase=True),
            "inverse": tf.train.inverse_time_decay(0.1, step, 10, 0.5),
            "natural": tf.train.natural_exp_decay(0.1, step, 10, 0.5),
            "poly": tf.train.polynomial_decay(0.1, step, 100, 0.01, power=2.0),
            "cosine": tf.train.cosine_decay(0.1, step, 100, alpha=0.1),
            "piecewise": tf.train.piecewise_constant(step, [10, 20], [1.0, 0.5, 0.1]),
        }
        with tf.Session() as sess:
            for s in (0, 5, 10, 15, 20, 25, 150):
                got = sess.run(schedules, {step: s})
                assert np.isclose(got["exp"], 0.1 * 0.5 ** (s / 10))
                assert np.isclose(got["exp_stair"], 0.1 * 0.5 ** (s // 10))
                assert np.isclose(got["inverse"], 0.1 / (1 + 0.5 * s / 10))
                assert np.isclose(got["natural"], 0.1 * np.exp(-0.5 * s / 10))
                p = min(s, 100)
                assert np.isclose(got["poly"], (0.1 - 0.01) * (1 - p / 100) ** 2 + 0.01)
                cos = 0.5 * (1 + np.cos(np.pi * p / 100))
                assert np.isclose(got["cosine"], 0.1 * (0.9 * cos + 0.1), rtol=1e-5)
                want = 1.0 if s <= 10 else 0.5 if s <= 20 else 0.1
                assert np.isclose(got["piecewise"], want)


def test_clipping():
    a = np.array([3.0, 4.0])
    b = np.array([[12.0]])
    with tf.Graph().as_default():
        clipped, norm = tf.clip_by_global_norm([tf.constant(a), tf.constant(b), None], 6.5)
        by_norm = tf.clip_by_norm(tf.constant(a), 1.0)
        with tf.Session() as sess:
            ca, cb, n = sess.run([clipped[0], clipped[1], norm])
            assert clipped[2] is None
            assert np.isclose(n, 13.0)
            np.testing.assert_allclose(ca, a * 0.5)
            np.testing.assert_allclose(cb, b * 0.5)
            np.testing.assert_allclose(sess.run(by_norm), [0.6, 0.8])


def test_exponential_moving_average():
    with tf.Graph().as_default():
        v = tf.Variable(10.0, name="v")
        ema = tf.train.ExponentialMovingAverage(0.5)
        update = ema.apply([v])
        assign = tf.assign(v, 20.0)
        assert ema.average(v).op.name == "v/ExponentialMovingAverage"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(assign)
            sess.run(update)
            assert np.isclose(sess.run(ema.average(v)), 15.0)
            sess.run(update)
            assert np.isclose(sess.run(ema.average(v)), 17.5)
        restore = ema.variables_to_restore()
        assert restore["v/ExponentialMovingAverage"] is v


def test_custom_optimizer_on_resource_variables_uses_the_resource_hooks():
    """A subclass defining only `_resource_apply_*` (the resource-variable hooks) trains
    resource variables; slots made by `_get_or_make_slot_with_initializer`; duplicate sparse
    indices are summed before `_resource_apply_sparse`. Checked against NumPy."""

    class ResourceOnly(tf.train.Optimizer):
        def __init__(self):
            super().__init__(False, "ResourceOnly")

        def _create_slots(self, var_list):
            for var in var_list:
                self._get_or_make_slot_with_initializer(
                    var, tf.constant_initializer(0.5), var.get_shape(), var.dtype.base_dtype,
                    "acc", self._name)

        def _resource_apply_dense(self, grad, var):
            acc = tf.assign_add(self.get_slot(var, "acc"), grad * grad)
            return tf.assign_sub(var, 0.1 * grad / tf.sqrt(acc))

        def _resource_apply_sparse(self, grad, var, indices):
            return var.scatter_sub(tf.IndexedSlices(0.1 * grad, indices))

    with tf.Graph().as_default():
        v = tf.get_variable("v", initializer=np.array([1.0, -2.0], np.float32),
                            use_resource=True)
        table = tf.get_variable("table", initializer=np.ones((4, 2), np.float32),
                                use_resource=True)
        loss = tf.reduce_sum(v * v) + tf.reduce_sum(tf.nn.embedding_lookup(table, [1, 1, 3]))
        optimizer = ResourceOnly()
        train = optimizer.minimize(loss)
        assert optimizer._valid_dtypes() >= {tf.float32, tf.float64}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            grad = 2.0 * np.array([1.0, -2.0])
            expected_v = np.array([1.0, -2.0]) - 0.1 * grad / np.sqrt(0.5 + grad * grad)
            np.testing.assert_allclose(sess.run(v), expected_v, rtol=1e-6)
            expected_table = np.ones((4, 2))
            expected_table[1] -= 0.2  # row 1 looked up twice: one summed update
            expected_table[3] -= 0.1
            np.testing.assert_allclose(sess.run(table), expected_table, rtol=1e-6)
