"""Keras masks: Embedding(mask_zero) and Masking produce them, recurrent layers skip masked
steps, layers that support masking pass them on; recurrent dropout."""

import numpy as np
import pytest

import tensorflux as tf

L = tf.keras.layers
IDS = np.array([[3, 5, 2, 0, 0], [1, 4, 0, 0, 0]])


@pytest.fixture(autouse=True)
def fresh_session():
    tf.keras.backend.clear_session()
    yield
    tf.keras.backend.clear_session()


@pytest.mark.parametrize("cls", [L.LSTM, L.GRU, L.SimpleRNN])
def test_masked_steps_keep_the_state_and_repeat_the_output(cls):
    tf.set_random_seed(1)
    inp = L.Input((None,), dtype="int32")
    emb = L.Embedding(10, 4, mask_zero=True)(inp)
    layer = cls(3, return_sequences=True)
    seq = layer(emb)
    last = cls(3)(emb)
    assert seq._keras_mask is not None
    model = tf.keras.Model(inp, [seq, last])
    sess = tf.keras.backend.get_session()
    full, final = sess.run(model.outputs, {inp: IDS})
    np.testing.assert_allclose(full[0, 3], full[0, 2])
    np.testing.assert_allclose(full[1, 4], full[1, 1])
    # The padded steps change nothing: the same as the unpadded prefix.
    prefix = sess.run(seq, {inp: IDS[:1, :3]})
    np.testing.assert_allclose(prefix[0], full[0, :3], rtol=1e-5, atol=1e-6)
    assert final.shape == (2, 3)


def test_masking_layer_and_mask_passing_layers():
    data = np.array([[[1.0, 2.0], [0.0, 0.0], [3.0, 0.0]]], np.float32)
    inp = L.Input((3, 2))
    masked = L.Masking(mask_value=0.0)(inp)
    dense = L.Dense(2)(masked)
    dropped = L.Dropout(0.5)(dense)
    flat = L.Flatten()(L.Reshape((3, 2))(dropped))
    sess = tf.keras.backend.get_session()
    mask, out = sess.run([dropped._keras_mask, masked], {inp: data})
    assert mask.tolist() == [[True, False, True]]
    np.testing.assert_allclose(out, data)
    assert getattr(flat, "_keras_mask", None) is None  # layers without masking drop it


def test_lambda_mask_argument():
    inp = L.Input((3,))
    out = L.Lambda(lambda x: x * 2, mask=lambda x, m: tf.greater(x, 0.0))(inp)
    sess = tf.keras.backend.get_session()
    assert sess.run(out._keras_mask, {inp: [[1.0, -1.0, 2.0]]}).tolist() == [[True, False, True]]


def test_explicit_mask_argument_wins():
    inp = L.Input((4, 2))
    mask = L.Input((4,), dtype="bool")
    out = L.SimpleRNN(2, return_sequences=True, kernel_initializer="ones",
                      recurrent_initializer="zeros", activation="linear")(inp, mask=mask)
    sess = tf.keras.backend.get_session()
    data = np.ones((1, 4, 2), np.float32)
    got = sess.run(out, {inp: data, mask: [[True, False, True, True]]})
    np.testing.assert_allclose(got[0], [[2, 2], [2, 2], [2, 2], [2, 2]])


@pytest.mark.parametrize("cls", [L.LSTM, L.GRU, L.SimpleRNN])
def test_dropout_only_while_training(cls):
    tf.set_random_seed(3)
    data = np.random.RandomState(0).randn(4, 6, 5).astype(np.float32)
    inp = L.Input((6, 5))
    dropped = cls(4, dropout=0.5, recurrent_dropout=0.5)(inp)
    plain_layer = cls(4)
    plain = plain_layer(inp)
    model = tf.keras.Model(inp, [dropped, plain])
    model.layers[2].set_weights(model.layers[1].get_weights())
    sess = tf.keras.backend.get_session()
    phase = tf.keras.backend.learning_phase()
    test_dropped, test_plain = sess.run(model.outputs, {inp: data, phase: False})
    np.testing.assert_allclose(test_dropped, test_plain, rtol=1e-5, atol=1e-6)
    train_dropped, train_plain = sess.run(model.outputs, {inp: data, phase: True})
    np.testing.assert_allclose(train_plain, test_plain, rtol=1e-6)
    assert not np.allclose(train_dropped, train_plain)


def test_lstm_with_dropout_trains_in_fit():
    rng = np.random.RandomState(0)
    x = rng.randint(1, 10, size=(32, 6))
    x[:, 4:] = 0
    y = (x[:, 0] > 5).astype(np.float32)
    model = tf.keras.Sequential([L.Embedding(10, 8, mask_zero=True, input_length=6),
                                 L.LSTM(8, dropout=0.2, recurrent_dropout=0.2),
                                 L.Dense(1, activation="sigmoid")])
    model.compile(tf.train.AdamOptimizer(0.05), "binary_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, epochs=8, batch_size=8, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    with pytest.raises(ValueError, match="stateful"):
        L.LSTM(2, stateful=True)


def test_masking_output_shape_is_its_input_shape():
    layer = tf.keras.layers.Masking(-1.0)
    assert layer.compute_output_shape((None, 7, 3)).as_list() == [None, 7, 3]


class _EchoMask(tf.keras.layers.Layer):
    """Copies its inputs; its mask is 2 * the mask it was given (or -1 without one)."""

    def call(self, inputs, mask=None):
        return inputs * 1.0

    def compute_mask(self, inputs, mask=None):
        return tf.constant(-1.0) if mask is None else 2.0 * mask


def test_a_mask_passed_positionally_reaches_compute_mask():
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.ones((2, 3))
        given = tf.constant([1.0, 0.0])
        by_position = _EchoMask()(x, given)
        by_keyword = _EchoMask()(x, mask=given)
        without = _EchoMask()(x)
        got = sess.run([by_position._keras_mask, by_keyword._keras_mask, without._keras_mask])
    np.testing.assert_array_equal(got[0], [2.0, 0.0])
    np.testing.assert_array_equal(got[1], [2.0, 0.0])
    assert got[2] == -1.0
