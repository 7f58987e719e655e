"""tf.keras layers on graph tensors: values vs NumPy, weight names and shapes, input checks."""

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import tensorflux as tf

K = tf.keras


@pytest.fixture(autouse=True)
def _fresh_graph():
    K.backend.clear_session()
    yield
    K.backend.clear_session()


def _run(outputs, feed):
    return K.backend.get_session().run(outputs, feed)


def test_dense_value_names_and_shapes():
    x = K.Input((4,))
    layer = K.layers.Dense(3, activation="relu")
    y = layer(x)
    assert x.name == "input_1:0"
    assert [w.name for w in layer.weights] == ["dense/kernel:0", "dense/bias:0"]
    assert layer.kernel.get_shape().as_list() == [4, 3]
    assert y.get_shape().as_list() == [None, 3]
    kernel = np.arange(12, dtype=np.float32).reshape(4, 3) / 10 - 0.5
    layer.set_weights([kernel, np.array([0.1, -0.2, 0.3], np.float32)])
    data = np.random.RandomState(0).randn(5, 4).astype(np.float32)
    np.testing.assert_allclose(_run(y, {x: data}),
                               np.maximum(data @ kernel + [0.1, -0.2, 0.3], 0), rtol=1e-5)
    second = K.layers.Dense(2)
    second(x)
    assert second.name == "dense_1" and second.weights[0].name == "dense_1/kernel:0"
    limit = np.sqrt(6 / (4 + 3))
    fresh = K.layers.Dense(3)
    fresh(x)
    values = fresh.get_weights()
    assert np.all(np.abs(values[0]) <= limit) and np.all(values[1] == 0)


def test_dense_on_rank3_and_shared_calls():
    x = K.Input((2, 4))
    layer = K.layers.Dense(3, use_bias=False)
    y = layer(x)
    z = layer(K.Input((2, 4)))
    assert len(layer.weights) == 1 and y.get_shape().as_list() == [None, 2, 3]
    assert z.op.name.startswith("dense_1/")
    data = np.random.RandomState(1).randn(2, 2, 4).astype(np.float32)
    np.testing.assert_allclose(_run(y, {x: data}), data @ layer.get_weights()[0], rtol=1e-5)


def test_input_shape_mismatch_names_layer():
    layer = K.layers.Dense(3)
    layer(K.Input((4,)))
    with pytest.raises(ValueError, match='layer "dense".*expected axis -1.*value 4'):
        layer(K.Input((5,)))
    with pytest.raises(ValueError, match='layer "conv2d".*expected ndim=4, found ndim=2'):
        K.layers.Conv2D(2, 3)(K.Input((5,)))


def _conv2d_ref(x, w, stride=1):
    windows = sliding_window_view(x, w.shape[:2], axis=(1, 2))[:, ::stride, ::stride]
    return np.einsum("nhwcij,ijco->nhwo", windows, w)


def test_conv2d_and_conv1d_values():
    rng = np.random.RandomState(2)
    x = K.Input((6, 6, 2))
    conv = K.layers.Conv2D(4, 3, strides=1, activation="linear")
    y = conv(x)
    assert [w.name for w in conv.weights] == ["conv2d/kernel:0", "conv2d/bias:0"]
    assert conv.kernel.get_shape().as_list() == [3, 3, 2, 4]
    data = rng.randn(2, 6, 6, 2).astype(np.float32)
    w, b = conv.get_weights()
    np.testing.assert_allclose(_run(y, {x: data}), _conv2d_ref(data, w) + b, rtol=1e-4,
                               atol=1e-5)
    same = K.layers.Conv2D(3, (3, 3), padding="same", strides=2)(x)
    assert same.get_shape().as_list() == [None, 3, 3, 3]
    s = K.Input((7, 3))
    conv1 = K.layers.Conv1D(2, 3)
    y1 = conv1(s)
    seq = rng.randn(2, 7, 3).astype(np.float32)
    w1, b1 = conv1.get_weights()
    ref = np.einsum("ntck,kco->nto", sliding_window_view(seq, 3, axis=1), w1) + b1
    np.testing.assert_allclose(_run(y1, {s: seq}), ref, rtol=1e-4, atol=1e-5)
    causal = K.layers.Conv1D(2, 3, padding="causal")(s)
    assert causal.get_shape().as_list() == [None, 7, 2]


def test_pooling_flatten_reshape():
    rng = np.random.RandomState(3)
    x = K.Input((4, 4, 3))
    data = rng.randn(2, 4, 4, 3).astype(np.float32)
    blocks = data.reshape(2, 2, 2, 2, 2, 3)
    outs = [K.layers.MaxPooling2D()(x), K.layers.AveragePooling2D(2)(x),
            K.layers.GlobalAveragePooling2D()(x), K.layers.GlobalMaxPooling2D()(x),
            K.layers.Flatten()(x), K.layers.Reshape((8, 6))(x), K.layers.MaxPool2D(2, 1)(x)]
    got = _run(outs, {x: data})
    np.testing.assert_allclose(got[0], blocks.max(axis=(2, 4)))
    np.testing.assert_allclose(got[1], blocks.mean(axis=(2, 4)), rtol=1e-5)
    np.testing.assert_allclose(got[2], data.mean(axis=(1, 2)), rtol=1e-5)
    np.testing.assert_allclose(got[3], data.max(axis=(1, 2)))
    np.testing.assert_allclose(got[4], data.reshape(2, -1))
    np.testing.assert_allclose(got[5], data.reshape(2, 8, 6))
    assert got[6].shape == (2, 3, 3, 3)
    with pytest.raises(ValueError, match='Layer "reshape_1".*total size'):
        K.layers.Reshape((5, 5))(x)


def test_dropout_follows_learning_phase_and_training_argument():
    x = K.Input((1000,))
    layer = K.layers.Dropout(0.5)
    y = layer(x)
    forced = layer(x, training=True)
    data = np.ones((2, 1000), np.float32)
    np.testing.assert_array_equal(_run(y, {x: data}), data)
    train = _run(y, {x: data, K.backend.learning_phase(): True})
    assert set(np.unique(train)) <= {0.0, 2.0} and 0.4 < (train == 0).mean() < 0.6
    assert (_run(forced, {x: data}) == 0).mean() > 0.4
    np.testing.assert_array_equal(_run(layer(x, training=False), {x: data}), data)


def test_batch_normalization_training_inference_and_updates():
    x = K.Input((3,))
    bn = K.layers.BatchNormalization(momentum=0.5, epsilon=1e-3)
    y = bn(x)
    assert [w.name for w in bn.weights] == [
        "batch_normalization/gamma:0", "batch_normalization/beta:0",
        "batch_normalization/moving_mean:0", "batch_normalization/moving_variance:0"]
    assert len(bn.trainable_weights) == 2 and len(bn.updates) == 2
    assert set(bn.updates) <= set(tf.get_collection(tf.GraphKeys.UPDATE_OPS))
    data = np.random.RandomState(4).randn(8, 3).astype(np.float32) * 2 + 1
    np.testing.assert_allclose(_run(y, {x: data}), data / np.sqrt(1 + 1e-3), rtol=1e-5)
    mean, var = data.mean(0), data.var(0)
    phase = K.backend.learning_phase()
    train = _run([y] + bn.updates, {x: data, phase: True})[0]
    np.testing.assert_allclose(train, (data - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-5)
    moving_mean, moving_var = K.backend.batch_get_value([bn.moving_mean, bn.moving_variance])
    np.testing.assert_allclose(moving_mean, 0.5 * mean, rtol=1e-5)
    np.testing.assert_allclose(moving_var, 0.5 + 0.5 * var, rtol=1e-5)
    _run(bn.updates, {x: data})
    np.testing.assert_allclose(K.backend.get_value(bn.moving_mean), 0.5 * mean, rtol=1e-5)


def test_batch_normalization_conv_uses_unbiased_variance_for_moving_average():
    x = K.Input((2, 2, 2))
    bn = K.layers.BatchNormalization(momentum=0.0)
    bn(x, training=True)
    data = np.random.RandomState(5).randn(3, 2, 2, 2).astype(np.float32)
    _run(bn.updates, {x: data})
    np.testing.assert_allclose(K.backend.get_value(bn.moving_variance),
                               data.reshape(-1, 2).var(0, ddof=1), rtol=1e-5)


def test_embedding_activation_lambda_merge():
    ids = K.Input((3,), dtype="int32")
    emb = K.layers.Embedding(10, 4)
    e = emb(ids)
    assert emb.weights[0].name == "embedding/embeddings:0" and e.get_shape().as_list() == [
        None, 3, 4]
    table = emb.get_weights()[0]
    assert np.all(np.abs(table) <= 0.05)
    a, b = K.Input((2,)), K.Input((2,))
    outs = [K.layers.Activation("tanh")(a), K.layers.Lambda(lambda t: t * 3)(a),
            K.layers.add([a, b]), K.layers.Add()([a, b]), K.layers.Multiply()([a, b]),
            K.layers.concatenate([a, b]), K.layers.Concatenate(axis=1)([a, b]),
            K.layers.subtract([a, b]), K.layers.average([a, b]), K.layers.maximum([a, b])]
    av, bv = np.array([[1.0, -2.0]], np.float32), np.array([[0.5, 3.0]], np.float32)
    got = _run([e] + outs, {ids: [[1, 2, 9]], a: av, b: bv})
    np.testing.assert_allclose(got[0][0], table[[1, 2, 9]])
    refs = [np.tanh(av), av * 3, av + bv, av + bv, av * bv, np.hstack([av, bv]),
            np.hstack([av, bv]), av - bv, (av + bv) / 2, np.maximum(av, bv)]
    for value, ref in zip(got[1:], refs):
        np.testing.assert_allclose(value, ref, rtol=1e-6)
    with pytest.raises(ValueError, match='Layer "add_2" should be called on a list'):
        K.layers.Add()(a)
    with pytest.raises(ValueError, match="Concatenate layer requires inputs with matching"):
        K.layers.concatenate([K.Input((2, 3)), K.Input((4, 3))], axis=-1)


def _sigmoid_hard(z):
    return np.clip(0.2 * z + 0.5, 0, 1)


def _lstm_ref(x, kernel, recurrent, bias):
    units = recurrent.shape[0]
    h = np.zeros((x.shape[0], units))
    c = np.zeros_like(h)
    outs = []
    for t in range(x.shape[1]):
        z = x[:, t] @ kernel + h @ recurrent + bias
        i, f, g, o = np.split(z, 4, axis=1)
        c = _sigmoid_hard(f) * c + _sigmoid_hard(i) * np.tanh(g)
        h = _sigmoid_hard(o) * np.tanh(c)
        outs.append(h)
    return np.stack(outs, 1), h, c


def _gru_ref(x, kernel, recurrent, bias):
    units = recurrent.shape[0]
    h = np.zeros((x.shape[0], units))
    outs = []
    for t in range(x.shape[1]):
        xz, xr, xh = np.split(x[:, t] @ kernel + bias, 3, axis=1)
        rz, rr, rh = np.split(recurrent, 3, axis=1)
        z = _sigmoid_hard(xz + h @ rz)
        r = _sigmoid_hard(xr + h @ rr)
        h = z * h + (1 - z) * np.tanh(xh + (r * h) @ rh)
        outs.append(h)
    return np.stack(outs, 1), h


def test_lstm_matches_numpy_with_keras_weight_layout():
    x = K.Input((4, 3))
    layer = K.layers.LSTM(5, return_sequences=True, return_state=True)
    seq, h, c = layer(x)
    assert [w.name for w in layer.weights] == [
        "lstm/lstm_cell/kernel:0", "lstm/lstm_cell/recurrent_kernel:0", "lstm/lstm_cell/bias:0"]
    assert [w.get_shape().as_list() for w in layer.weights] == [[3, 20], [5, 20], [20]]
    bias = layer.get_weights()[2]
    np.testing.assert_array_equal(bias, np.r_[np.zeros(5), np.ones(5), np.zeros(10)])
    rng = np.random.RandomState(6)
    weights = [rng.randn(*w.shape) * 0.5 for w in layer.get_weights()]
    layer.set_weights(weights)
    data = rng.randn(2, 4, 3).astype(np.float32)
    got = _run([seq, h, c], {x: data})
    for value, ref in zip(got, _lstm_ref(data, *weights)):
        np.testing.assert_allclose(value, ref, rtol=1e-4, atol=1e-5)
    last = K.layers.LSTM(2)(x)
    assert last.get_shape().as_list() == [None, 2]


def test_gru_matches_numpy_and_trains():
    x = K.Input((4, 3))
    layer = K.layers.GRU(5, return_sequences=True)
    seq = layer(x)
    assert [w.get_shape().as_list() for w in layer.weights] == [[3, 15], [5, 15], [15]]
    assert layer.weights[0].name == "gru/gru_cell/kernel:0"
    rng = np.random.RandomState(7)
    weights = [rng.randn(*w.shape) * 0.5 for w in layer.get_weights()]
    layer.set_weights(weights)
    data = rng.randn(2, 4, 3).astype(np.float32)
    np.testing.assert_allclose(_run(seq, {x: data}), _gru_ref(data, *weights)[0], rtol=1e-4,
                               atol=1e-5)
    grads = tf.gradients(tf.reduce_sum(seq), layer.trainable_weights)
    assert all(g is not None for g in grads)


def test_get_set_weights_errors_and_regularizer_losses():
    layer = K.layers.Dense(2, kernel_regularizer=K.regularizers.l2(0.1))
    layer(K.Input((3,)))
    assert len(layer.losses) == 1
    kernel = np.ones((3, 2), np.float32)
    layer.set_weights([kernel, np.zeros(2)])
    np.testing.assert_allclose(K.backend.eval(layer.losses[0]), 0.1 * 6, rtol=1e-6)
    with pytest.raises(ValueError, match='Layer "dense" expects 2 weight'):
        layer.set_weights([kernel])
    with pytest.raises(ValueError, match="not compatible with provided weight shape"):
        layer.set_weights([np.ones((2, 2)), np.zeros(2)])
    assert layer.count_params() == 8


def test_1d_pooling_and_simple_rnn():
    rng = np.random.RandomState(8)
    s = K.Input((6, 2))
    data = rng.randn(3, 6, 2).astype(np.float32)
    outs = [K.layers.MaxPooling1D()(s), K.layers.AveragePooling1D(3)(s),
            K.layers.GlobalMaxPooling1D()(s), K.layers.GlobalAveragePooling1D()(s)]
    rnn = K.layers.SimpleRNN(4, return_sequences=True)
    outs.append(rnn(s))
    assert [w.name for w in rnn.weights] == ["simple_rnn/simple_rnn_cell/kernel:0",
                                             "simple_rnn/simple_rnn_cell/recurrent_kernel:0",
                                             "simple_rnn/simple_rnn_cell/bias:0"]
    kernel, recurrent, bias = (rng.randn(*w.shape) * 0.5 for w in rnn.get_weights())
    rnn.set_weights([kernel, recurrent, bias])
    got = _run(outs, {s: data})
    np.testing.assert_allclose(got[0], data.reshape(3, 3, 2, 2).max(2))
    np.testing.assert_allclose(got[1], data.reshape(3, 2, 3, 2).mean(2), rtol=1e-5)
    np.testing.assert_allclose(got[2], data.max(1))
    np.testing.assert_allclose(got[3], data.mean(1), rtol=1e-5)
    h, ref = np.zeros((3, 4)), []
    for t in range(6):
        h = np.tanh(data[:, t] @ kernel + h @ recurrent + bias)
        ref.append(h)
    np.testing.assert_allclose(got[4], np.stack(ref, 1), rtol=1e-4, atol=1e-5)


def test_get_config_and_from_config_round_trip():
    layer = K.layers.Dense(3, activation="relu", input_shape=(4,), use_bias=False)
    config = layer.get_config()
    assert config == {"units": 3, "activation": "relu", "use_bias": False, "name": "dense",
                      "trainable": True, "dtype": "float32", "batch_input_shape": (None, 4)}
    clone = K.layers.Dense.from_config(config)
    assert clone.units == 3 and clone.use_bias is False and not clone.built
    assert K.layers.MaxPooling2D(3).get_config()["pool_size"] == 3
    assert K.layers.Conv2D(2, 3, strides=2).get_config()["strides"] == 2
