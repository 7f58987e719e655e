"""tf.keras.optimizers.schedules / tf.keras.experimental decays: values per step against the
closed forms, and Keras optimizers that take a schedule and count `iterations`."""

import math

import numpy as np
import pytest

import tensorflux as tf

schedules = tf.keras.optimizers.schedules


def _values(schedule, steps):
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int64, [])
        lr = schedule(step)
        with tf.Session() as sess:
            return [float(sess.run(lr, {step: s})) for s in steps]


def test_schedule_values():
    steps = [0, 5, 10, 25]
    np.testing.assert_allclose(
        _values(schedules.ExponentialDecay(0.1, 10, 0.5), steps),
        [0.1 * 0.5 ** (s / 10) for s in steps], rtol=1e-6)
    np.testing.assert_allclose(
        _values(schedules.ExponentialDecay(0.1, 10, 0.5, staircase=True), steps),
        [0.1 * 0.5 ** (s // 10) for s in steps], rtol=1e-6)
    np.testing.assert_allclose(
        _values(schedules.InverseTimeDecay(1.0, 5, 0.5), steps),
        [1.0 / (1 + 0.5 * s / 5) for s in steps], rtol=1e-6)
    np.testing.assert_allclose(
        _values(schedules.PolynomialDecay(1.0, 20, end_learning_rate=0.0), steps),
        [1.0 - min(s, 20) / 20 for s in steps], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(
        _values(schedules.PiecewiseConstantDecay([5, 10], [1.0, 0.5, 0.1]), [0, 5, 6, 11]),
        [1.0, 1.0, 0.5, 0.1], rtol=1e-6)
    np.testing.assert_allclose(
        _values(tf.keras.experimental.CosineDecay(1.0, 20, alpha=0.1), steps),
        [0.9 * 0.5 * (1 + math.cos(math.pi * min(s, 20) / 20)) + 0.1 for s in steps],
        rtol=1e-6)
    restarts = _values(tf.keras.experimental.CosineDecayRestarts(1.0, 10), [0, 10, 11])
    assert restarts[0] == pytest.approx(1.0) and restarts[1] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="1 less"):
        schedules.PiecewiseConstantDecay([1, 2], [1.0])
    with pytest.raises(TypeError, match="missing"):
        schedules.ExponentialDecay(0.1)


def test_serialize_round_trip():
    schedule = schedules.ExponentialDecay(0.1, 100, 0.9, staircase=True)
    config = schedules.serialize(schedule)
    assert config == {"class_name": "ExponentialDecay", "config": {
        "initial_learning_rate": 0.1, "decay_steps": 100, "decay_rate": 0.9,
        "staircase": True, "name": None}}
    again = schedules.deserialize(config)
    assert again.decay_steps == 100 and again.staircase
    with pytest.raises(ValueError, match="Unknown decay"):
        schedules.deserialize({"class_name": "Nope", "config": {}})


def test_keras_optimizer_follows_a_schedule_and_counts_iterations():
    schedule = schedules.PiecewiseConstantDecay([1], [0.1, 0.0])   # steps 0 and 1 at 0.1
    x = np.ones((4, 1), np.float32)
    with tf.Graph().as_default():
        model = tf.keras.Sequential([tf.keras.layers.Dense(
            1, use_bias=False, kernel_initializer="zeros", input_shape=(1,))])
        optimizer = tf.keras.optimizers.SGD(learning_rate=schedule)
        model.compile(optimizer, "mse")
        model.fit(x, x, batch_size=4, epochs=4, verbose=0)
        sess = tf.keras.backend.get_session()
        kernel = float(sess.run(model.layers[0].kernel)[0, 0])
        iterations = int(sess.run(optimizer.iterations))
    # w <- w + 0.1 * 2 (1 - w): 0 -> 0.2 -> 0.36, then a zero rate keeps it
    assert iterations == 4
    assert kernel == pytest.approx(0.36, rel=1e-5)
    assert optimizer.get_config()["learning_rate"]["class_name"] == "PiecewiseConstantDecay"


def test_optimizer_serialize_round_trip():
    adam = tf.keras.optimizers.Adam(0.01, beta_1=0.8)
    config = tf.keras.optimizers.serialize(adam)
    assert config == {"class_name": "Adam", "config": {
        "beta_1": 0.8, "beta_2": 0.999, "epsilon": 1e-07, "learning_rate": 0.01, "name": "Adam"}}
    again = tf.keras.optimizers.get(config)
    assert isinstance(again, tf.keras.optimizers.Adam) and again.beta_1 == 0.8
    scheduled = tf.keras.optimizers.SGD(learning_rate=schedules.ExponentialDecay(0.1, 10, 0.5))
    back = tf.keras.optimizers.deserialize(tf.keras.optimizers.serialize(scheduled))
    assert isinstance(back.learning_rate, schedules.ExponentialDecay)
    assert back.learning_rate.decay_steps == 10
    with pytest.raises(ValueError, match="Unknown optimizer"):
        tf.keras.optimizers.deserialize({"class_name": "Lion", "config": {}})
