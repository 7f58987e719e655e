"""tf.keras.mixed_precision.experimental (Policy, LossScaleOptimizer) and
enable_mixed_precision_graph_rewrite on a Keras optimizer."""

import numpy as np
import pytest

import tensorflux as tf

mp = tf.keras.mixed_precision.experimental


def _train(make_opt, steps=3, x_scale=1.0):
    rng = np.random.RandomState(0)
    x = rng.randn(16, 3).astype(np.float32) * x_scale
    y = x.dot(np.array([[1.0], [-1.0], [2.0]], np.float32))
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.keras.backend.set_session(sess)
        model = tf.keras.Sequential([tf.keras.layers.Dense(
            1, input_shape=(3,), kernel_initializer=tf.keras.initializers.Constant(0.5))])
        opt = make_opt()
        model.compile(opt, "mse")
        for _ in range(steps):
            model.train_on_batch(x, y)
        return model.get_weights(), opt


def test_fixed_scale_matches_plain_optimizer():
    plain, _ = _train(lambda: tf.keras.optimizers.SGD(0.1))
    scaled, opt = _train(lambda: mp.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), 128))
    for a, b in zip(plain, scaled):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert isinstance(opt.loss_scale, tf.train.experimental.FixedLossScale)
    # and not a no-op: the weights moved from the 0.5 init
    assert not np.allclose(plain[0], 0.5)


def test_graph_rewrite_wraps_keras_optimizer_and_skips_overflow_steps():
    wrapped = tf.train.experimental.enable_mixed_precision_graph_rewrite(
        tf.keras.optimizers.SGD(0.1))
    try:
        assert isinstance(wrapped, mp.LossScaleOptimizer)
        plain, _ = _train(lambda: tf.keras.optimizers.SGD(0.1))
        dyn, opt = _train(lambda: tf.train.experimental.enable_mixed_precision_graph_rewrite(
            tf.keras.optimizers.SGD(0.1)))
        for a, b in zip(plain, dyn):  # 2**15 * these gradients stays finite
            np.testing.assert_allclose(a, b, rtol=1e-5)
        # gradients that overflow once scaled: the step is skipped, weights stay at init
        huge, _ = _train(lambda: tf.train.experimental.enable_mixed_precision_graph_rewrite(
            tf.keras.optimizers.SGD(1e-30)), steps=1, x_scale=1e17)
        np.testing.assert_array_equal(huge[0], np.full((3, 1), 0.5, np.float32))
        with pytest.raises(ValueError, match="tf.keras.optimizers.Optimizer"):
            tf.train.experimental.enable_mixed_precision_graph_rewrite("sgd")
        with pytest.raises(ValueError, match="already loss-scaled"):
            mp.LossScaleOptimizer(wrapped, "dynamic")
    finally:
        tf.train.experimental.disable_mixed_precision_graph_rewrite()


def test_policy_names_and_v1_global_policy():
    p = mp.Policy("mixed_float16")
    assert (p.compute_dtype, p.variable_dtype, p.should_cast_variables) == \
        ("float16", "float32", True)
    assert mp.Policy("float64").compute_dtype == "float64"
    assert mp.global_policy().name == "infer"
    mp.set_policy("infer")
    with pytest.raises(ValueError, match="V2 dtype"):
        mp.set_policy("mixed_float16")
    with pytest.raises(ValueError, match="Valid policies"):
        mp.Policy("float17")
    with pytest.raises(TypeError):
        mp.Policy(16)
