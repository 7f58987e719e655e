"""A SUM loss is summed across replicas, a mean loss averaged: tf.losses and the Keras
loss helpers record their reduction for `get_loss_reduction` (TF 1.15)."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.distribute import distribute_lib
from tensorflux.keras import loss_reduction as keras_reduction


@pytest.mark.parametrize("reduction, expected", [
    (tf.losses.Reduction.SUM, "SUM"),
    (tf.losses.Reduction.MEAN, "MEAN"),
    (tf.losses.Reduction.SUM_BY_NONZERO_WEIGHTS, "MEAN"),
])
def test_v1_losses_record_their_reduction(reduction, expected):
    with tf.Graph().as_default():
        assert distribute_lib.get_loss_reduction().name == "MEAN"  # nothing recorded yet
        tf.losses.mean_squared_error([[1.0]], [[2.0]], reduction=reduction)
        assert distribute_lib.get_loss_reduction().name == expected


def test_keras_losses_record_their_reduction():
    with tf.Graph().as_default():
        keras_reduction.compute_weighted_loss(tf.constant([1.0, 2.0]),
                                              reduction=keras_reduction.Reduction.SUM)
        assert distribute_lib.get_loss_reduction().name == "SUM"
        keras_reduction.compute_weighted_loss(tf.constant([1.0, 2.0]))
        assert distribute_lib.get_loss_reduction().name == "MEAN"


def _regressor_prediction(devices, steps):
    strategy = tf.distribute.MirroredStrategy(devices)
    config = tf.estimator.RunConfig(
        train_distribute=strategy,
        session_config=tf.ConfigProto(device_count={"CPU": len(devices)}))
    est = tf.estimator.LinearRegressor([tf.feature_column.numeric_column("x")],
                                       optimizer="SGD", config=config)

    def input_fn():
        return tf.data.Dataset.from_tensors(({"x": [1.0]}, [1.0])).repeat(100).batch(2)

    est.train(input_fn, steps=steps)
    return est.get_variable_value("linear/linear_model/x/weights")[0, 0]


def test_sum_loss_gradients_add_up_over_two_replicas():
    # LinearRegressor: loss = SUM of squared errors over the per-replica batch (2 rows of
    # x = 1, y = 1), SGD lr 0.2. w and b start at 0 and move together: e = w + b - 1.
    # one replica: w -= 0.2 * 2 * 2 * e per step; two replicas sum two such gradients.
    def numpy_w(replicas, steps):
        w = b = 0.0
        for _ in range(steps):
            e = w + b - 1.0
            g = replicas * 2 * 2 * e
            w, b = w - 0.2 * g, b - 0.2 * g
        return w
    got1 = _regressor_prediction(["/cpu:0"], 2)
    got2 = _regressor_prediction(["/cpu:0", "/cpu:1"], 2)
    np.testing.assert_allclose(got1, numpy_w(1, 2), rtol=1e-5)
    np.testing.assert_allclose(got2, numpy_w(2, 2), rtol=1e-5)
