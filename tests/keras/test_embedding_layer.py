"""tf.keras.layers.Embedding: argument checks, output shapes from input_length, building
inside a Sequential model, and Model.from_config."""

import numpy as np
import pytest

import tensorflux as tf


@pytest.mark.parametrize("dims", [(0, 3), (5, 0), (-1, 2)])
def test_nonpositive_dimensions_are_rejected(dims):
    with pytest.raises(ValueError, match="must be positive"):
        tf.keras.layers.Embedding(*dims)


@pytest.mark.parametrize("length, shape, expected", [
    (None, (7, 3), [7, 3, 5]),
    (3, (None, 3), [None, 3, 5]),
    ((None, 4), (2, 6, 4), [2, 6, 4, 5]),
    ((2, None), (2, None, None), [2, 2, None, 5]),
])
def test_output_shape_follows_input_length(length, shape, expected):
    layer = tf.keras.layers.Embedding(9, 5, input_length=length)
    assert layer.compute_output_shape(shape).as_list() == expected


@pytest.mark.parametrize("length, shape", [(4, (2, 3)), ((1, 2), (2, 3))])
def test_output_shape_rejects_a_mismatched_input_length(length, shape):
    with pytest.raises(ValueError, match="input_length"):
        tf.keras.layers.Embedding(9, 5, input_length=length).compute_output_shape(shape)


def test_weights_can_be_set_once_in_a_sequential_model():
    with tf.Graph().as_default():
        layer = tf.keras.layers.Embedding(3, 2)
        model = tf.keras.models.Sequential([layer])
        table = np.array([[0.5, -1.0], [2.0, 3.0], [-4.0, 0.25]], np.float32)
        layer.set_weights([table])
        ids = np.array([[2, 0, 1, 1]], np.int32)
        np.testing.assert_array_equal(model.predict(ids), table[ids])


def test_functional_model_round_trips_through_from_config():
    with tf.Graph().as_default():
        x = tf.keras.layers.Input(shape=(4,), dtype="int32")
        y = tf.keras.layers.Embedding(6, 3, mask_zero=True)(x)
        model = tf.keras.models.Model(x, y)
        again = tf.keras.models.Model.from_config(model.get_config(), None)
        again.set_weights(model.get_weights())
        ids = np.array([[1, 5, 0, 3], [0, 0, 2, 4]], np.int32)
        np.testing.assert_array_equal(again.predict(ids), model.predict(ids))
        assert [w.shape.as_list() for w in again.weights] == [[6, 3]]


def test_weights_argument_sets_values_when_built_and_stays_out_of_config():
    table = np.array([[0.0, 1.0], [2.0, -3.0], [4.5, 5.0]], np.float32)
    with tf.Graph().as_default():
        layer = tf.keras.layers.Embedding(3, 2, weights=[table])
        x = tf.keras.layers.Input(shape=(2,), dtype="int32")
        model = tf.keras.models.Model(x, layer(x))
        ids = np.array([[2, 1], [0, 2]], np.int32)
        np.testing.assert_array_equal(model.predict(ids), table[ids])
        assert "weights" not in layer.get_config()
        dense = tf.keras.layers.Dense(1, weights=[np.full((2, 1), 2.0), np.array([0.5])])
        y = dense(tf.constant([[1.0, 3.0]]))
        np.testing.assert_allclose(tf.keras.backend.get_value(y), [[8.5]])
    with pytest.raises(ValueError):
        with tf.Graph().as_default():
            tf.keras.layers.Embedding(3, 2, weights=[table[:2]])(tf.constant([[0]]))
