"""weighted_moving_average against a NumPy recurrence; ExponentialMovingAverage of a plain
tensor (zero start, device scope, restored under its own name); piecewise_constant's dtype
rules (no silent float -> int boundaries)."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.train import moving_averages


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def test_weighted_moving_average_matches_recurrence():
    value = tf.placeholder(tf.float32, [2])
    weight = tf.placeholder(tf.float32, [2])
    avg = moving_averages.weighted_moving_average(value, 0.75, weight, name="wma")
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["wma/value_x_weight", "wma/weight"]
    assert not tf.trainable_variables()
    num, den = np.zeros(2), np.zeros(2)
    rng = np.random.RandomState(3)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(4):
            v, w = rng.uniform(-2, 2, 2), rng.uniform(0.5, 3, 2)
            num = 0.75 * num + 0.25 * v * w
            den = 0.75 * den + 0.25 * w
            got = sess.run(avg, {value: v, weight: w})
            np.testing.assert_allclose(got, num / den, rtol=1e-5)
    with pytest.raises(ValueError, match="fully defined shape for value"):
        moving_averages.weighted_moving_average(tf.placeholder(tf.float32, [None]), 0.5, 1.0)


def test_ema_of_a_tensor_and_a_raw_variable():
    with tf.device("/job:ps"):
        v = tf.Variable([2.0, 4.0], name="v")
    with tf.device("/job:raw"):
        raw = state_ops.variable_op([2], tf.float32, name="raw")
    total = tf.add(v, 1.0, name="total")
    ema = tf.train.ExponentialMovingAverage(0.5, name="avg")
    with tf.device("/job:worker"):
        update = ema.apply([v, raw, total])
    assert ema.average(v).device == "/job:ps"
    assert ema.average(raw).device == "/job:raw"
    assert ema.average(total).device == "/job:worker"
    restore = ema.variables_to_restore()
    assert restore["v/avg"] is v
    assert restore["total/avg"] is ema.average(total)
    assert restore["raw/avg"] is ema.average(raw)
    config = tf.ConfigProto(allow_soft_placement=True)  # the jobs above are not in process
    with tf.Session(config=config) as sess:
        sess.run(tf.assign(raw, [1.0, 1.0]))
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(ema.average(total)), [0.0, 0.0])
        sess.run(update)
        np.testing.assert_allclose(sess.run(ema.average(total)), [1.5, 2.5])
        np.testing.assert_allclose(sess.run(ema.average(raw)), [0.5, 0.5])


def test_variable_op_set_shape():
    assert state_ops.variable_op([3], tf.int32).get_shape().as_list() == [3]
    assert state_ops.variable_op([3], tf.int32, set_shape=False).get_shape().ndims is None


def test_piecewise_constant_dtype_rules():
    step = tf.placeholder(tf.int64, [])
    lr = tf.train.piecewise_constant(step, [5, 9], [0.3, 0.2, 0.1])  # int32 widens to int64
    with tf.Session() as sess:
        assert [float(sess.run(lr, {step: s})) for s in (5, 6, 10)] == pytest.approx(
            [0.3, 0.2, 0.1])
    with pytest.raises(ValueError, match=r"Boundaries \(float32\) must have the same dtype as "
                                         r"x \(int32\)"):
        tf.train.piecewise_constant(tf.constant(0), [-1.0, 1.0], [1, 2, 3])
    with pytest.raises(ValueError, match=r"Values must have elements all with the same dtype "
                                         r"\(float32 vs int32\)"):
        tf.train.piecewise_constant(tf.constant(0.0), [-1.0, 1.0], [1.0, 2, 3])
