"""tf.keras.experimental.PeepholeLSTMCell (against a NumPy peephole LSTM) and
SequenceFeatures (against sequence_input_layer)."""

import numpy as np

import tensorflux as tf


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def test_peephole_lstm_cell_matches_numpy():
    rng = np.random.RandomState(0)
    x = rng.randn(2, 5, 3).astype(np.float32)
    with tf.Graph().as_default():
        cell = tf.keras.experimental.PeepholeLSTMCell(4, recurrent_activation="sigmoid")
        out = tf.keras.layers.RNN(cell, return_sequences=True)(tf.constant(x))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got, kernel, rec, bias, wi, wf, wo = sess.run(
                [out, cell.kernel, cell.recurrent_kernel, cell.bias,
                 cell.input_gate_peephole_weights, cell.forget_gate_peephole_weights,
                 cell.output_gate_peephole_weights])
    assert {w.name.split("/")[-1] for w in cell.weights} >= {
        "forget_gate_peephole_weights:0", "input_gate_peephole_weights:0",
        "output_gate_peephole_weights:0"}
    h, c = np.zeros((2, 4)), np.zeros((2, 4))
    want = []
    for t in range(5):
        z = x[:, t] @ kernel + h @ rec + bias
        zi, zf, zc, zo = np.split(z, 4, axis=1)
        i = _sigmoid(zi + wi * c)
        f = _sigmoid(zf + wf * c)
        c = f * c + i * np.tanh(zc)
        h = _sigmoid(zo + wo * c) * np.tanh(c)
        want.append(h)
    np.testing.assert_allclose(got, np.stack(want, 1), rtol=1e-5, atol=1e-6)


def test_sequence_features_equals_sequence_input_layer():
    fc = tf.feature_column
    tokens = fc.sequence_categorical_column_with_identity("tokens", num_buckets=6)
    column = fc.embedding_column(tokens, dimension=3)
    sparse = tf.SparseTensorValue(indices=[[0, 0], [0, 1], [1, 0]], values=[1, 4, 2],
                                  dense_shape=[2, 2])
    with tf.Graph().as_default():
        layer = tf.keras.experimental.SequenceFeatures([column])
        features = {"tokens": tf.SparseTensor(*sparse)}
        seq, length = layer(features)
        seq2, _ = layer(features)   # reuses the embedding
        assert [w.name for w in layer.weights] == [
            "sequence_features/tokens_embedding/embedding_weights:0"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got, got_len, again, table = sess.run([seq, length, seq2, layer.weights[0]])
    np.testing.assert_array_equal(got_len, [2, 1])
    np.testing.assert_allclose(got[0], table[[1, 4]], rtol=1e-6)
    np.testing.assert_allclose(got[1, 0], table[2], rtol=1e-6)
    np.testing.assert_allclose(again, got)
