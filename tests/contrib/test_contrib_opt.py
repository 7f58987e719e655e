"""tf.contrib.opt: LazyAdam vs NumPy, MovingAverageOptimizer swapping saver, AdamW decay."""

import numpy as np
import pytest

import tensorflux as tf

opt = tf.contrib.opt


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _lazy_adam_ref(var, m, v, rows, grads, t):
    # Hyperparameters and beta powers are float32 (as TF keeps them), used in float64.
    lr, b1, b2, eps = (float(np.float32(h)) for h in (0.1, 0.9, 0.999, 1e-8))
    b1_power = float(np.float32(b1) ** t)
    b2_power = float(np.float32(b2) ** t)
    summed = {}
    for r, g in zip(rows, grads):
        summed[r] = summed.get(r, 0) + g
    step = lr * np.sqrt(1 - b2_power) / (1 - b1_power)
    for r, g in summed.items():
        m[r] = b1 * m[r] + (1 - b1) * g
        v[r] = b2 * v[r] + (1 - b2) * g * g
        var[r] -= step * m[r] / (np.sqrt(v[r]) + eps)


def test_lazy_adam_touches_only_given_rows():
    init = np.arange(8, dtype=np.float64).reshape(4, 2) / 10
    var = tf.Variable(init, name="emb")
    ids = tf.placeholder(tf.int32, [None])
    coeff = tf.placeholder(tf.float64, [None, 2])
    loss = tf.reduce_sum(tf.gather(var, ids) * coeff)
    optimizer = opt.LazyAdamOptimizer(0.1)
    train = optimizer.minimize(loss)
    ref_var, ref_m, ref_v = init.copy(), np.zeros_like(init), np.zeros_like(init)
    steps = [([0, 2, 0], np.array([[1.0, -1.0], [0.5, 2.0], [0.25, 0.5]])),
             ([1], np.array([[-3.0, 1.0]]))]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for t, (rows, grads) in enumerate(steps, start=1):
            sess.run(train, {ids: rows, coeff: grads})
            _lazy_adam_ref(ref_var, ref_m, ref_v, rows, grads, t)
            np.testing.assert_allclose(sess.run(var), ref_var, rtol=1e-12)
        np.testing.assert_allclose(sess.run(optimizer.get_slot(var, "m")), ref_m, rtol=1e-12)
        np.testing.assert_allclose(sess.run(optimizer.get_slot(var, "v")), ref_v, rtol=1e-12)
    np.testing.assert_array_equal(ref_var[3], init[3])
    # Plain Adam would have decayed row 0's moment at step 2; lazy Adam kept it.
    np.testing.assert_allclose(ref_m[0], 0.1 * np.array([1.25, -0.5]), rtol=1e-6)


def test_lazy_adam_dense_gradient_is_adam():
    a = tf.Variable([1.0, -2.0], dtype=tf.float64)
    b = tf.Variable([1.0, -2.0], dtype=tf.float64)
    lazy = opt.LazyAdamOptimizer(0.01).minimize(tf.reduce_sum(a * a))
    adam = tf.train.AdamOptimizer(0.01).minimize(tf.reduce_sum(b * b))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run([lazy, adam])
        np.testing.assert_allclose(*sess.run([a, b]), rtol=1e-12)


def test_moving_average_optimizer_swapping_saver(tmp_path):
    w = tf.Variable([1.0, 2.0], name="w")
    loss = tf.reduce_sum(w)  # gradient 1: w decreases by lr each step
    optimizer = opt.MovingAverageOptimizer(tf.train.GradientDescentOptimizer(1.0),
                                           average_decay=0.5)
    with pytest.raises(RuntimeError, match="Must call apply_gradients"):
        optimizer.swapping_saver()
    train = optimizer.minimize(loss)
    saver = optimizer.swapping_saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(2):
            sess.run(train)
        np.testing.assert_allclose(sess.run(w), [-1.0, 0.0])
        # zero-debiased EMA of the values after each step: [0, 1] then [-1, 0]
        debiased = (0.5 * 0.5 * np.array([0.0, 1.0]) + 0.5 * np.array([-1.0, 0.0])) / 0.75
        path = saver.save(sess, str(tmp_path / "avg.ckpt"))
    np.testing.assert_allclose(tf.train.load_variable(path, "w"), debiased, rtol=1e-6)


def test_adamw_decays_weights_before_adam_step():
    w = tf.Variable([2.0, -4.0], dtype=tf.float64)
    u = tf.Variable([2.0], dtype=tf.float64)
    optimizer = opt.AdamWOptimizer(weight_decay=0.1, learning_rate=0.01)
    train = optimizer.minimize(tf.reduce_sum(w) + tf.reduce_sum(u), decay_var_list=[w])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        # first Adam step moves each coordinate by lr * sign(grad) (bias-corrected m/sqrt(v))
        np.testing.assert_allclose(sess.run(w), np.array([2.0, -4.0]) * 0.9 - 0.01, rtol=1e-6)
        np.testing.assert_allclose(sess.run(u), [2.0 - 0.01], rtol=1e-6)
    momentum_w = opt.extend_with_decoupled_weight_decay(tf.train.MomentumOptimizer)
    assert issubclass(momentum_w, tf.train.MomentumOptimizer)
