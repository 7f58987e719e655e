"""tf.keras RNN(cell), SimpleRNNCell/LSTMCell/GRUCell, StackedRNNCells against NumPy steps
(the same programs matched TF 2.21's v1 Keras to 1e-7 with equal weights)."""

import numpy as np
import pytest

import tensorflux as tf

L = tf.keras.layers
RNG = np.random.RandomState(0)
X = RNG.rand(2, 5, 3).astype(np.float32)


def hard_sigmoid(x):
    return np.clip(0.2 * x + 0.5, 0.0, 1.0)


def np_simple(x, h, w):
    return [np.tanh(x @ w[0] + w[2] + h[0] @ w[1])]


def np_lstm(x, s, w):
    z = x @ w[0] + w[2] + s[0] @ w[1]
    i, f, c, o = np.split(z, 4, axis=1)
    c = hard_sigmoid(f) * s[1] + hard_sigmoid(i) * np.tanh(c)
    return [hard_sigmoid(o) * np.tanh(c), c]


def np_gru(x, s, w, reset_after=False):
    h = s[0]
    k, rk, b = w
    ib, rb = (b[0], b[1]) if reset_after else (b, np.zeros_like(b))
    xz, xr, xh = np.split(x @ k + ib, 3, axis=1)
    uz, ur, uh = np.split(rk, 3, axis=1)
    bz, br, bh = np.split(rb, 3)
    z = hard_sigmoid(xz + h @ uz + bz)
    r = hard_sigmoid(xr + h @ ur + br)
    cand = np.tanh(xh + r * (h @ uh + bh)) if reset_after else np.tanh(xh + (r * h) @ uh)
    return [z * h + (1 - z) * cand]


def run_np(step, w, x, n_states, units, mask=None, backwards=False):
    states = [np.zeros((x.shape[0], units), np.float32) for _ in range(n_states)]
    steps = range(x.shape[1] - 1, -1, -1) if backwards else range(x.shape[1])
    outs, prev = [], np.zeros((x.shape[0], units), np.float32)
    for t in steps:
        new = step(x[:, t], states, w)
        if mask is not None:
            m = mask[:, t:t + 1]
            new = [np.where(m, n, o) for n, o in zip(new, states)]
            out = np.where(m, new[0], prev)
        else:
            out = new[0]
        states, prev = new, out
        outs.append(out)
    return np.stack(outs, 1), states


def set_random(layer):
    ws = [np.random.RandomState(i).uniform(-1, 1, w.shape).astype(np.float32)
          for i, w in enumerate(layer.get_weights())]
    layer.set_weights(ws)
    return ws


CASES = [
    (lambda: L.SimpleRNNCell(4), np_simple, 1),
    (lambda: L.LSTMCell(4), np_lstm, 2),
    (lambda: L.GRUCell(4), np_gru, 1),
    (lambda: L.GRUCell(4, reset_after=True), lambda x, s, w: np_gru(x, s, w, True), 1),
]


@pytest.mark.parametrize("make,step,n_states", CASES)
@pytest.mark.parametrize("backwards", [False, True])
def test_rnn_cells_match_numpy_with_masks(make, step, n_states, backwards):
    inp = L.Input((5, 3))
    layer = L.RNN(make(), return_sequences=True, return_state=True, go_backwards=backwards)
    out = layer(L.Masking()(inp))
    assert out[0].get_shape().as_list() == [None, 5, 4]
    assert len(out) == 1 + n_states
    w = set_random(layer)
    xm = X.copy()
    xm[0, 3:] = 0.0
    got = tf.keras.backend.get_session().run(out, {inp: xm})
    mask = np.any(xm != 0, axis=-1)
    seq, states = run_np(step, w, xm, n_states, 4, mask, backwards)
    np.testing.assert_allclose(got[0], seq, rtol=1e-5, atol=1e-6)
    for g, s in zip(got[1:], states):
        np.testing.assert_allclose(g, s, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cell_cls,layer_cls", [(L.LSTMCell, L.LSTM), (L.GRUCell, L.GRU),
                                                (L.SimpleRNNCell, L.SimpleRNN)])
def test_rnn_of_cell_equals_the_fused_layer(cell_cls, layer_cls):
    inp = L.Input((5, 3))
    a, b = L.RNN(cell_cls(3)), layer_cls(3)
    oa, ob = a(inp), b(inp)
    assert [w.shape.as_list() for w in a.weights] == [w.shape.as_list() for w in b.weights]
    b.set_weights(set_random(a))
    va, vb = tf.keras.backend.get_session().run([oa, ob], {inp: X})
    np.testing.assert_allclose(va, vb, rtol=1e-5, atol=1e-6)


def test_lstm_cell_unit_forget_bias_and_initial_state_and_unroll():
    cell = L.LSTMCell(2)
    inp = L.Input((5, 3))
    h0, c0 = L.Input((2,)), L.Input((2,))
    layer = L.RNN(cell, unroll=True)
    out = layer(inp, initial_state=[h0, c0])
    sess = tf.keras.backend.get_session()
    np.testing.assert_array_equal(sess.run(cell.bias), [0, 0, 1, 1, 0, 0, 0, 0])
    w = set_random(layer)
    s0 = [RNG.rand(2, 2).astype(np.float32), RNG.rand(2, 2).astype(np.float32)]
    got = sess.run(out, {inp: X, h0: s0[0], c0: s0[1]})
    states = s0
    for t in range(5):
        states = np_lstm(X[:, t], states, w)
    np.testing.assert_allclose(got, states[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="initial state"):
        L.RNN(L.LSTMCell(2))(inp, initial_state=[h0])


class MinimalRNNCell(L.Layer):
    def __init__(self, units, **kwargs):
        self.units = units
        self.state_size = units
        super().__init__(**kwargs)

    def build(self, input_shape):
        self.kernel = self.add_weight("kernel", (input_shape[-1], self.units))
        self.recurrent_kernel = self.add_weight("recurrent_kernel", (self.units, self.units))
        self.built = True

    def call(self, inputs, states):
        output = tf.matmul(inputs, self.kernel) + tf.matmul(states[0], self.recurrent_kernel)
        return output, [output]


def test_custom_cell_and_stacked_cells():
    inp = L.Input((5, 3))
    custom = L.RNN(MinimalRNNCell(2), return_sequences=True)
    stacked = L.RNN([MinimalRNNCell(4), L.LSTMCell(2)], return_state=True)
    o1, o2 = custom(inp), stacked(inp)
    assert len(o2) == 3 and isinstance(o2[2], list) and len(o2[2]) == 2
    w1, w2 = set_random(custom), set_random(stacked)
    got1, got2 = tf.keras.backend.get_session().run([o1, o2], {inp: X})
    seq, _ = run_np(lambda x, s, w: [x @ w[0] + s[0] @ w[1]], w1, X, 1, 2)
    np.testing.assert_allclose(got1, seq, rtol=1e-5, atol=1e-6)
    first, (h1,) = run_np(lambda x, s, w: [x @ w[0] + s[0] @ w[1]], w2[:2], X, 1, 4)
    second, (h2, c2) = run_np(np_lstm, w2[2:], first, 2, 2)
    np.testing.assert_allclose(got2[0], second[:, -1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got2[1], h1, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got2[2][1], c2, rtol=1e-5, atol=1e-6)


def test_dropout_only_in_training():
    inp = L.Input((5, 3))
    plain_layer = L.RNN(L.GRUCell(3))
    drop_layer = L.RNN(L.GRUCell(3, dropout=0.5, recurrent_dropout=0.5))
    plain, test_out = plain_layer(inp), drop_layer(inp)
    train_out = drop_layer(inp, training=True)
    drop_layer.set_weights(set_random(plain_layer))
    sess = tf.keras.backend.get_session()
    p, te, tr = sess.run([plain, test_out, train_out], {inp: X})
    np.testing.assert_allclose(te, p, rtol=1e-6)
    assert not np.allclose(tr, p)


def test_errors_and_config_round_trip():
    with pytest.raises(ValueError, match="state_size"):
        L.RNN(L.Dense(2))
    with pytest.raises(ValueError, match="stateful"):
        L.RNN(L.LSTMCell(2), stateful=True)
    with pytest.raises(ValueError, match="implementation"):
        L.LSTMCell(2, implementation=3)
    layer = L.RNN([L.LSTMCell(3, dropout=0.2), L.GRUCell(2, reset_after=True)],
                  return_sequences=True, go_backwards=True)
    config = L.serialize(layer)
    assert config["class_name"] == "RNN"
    assert config["config"]["cell"]["class_name"] == "StackedRNNCells"
    copy = L.deserialize(config)
    assert copy.return_sequences and copy.go_backwards
    assert [type(c).__name__ for c in copy.cell.cells] == ["LSTMCell", "GRUCell"]
    assert copy.cell.cells[0].dropout == 0.2 and copy.cell.cells[1].reset_after
    with pytest.raises(ValueError, match="Unknown layer"):
        L.deserialize({"class_name": "NoSuchLayer", "config": {}})


def test_bidirectional_rnn_of_cell_and_json_round_trip():
    inp = L.Input((5, 3))
    a = L.Bidirectional(L.RNN(L.LSTMCell(4), return_sequences=True))
    b = L.Bidirectional(L.LSTM(4, return_sequences=True))
    oa, ob = a(inp), b(inp)
    assert len(a.weights) == 6 and "backward_rnn" in a.weights[3].name
    b.set_weights(set_random(a))
    va, vb = tf.keras.backend.get_session().run([oa, ob], {inp: X})
    np.testing.assert_allclose(va, vb, rtol=1e-6)
    model = tf.keras.Model(inp, L.RNN([L.GRUCell(2), L.SimpleRNNCell(3)])(inp))
    copy = tf.keras.models.model_from_json(model.to_json())
    cells = copy.layers[1].cell.cells
    assert [type(c).__name__ for c in cells] == ["GRUCell", "SimpleRNNCell"]
    assert copy.output.get_shape().as_list() == [None, 3]


class ConstantCell(L.Layer):
    """h_t = h_{t-1} + x_t * c (c a constant passed through RNN(constants=...))."""

    state_size = 3

    def call(self, inputs, states, constants):
        return states[0] + inputs * constants[0], [states[0] + inputs * constants[0]]


def test_constants_time_major_and_abstract_cell():
    inp, const = L.Input((5, 3)), L.Input((3,))
    out = L.RNN(ConstantCell(), return_sequences=True)(inp, constants=[const])
    c = RNG.rand(2, 3).astype(np.float32)
    got = tf.keras.backend.get_session().run(out, {inp: X, const: c})
    np.testing.assert_allclose(got, np.cumsum(X * c[:, None], axis=1), rtol=1e-5)
    steps = tf.placeholder(tf.float32, [5, None, 3])
    layer = L.RNN(L.SimpleRNNCell(2), return_sequences=True, time_major=True)
    seq = layer(steps)
    w = set_random(layer)
    got = tf.keras.backend.get_session().run(seq, {steps: X.transpose(1, 0, 2)})
    want, _ = run_np(np_simple, w, X, 1, 2)
    np.testing.assert_allclose(got, want.transpose(1, 0, 2), rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError):
        _ = L.AbstractRNNCell().state_size


def test_cudnn_layers_equal_the_sigmoid_cells_with_summed_biases():
    inp = L.Input((5, 3))
    fused = L.CuDNNLSTM(4, return_sequences=True, return_state=True)
    plain = L.RNN(L.LSTMCell(4, recurrent_activation="sigmoid"), return_sequences=True,
                  return_state=True)
    out_f, out_p = fused(inp), plain(inp)
    sess = tf.keras.backend.get_session()
    np.testing.assert_array_equal(sess.run(fused.bias)[16:24], [0, 0, 0, 0, 1, 1, 1, 1])
    k, rk, b = set_random(fused)
    plain.set_weights([k, rk, b[:16] + b[16:]])
    for a, c in zip(*sess.run([out_f, out_p], {inp: X})):
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-6)
    gru = L.CuDNNGRU(3, go_backwards=True)
    ref = L.RNN(L.GRUCell(3, recurrent_activation="sigmoid", reset_after=True),
                go_backwards=True)
    og, orf = gru(inp), ref(inp)
    k, rk, b = set_random(gru)
    assert b.shape == (18,)
    ref.set_weights([k, rk, b.reshape(2, 9)])
    a, c = sess.run([og, orf], {inp: X})
    np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="stateful"):
        L.CuDNNGRU(2, stateful=True)
    with pytest.raises(ValueError, match="initial state"):
        L.CuDNNLSTM(2)(inp, initial_state=[L.Input((2,))])


def np_conv2d(x, w, pad):
    """'valid' (pad 0) or 'same' (pad (k - 1) // 2 for odd k) stride-1 convolution."""
    if pad:
        x = np.pad(x, [(0, 0), (pad, pad), (pad, pad), (0, 0)])
    kh, kw = w.shape[:2]
    rows, cols = x.shape[1] - kh + 1, x.shape[2] - kw + 1
    out = np.zeros((x.shape[0], rows, cols, w.shape[3]), np.float32)
    for i in range(kh):
        for j in range(kw):
            out += x[:, i:i + rows, j:j + cols] @ w[i, j]
    return out


def test_conv_lstm_2d_against_numpy():
    x = RNG.rand(2, 3, 5, 4, 2).astype(np.float32)
    layer = L.ConvLSTM2D(3, 3, return_sequences=True)
    inp = L.Input(x.shape[1:])
    out = layer(inp)
    assert out.get_shape().as_list() == [None, 3, 3, 2, 3]
    k, rk, b = set_random(layer)
    got = tf.keras.backend.get_session().run(out, {inp: x})
    h = c = np.zeros((2, 3, 2, 3), np.float32)
    for t in range(3):
        z = np_conv2d(x[:, t], k, 0) + b + np_conv2d(h, rk, 1)
        zi, zf, zc, zo = np.split(z, 4, axis=-1)
        c = hard_sigmoid(zf) * c + hard_sigmoid(zi) * np.tanh(zc)
        h = hard_sigmoid(zo) * np.tanh(c)
        np.testing.assert_allclose(got[:, t], h, rtol=1e-5, atol=1e-5)
    assert L.ConvLSTM2D(2, 3).get_config()["filters"] == 2
    with pytest.raises(ValueError, match="data_format"):
        L.ConvLSTM2D(2, 3, data_format="channels_first")
