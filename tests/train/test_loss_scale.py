"""Loss scaling (tf.train.experimental): the same updates as without it, non-finite steps
skipped with the scale halved, the scale doubled after `increment_period` good steps."""

import numpy as np
import pytest

import tensorflux as tf


def _graph(optimizer_fn):
    w = tf.Variable([1.0, 2.0], name="w")
    x = tf.placeholder(tf.float32, [2])
    loss = tf.reduce_sum(w * w * x)
    step = tf.train.get_or_create_global_step()
    optimizer = optimizer_fn()
    return w, x, step, optimizer, optimizer.minimize(loss, global_step=step)


@pytest.mark.parametrize("scale", [1, 128.0, "dynamic"])
def test_scaled_updates_equal_plain_ones(scale):
    results = []
    for wrap in (False, True):
        with tf.Graph().as_default(), tf.Session() as sess:
            def make(wrap=wrap):
                plain = tf.train.MomentumOptimizer(0.05, 0.9)
                return tf.train.experimental.MixedPrecisionLossScaleOptimizer(plain, scale) \
                    if wrap else plain
            w, x, step, _, train = _graph(make)
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train, {x: [1.0, 0.5]})
            results.append((sess.run(w), sess.run(step)))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-6)
    assert results[1][1] == results[0][1] == 3


def test_dynamic_scale_skips_bad_steps_and_grows_after_good_ones():
    with tf.Graph().as_default(), tf.Session() as sess:
        scale = tf.train.experimental.DynamicLossScale(initial_loss_scale=8, increment_period=2,
                                                       multiplier=2)
        w, x, step, optimizer, train = _graph(
            lambda: tf.train.experimental.MixedPrecisionLossScaleOptimizer(
                tf.train.GradientDescentOptimizer(0.1), scale))
        sess.run(tf.global_variables_initializer())
        seen = []
        for feed in ([1.0, 1.0], [np.inf, 1.0], [1.0, 1.0], [1.0, 1.0], [np.nan, 0.0]):
            before = sess.run(w)
            sess.run(train, {x: feed})
            changed = not np.array_equal(before, sess.run(w))
            seen.append((changed, float(sess.run(scale())), int(sess.run(step))))
    assert seen == [(True, 8.0, 1), (False, 4.0, 1), (True, 4.0, 2), (True, 8.0, 3),
                    (False, 4.0, 3)]


def test_sparse_gradients_are_unscaled():
    with tf.Graph().as_default(), tf.Session() as sess:
        table = tf.Variable(np.ones((4, 2), np.float32))
        loss = tf.reduce_sum(tf.gather(table, [1, 3]) * 3.0)
        optimizer = tf.train.experimental.MixedPrecisionLossScaleOptimizer(
            tf.train.GradientDescentOptimizer(1.0), 64)
        (grad, _), = optimizer.compute_gradients(loss, [table])
        assert isinstance(grad, tf.IndexedSlices)
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(grad.values), np.full((2, 2), 3.0))


def test_bad_arguments():
    with pytest.raises(ValueError, match="must be an instance of Optimizer"):
        tf.train.experimental.MixedPrecisionLossScaleOptimizer("sgd", "dynamic")
    with pytest.raises(ValueError, match="loss_scale cannot be None"):
        tf.train.experimental.MixedPrecisionLossScaleOptimizer(
            tf.train.GradientDescentOptimizer(0.1), None)
    with pytest.raises(ValueError, match="at least 1"):
        tf.train.experimental.FixedLossScale(0.5)
    with tf.Graph().as_default():
        wrapped = tf.train.experimental.enable_mixed_precision_graph_rewrite(
            tf.train.GradientDescentOptimizer(0.1))
        assert isinstance(wrapped.loss_scale, tf.train.experimental.DynamicLossScale)
        with pytest.raises(ValueError, match="must not already be"):
            tf.train.experimental.enable_mixed_precision_graph_rewrite(wrapped)
    tf.train.experimental.disable_mixed_precision_graph_rewrite()


@pytest.mark.parametrize("make", [lambda g: g, lambda g: {"a": [g], "b": (None, g)}])
def test_update_takes_any_nested_structure(make):
    with tf.Graph().as_default(), tf.Session() as sess:
        scale = tf.train.experimental.DynamicLossScale(initial_loss_scale=16, increment_period=1)
        grad = tf.placeholder(tf.float32, [3])
        update, finite = scale.update(make(grad))
        sess.run(tf.global_variables_initializer())
        values = []
        for feed in ([0.5, -2.0, 3.0], [1.0, np.nan, 0.0], [-np.inf, 1.0, 1.0]):
            ok, _ = sess.run([finite, update], {grad: feed})
            values.append((bool(ok), float(sess.run(scale()))))
    assert values == [(True, 32.0), (False, 16.0), (False, 8.0)]


def test_checkpoint_keeps_loss_scale_and_inner_slots(tmp_path):
    with tf.Graph().as_default(), tf.Session() as sess:
        w = tf.Variable([3.0, -1.0], name="w")
        scale = tf.train.experimental.DynamicLossScale(initial_loss_scale=4, increment_period=1)
        optimizer = tf.train.experimental.MixedPrecisionLossScaleOptimizer(
            tf.train.MomentumOptimizer(0.5, momentum=0.9), scale)
        train = optimizer.minimize(tf.reduce_sum(w * w), var_list=[w])
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        saved = sess.run([scale(), w])
        path = tf.train.Checkpoint(opt=optimizer, w=w).save(str(tmp_path / "c"), session=sess)
        keys = {name for name, _ in tf.train.list_variables(path)}
        assert {"opt/loss_scale/current_loss_scale/.ATTRIBUTES/VARIABLE_VALUE",
                "opt/loss_scale/good_steps/.ATTRIBUTES/VARIABLE_VALUE",
                "w/.OPTIMIZER_SLOT/opt/base_optimizer/momentum/.ATTRIBUTES/VARIABLE_VALUE"} <= keys
        sess.run(train)
        assert float(sess.run(scale())) == 16.0
        tf.train.Checkpoint(opt=optimizer, w=w).restore(path).run_restore_ops(sess)
        restored = sess.run([scale(), w])
    assert float(restored[0]) == float(saved[0]) == 8.0
    np.testing.assert_array_equal(restored[1], saved[1])
