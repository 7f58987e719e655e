"""tf.contrib.rnn cells and stacked RNNs against NumPy step functions."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.contrib import rnn

RNG = np.random.RandomState(7)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _values(sess):
    return {v.op.name: sess.run(v) for v in tf.global_variables()}


def _lstm_step(x, c, h, kernel, bias, forget_bias=1.0, peep=None, clip=None):
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ kernel + bias, 4, axis=1)
    if peep is None:
        new_c = c * sigmoid(f + forget_bias) + sigmoid(i) * np.tanh(j)
    else:
        wi, wf, _ = peep
        new_c = c * sigmoid(f + forget_bias + wf * c) + sigmoid(i + wi * c) * np.tanh(j)
    if clip is not None:
        new_c = np.clip(new_c, -clip, clip)
    gate_o = o + peep[2] * new_c if peep is not None else o
    return new_c, np.tanh(new_c) * sigmoid(gate_o)


@pytest.mark.parametrize("use_peephole", [False, True])
def test_lstm_block_cell_equals_lstm_cell_with_the_same_weights(use_peephole):
    xs = [RNG.randn(2, 3) for _ in range(3)]
    with tf.Graph().as_default():
        inputs = [tf.constant(x) for x in xs]
        with tf.variable_scope("block"):
            block_out, block_state = tf.nn.static_rnn(
                rnn.LSTMBlockCell(4, cell_clip=0.5, use_peephole=use_peephole), inputs,
                dtype=tf.float64)
        with tf.variable_scope("core"):
            core_out, core_state = tf.nn.static_rnn(
                tf.nn.rnn_cell.LSTMCell(4, cell_clip=0.5, use_peepholes=use_peephole), inputs,
                dtype=tf.float64)
        names = sorted(v.op.name for v in tf.global_variables())
        expected = ["bias", "kernel"] + (["w_f_diag", "w_i_diag", "w_o_diag"]
                                         if use_peephole else [])
        assert names == sorted([f"block/rnn/lstm_cell/{n}" for n in expected]
                               + [f"core/rnn/lstm_cell/{n}" for n in expected])
        copies = [tf.assign(core, block) for core, block in
                  zip(sorted(tf.global_variables(), key=lambda v: v.op.name)[len(expected):],
                      sorted(tf.global_variables(), key=lambda v: v.op.name))]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.random_normal_initializer(seed=1)([1]))  # unrelated op: no effect
            sess.run(copies)
            weights = _values(sess)
            got_block, got_core, final = sess.run([block_out, core_out, block_state])
    np.testing.assert_allclose(got_block, got_core, rtol=1e-12)
    prefix = "block/rnn/lstm_cell/"
    peep = tuple(weights[prefix + n] for n in ("w_i_diag", "w_f_diag", "w_o_diag")) \
        if use_peephole else None
    c = h = np.zeros((2, 4))
    for t, x in enumerate(xs):
        c, h = _lstm_step(x, c, h, weights[prefix + "kernel"], weights[prefix + "bias"],
                          peep=peep, clip=0.5)
        np.testing.assert_allclose(got_block[t], h, rtol=1e-10)
    np.testing.assert_allclose(final.c, c, rtol=1e-10)
    assert np.abs(c).max() <= 0.5 + 1e-12


def _layer_norm(x, gamma, beta):
    mean = x.mean(1, keepdims=True)
    var = x.var(1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * gamma + beta


def test_layer_norm_basic_lstm_cell_against_numpy():
    xs = [RNG.randn(3, 2) for _ in range(2)]
    with tf.Graph().as_default():
        cell = rnn.LayerNormBasicLSTMCell(4, forget_bias=0.5, norm_gain=1.5, norm_shift=0.2)
        outputs, state = tf.nn.static_rnn(cell, [tf.constant(x) for x in xs],
                                          dtype=tf.float64)
        names = sorted(v.op.name for v in tf.global_variables())
        norms = ["forget", "input", "output", "state", "transform"]
        assert names == sorted(["rnn/layer_norm_basic_lstm_cell/kernel"] + [
            f"rnn/layer_norm_basic_lstm_cell/{s}/{p}" for s in norms for p in ("beta", "gamma")])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            weights = _values(sess)
            got, final = sess.run([outputs, state])
    w = {k.split("layer_norm_basic_lstm_cell/")[1]: v for k, v in weights.items()}
    assert np.allclose(w["input/gamma"], 1.5) and np.allclose(w["state/beta"], 0.2)
    c = h = np.zeros((3, 4))
    for t, x in enumerate(xs):
        i, j, f, o = np.split(np.concatenate([x, h], 1) @ w["kernel"], 4, axis=1)
        i, j, f, o = (_layer_norm(v, w[f"{s}/gamma"], w[f"{s}/beta"])
                      for v, s in zip((i, j, f, o), ("input", "transform", "forget", "output")))
        c = c * sigmoid(f + 0.5) + sigmoid(i) * np.tanh(j)
        c = _layer_norm(c, w["state/gamma"], w["state/beta"])
        h = np.tanh(c) * sigmoid(o)
        np.testing.assert_allclose(got[t], h, rtol=1e-9)
    np.testing.assert_allclose(final.c, c, rtol=1e-9)


def test_layer_norm_cell_without_norm_has_a_bias_and_dropout_keeps_shape():
    with tf.Graph().as_default():
        cell = rnn.LayerNormBasicLSTMCell(3, layer_norm=False, dropout_keep_prob=0.5,
                                          dropout_prob_seed=3)
        out, _ = tf.nn.static_rnn(cell, [tf.ones([2, 2])], dtype=tf.float32)
        assert sorted(v.op.name for v in tf.global_variables()) == [
            "rnn/layer_norm_basic_lstm_cell/bias", "rnn/layer_norm_basic_lstm_cell/kernel"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(out[0]).shape == (2, 3)


def test_attention_cell_wrapper_against_numpy():
    length, size, batch = 3, 4, 2
    xs = [RNG.randn(batch, 2) for _ in range(4)]
    with tf.Graph().as_default():
        cell = rnn.AttentionCellWrapper(tf.nn.rnn_cell.BasicRNNCell(size), attn_length=length,
                                        attn_vec_size=5)
        assert cell.state_size == (size, size, size * length) and cell.output_size == size
        outputs, state = tf.nn.static_rnn(cell, [tf.constant(x) for x in xs],
                                          dtype=tf.float64)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            weights = _values(sess)
            got, final = sess.run([outputs, state])
    w = {k[len("rnn/attention_cell_wrapper/"):]: v for k, v in weights.items()}
    assert sorted(w) == sorted(["kernel", "bias", "basic_rnn_cell/kernel",
                                "basic_rnn_cell/bias", "attention/attn_w", "attention/attn_v",
                                "attention/kernel", "attention/bias",
                                "attn_output_projection/kernel", "attn_output_projection/bias"])
    state = np.zeros((batch, size))
    attns = np.zeros((batch, size))
    window = np.zeros((batch, length, size))
    for t, x in enumerate(xs):
        mixed = np.concatenate([x, attns], 1) @ w["kernel"] + w["bias"]
        state = np.tanh(np.concatenate([mixed, state], 1) @ w["basic_rnn_cell/kernel"]
                        + w["basic_rnn_cell/bias"])
        features = window @ w["attention/attn_w"][0, 0]                 # [b, len, vec]
        query = state @ w["attention/kernel"] + w["attention/bias"]     # [b, vec]
        scores = (np.tanh(features + query[:, None, :]) * w["attention/attn_v"]).sum(2)
        probs = np.exp(scores - scores.max(1, keepdims=True))
        probs /= probs.sum(1, keepdims=True)
        attns = (probs[:, :, None] * window).sum(1)
        output = (np.concatenate([state, attns], 1) @ w["attn_output_projection/kernel"]
                  + w["attn_output_projection/bias"])
        window = np.concatenate([window[:, 1:], output[:, None]], 1)
        np.testing.assert_allclose(got[t], output, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(final[1], attns, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(final[2], window.reshape(batch, -1), rtol=1e-9, atol=1e-12)


def test_attention_cell_wrapper_rejects_bad_arguments():
    with pytest.raises(ValueError, match="attn_length"):
        rnn.AttentionCellWrapper(tf.nn.rnn_cell.BasicRNNCell(2), attn_length=0)
    with pytest.raises(ValueError, match="state_is_tuple"):
        rnn.AttentionCellWrapper(tf.nn.rnn_cell.BasicLSTMCell(2), 2, state_is_tuple=False)


def test_projection_and_embedding_wrappers_names_and_values():
    ids = np.array([1, 0, 2])
    with tf.Graph().as_default():
        cell = rnn.OutputProjectionWrapper(
            rnn.EmbeddingWrapper(tf.nn.rnn_cell.BasicRNNCell(3), 4, 2), 5)
        assert cell.output_size == 5 and cell.state_size == 3
        outputs, state = tf.nn.static_rnn(cell, [tf.constant(ids)], dtype=tf.float64)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w = {k[len("rnn/output_projection_wrapper/"):]: v
                 for k, v in _values(sess).items()}
            got, final = sess.run([outputs[0], state])
    assert sorted(w) == sorted(["kernel", "bias", "embedding_wrapper/embedding",
                                "embedding_wrapper/basic_rnn_cell/kernel",
                                "embedding_wrapper/basic_rnn_cell/bias"])
    embedded = w["embedding_wrapper/embedding"][ids]
    h = np.tanh(np.concatenate([embedded, np.zeros((3, 3))], 1)
                @ w["embedding_wrapper/basic_rnn_cell/kernel"]
                + w["embedding_wrapper/basic_rnn_cell/bias"])
    np.testing.assert_allclose(final, h, rtol=1e-10)
    np.testing.assert_allclose(got, h @ w["kernel"] + w["bias"], rtol=1e-10)


def test_input_projection_wrapper_projects_first():
    x = RNG.randn(2, 3)
    with tf.Graph().as_default():
        cell = rnn.InputProjectionWrapper(tf.nn.rnn_cell.BasicRNNCell(2), num_proj=4,
                                          activation=tf.tanh)
        outputs, _ = tf.nn.static_rnn(cell, [tf.constant(x)], dtype=tf.float64)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w = {k[len("rnn/input_projection_wrapper/"):]: v for k, v in _values(sess).items()}
            got = sess.run(outputs[0])
    projected = np.tanh(x @ w["kernel"] + w["bias"])
    h = np.tanh(np.concatenate([projected, np.zeros((2, 2))], 1) @ w["basic_rnn_cell/kernel"]
                + w["basic_rnn_cell/bias"])
    np.testing.assert_allclose(got, h, rtol=1e-10)


def test_lstm_block_fused_cell_matches_the_block_cell_and_stops_at_lengths():
    xs = RNG.randn(4, 2, 3)
    lengths = np.array([4, 2])
    with tf.Graph().as_default():
        fused = rnn.LSTMBlockFusedCell(5)
        outputs, (c, h) = fused(tf.constant(xs), dtype=tf.float64, sequence_length=lengths)
        assert sorted(v.op.name for v in tf.global_variables()) == [
            "lstm_fused_cell/bias", "lstm_fused_cell/kernel"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w = _values(sess)
            got, got_c, got_h = sess.run([outputs, c, h])
    kernel, bias = w["lstm_fused_cell/kernel"], w["lstm_fused_cell/bias"]
    cs = hs = np.zeros((2, 5))
    for t in range(4):
        new_c, new_h = _lstm_step(xs[t], cs, hs, kernel, bias)
        live = (t < lengths)[:, None]
        np.testing.assert_allclose(got[t], np.where(live, new_h, 0.0), rtol=1e-10, atol=1e-14)
        cs, hs = np.where(live, new_c, cs), np.where(live, new_h, hs)
    np.testing.assert_allclose(got_c, cs, rtol=1e-10)
    np.testing.assert_allclose(got_h, hs, rtol=1e-10)


def test_gru_block_cells_are_the_gru_cell_with_tf_variable_names():
    xs = [RNG.randn(2, 3) for _ in range(2)]
    with tf.Graph().as_default():
        with tf.variable_scope("v1"):
            v1_out, _ = tf.nn.static_rnn(rnn.GRUBlockCell(4), [tf.constant(x) for x in xs],
                                         dtype=tf.float64)
        with tf.variable_scope("v2"):
            v2_out, _ = tf.nn.static_rnn(rnn.GRUBlockCellV2(cell_size=4),
                                         [tf.constant(x) for x in xs], dtype=tf.float64)
        with tf.variable_scope("core"):
            core_out, _ = tf.nn.static_rnn(tf.nn.rnn_cell.GRUCell(4),
                                           [tf.constant(x) for x in xs], dtype=tf.float64)
        names = {v.op.name: v for v in tf.global_variables()}
        assert sorted(n for n in names if n.startswith("v1/")) == [
            "v1/rnn/gru_cell/b_c", "v1/rnn/gru_cell/b_ru", "v1/rnn/gru_cell/w_c",
            "v1/rnn/gru_cell/w_ru"]
        assert sorted(n[3:] for n in names if n.startswith("v2/")) == sorted(
            n[5:] for n in names if n.startswith("core/"))
        pairs = {"w_ru": "gates/kernel", "b_ru": "gates/bias", "w_c": "candidate/kernel",
                 "b_c": "candidate/bias"}
        copies = [tf.assign(names[f"core/rnn/gru_cell/{new}"], names[f"v1/rnn/gru_cell/{old}"])
                  for old, new in pairs.items()]
        copies += [tf.assign(names[f"v2/rnn/gru_cell/{new}"], names[f"v1/rnn/gru_cell/{old}"])
                   for old, new in pairs.items()]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(names["v1/rnn/gru_cell/b_ru"]), 1.0)
            sess.run(copies)
            a, b, c = sess.run([v1_out, v2_out, core_out])
    np.testing.assert_allclose(a, c, rtol=1e-12)
    np.testing.assert_allclose(b, c, rtol=1e-12)
    with pytest.raises(ValueError, match="num_units"):
        rnn.GRUBlockCell()
    with pytest.raises(ValueError, match="both"):
        rnn.GRUBlockCell(2, cell_size=2)


def test_stack_bidirectional_rnns_static_and_dynamic_agree():
    xs = RNG.randn(2, 3, 2)
    with tf.Graph().as_default():
        def cells():
            return [tf.nn.rnn_cell.GRUCell(3), tf.nn.rnn_cell.GRUCell(2)]

        with tf.variable_scope("static"):
            s_out, s_fw, s_bw = rnn.stack_bidirectional_rnn(
                cells(), cells(), tf.unstack(tf.constant(xs), axis=1), dtype=tf.float64)
        with tf.variable_scope("dynamic"):
            d_out, d_fw, d_bw = rnn.stack_bidirectional_dynamic_rnn(
                cells(), cells(), tf.constant(xs), dtype=tf.float64)
        names = sorted(v.op.name for v in tf.global_variables())
        assert "static/stack_bidirectional_rnn/cell_1/bidirectional_rnn/bw/gru_cell/gates/" \
               "kernel" in names
        assert "dynamic/stack_bidirectional_rnn/cell_0/bidirectional_rnn/fw/gru_cell/" \
               "candidate/bias" in names
        statics = sorted((v for v in tf.global_variables() if v.op.name.startswith("static")),
                         key=lambda v: v.op.name)
        dynamics = sorted((v for v in tf.global_variables() if v.op.name.startswith("dyn")),
                          key=lambda v: v.op.name)
        copies = [tf.assign(d, s) for s, d in zip(statics, dynamics)]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(copies)
            so, do, sf, df = sess.run([s_out, d_out, s_fw, d_fw])
    assert do.shape == (2, 3, 4) and len(sf) == 2
    np.testing.assert_allclose(np.stack(so, 1), do, rtol=1e-10)
    np.testing.assert_allclose(sf[1], df[1], rtol=1e-10)
    with pytest.raises(ValueError, match="same depth"):
        rnn.stack_bidirectional_rnn([tf.nn.rnn_cell.GRUCell(1)],
                                    [tf.nn.rnn_cell.GRUCell(1)] * 2, [])
    with pytest.raises(ValueError, match="at least one bw cell"):
        rnn.stack_bidirectional_rnn([tf.nn.rnn_cell.GRUCell(1)], [], [])


def test_device_wrapper_places_the_cell():
    with tf.Graph().as_default():
        cell = rnn.DeviceWrapper(tf.nn.rnn_cell.BasicRNNCell(2), "/cpu:0")
        out, _ = cell(tf.ones([1, 2]), tf.zeros([1, 2]))
        assert "cpu" in out.op.device.lower()


def _run_cell(cell, xs, dtype=tf.float64):
    outputs, state = tf.nn.static_rnn(cell, [tf.constant(x) for x in xs], dtype=dtype)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return _values(sess), sess.run([outputs, state])


@pytest.mark.parametrize("layer_norm", [False, True])
def test_coupled_input_forget_gate_lstm_cell_against_numpy(layer_norm):
    xs = [RNG.randn(2, 3) for _ in range(3)]
    with tf.Graph().as_default():
        cell = rnn.CoupledInputForgetGateLSTMCell(4, use_peepholes=True, num_proj=2,
                                                  proj_clip=0.3, layer_norm=layer_norm)
        assert cell.state_size == (4, 2) and cell.output_size == 2
        w, (got, final) = _run_cell(cell, xs)
    p = "rnn/coupled_input_forget_gate_lstm_cell/"
    expected = {"W_0", "B", "W_F_diag", "W_O_diag", "W_P_0"}
    if layer_norm:
        expected |= {f"{s}/{v}" for s in ("transform", "forget", "output", "state")
                     for v in ("gamma", "beta")}
    assert {k[len(p):] for k in w} == expected
    c, m = np.zeros((2, 4)), np.zeros((2, 2))
    for t, x in enumerate(xs):
        matrix = np.concatenate([x, m], 1) @ w[p + "W_0"]
        if not layer_norm:
            matrix = matrix + w[p + "B"]
        j, f, o = np.split(matrix, 3, axis=1)
        if layer_norm:
            j, f, o = (_layer_norm(v, w[p + f"{s}/gamma"], w[p + f"{s}/beta"])
                       for v, s in zip((j, f, o), ("transform", "forget", "output")))
        f_act = sigmoid(f + 1.0 + w[p + "W_F_diag"] * c)
        c = f_act * c + (1 - f_act) * np.tanh(j)
        if layer_norm:
            c = _layer_norm(c, w[p + "state/gamma"], w[p + "state/beta"])
        m = sigmoid(o + w[p + "W_O_diag"] * c) * np.tanh(c)
        m = np.clip(m @ w[p + "W_P_0"], -0.3, 0.3)
        np.testing.assert_allclose(got[t], m, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(final.c, c, rtol=1e-9)


def test_ugrnn_and_intersection_cells_against_numpy():
    xs = [RNG.randn(2, 3) for _ in range(2)]
    with tf.Graph().as_default():
        w, (got, final) = _run_cell(rnn.UGRNNCell(3, forget_bias=0.5), xs)
    p = "rnn/ugrnn_cell/"
    h = np.zeros((2, 3))
    for t, x in enumerate(xs):
        g, c = np.split(np.concatenate([x, h], 1) @ w[p + "kernel"] + w[p + "bias"], 2, 1)
        g = sigmoid(g + 0.5)
        h = g * h + (1 - g) * np.tanh(c)
        np.testing.assert_allclose(got[t], h, rtol=1e-10)
    with tf.Graph().as_default():
        w, (got, final) = _run_cell(rnn.IntersectionRNNCell(4, num_in_proj=4), xs)
    p = "rnn/intersection_rnn_cell/"
    assert set(w) == {p + "kernel", p + "bias", p + "in_projection/kernel",
                      p + "in_projection/bias"}
    h = np.zeros((2, 4))
    for t, x in enumerate(xs):
        x = x @ w[p + "in_projection/kernel"] + w[p + "in_projection/bias"]
        gh, hh, gy, y = np.split(np.concatenate([x, h], 1) @ w[p + "kernel"] + w[p + "bias"],
                                 4, 1)
        gh, gy = sigmoid(gh + 1.0), sigmoid(gy + 1.0)
        h = gh * h + (1 - gh) * np.tanh(hh)
        out = gy * x + (1 - gy) * np.maximum(y, 0)
        np.testing.assert_allclose(got[t], out, rtol=1e-10)
    np.testing.assert_allclose(final, h, rtol=1e-10)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="num_in_proj"):
            _run_cell(rnn.IntersectionRNNCell(4), xs)


def _np_conv_same(x, k):
    """[b, h, w, c] * [kh, kw, c, o] with SAME padding (odd kernels)."""
    kh, kw = k.shape[:2]
    padded = np.pad(x, [(0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)])
    out = np.zeros(x.shape[:3] + (k.shape[3],))
    for i in range(kh):
        for j in range(kw):
            out += padded[:, i:i + x.shape[1], j:j + x.shape[2]] @ k[i, j]
    return out


def test_conv2d_lstm_cell_against_numpy():
    xs = [RNG.randn(2, 4, 5, 2) for _ in range(2)]
    with tf.Graph().as_default():
        cell = rnn.Conv2DLSTMCell(input_shape=[4, 5, 2], output_channels=3,
                                  kernel_shape=[3, 3], skip_connection=True)
        assert cell.output_size.as_list() == [4, 5, 5]
        w, (got, final) = _run_cell(cell, xs)
    p = "rnn/conv_2d_lstm_cell/"
    assert set(w) == {p + "kernel", p + "biases"}
    c = h = np.zeros((2, 4, 5, 3))
    for t, x in enumerate(xs):
        gates = _np_conv_same(np.concatenate([x, h], 3), w[p + "kernel"]) + w[p + "biases"]
        i, j, f, o = np.split(gates, 4, axis=3)
        c = sigmoid(f + 1.0) * c + sigmoid(i) * np.tanh(j)
        h = np.tanh(c) * sigmoid(o)
        np.testing.assert_allclose(got[t], np.concatenate([h, x], 3), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(final.h, h, rtol=1e-9)
    with pytest.raises(ValueError, match="input_shape"):
        rnn.Conv2DLSTMCell(input_shape=[4, 2], output_channels=1, kernel_shape=[1, 1])


def test_conv1d_lstm_cell_runs_in_dynamic_rnn():
    with tf.Graph().as_default():
        cell = rnn.Conv1DLSTMCell(input_shape=[6, 2], output_channels=4, kernel_shape=[3])
        outputs, state = tf.nn.dynamic_rnn(cell, tf.ones([3, 5, 6, 2]), dtype=tf.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out, h = sess.run([outputs, state.h])
    assert out.shape == (3, 5, 6, 4)
    np.testing.assert_allclose(out[:, -1], h, rtol=1e-6)


class VariableStateSaver:
    """A state saver keeping each state in a variable (what batch_sequences_with_states does
    per sequence key)."""

    def __init__(self, batch, sizes):
        self._vars = {name: tf.Variable(tf.zeros([batch, size], tf.float64), name=name)
                      for name, size in sizes.items()}

    def state(self, name):
        return self._vars[name].read_value()

    def save_state(self, name, value):
        return tf.assign(self._vars[name], value).op


def test_static_state_saving_rnn_carries_state_across_runs():
    x = RNG.randn(2, 3)
    with tf.Graph().as_default():
        saver = VariableStateSaver(2, {"c": 4, "h": 4})
        cell = tf.nn.rnn_cell.BasicLSTMCell(4)
        outputs, state = rnn.static_state_saving_rnn(cell, [tf.constant(x)] * 2, saver,
                                                     ("c", "h"))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w = {k: v for k, v in _values(sess).items() if "lstm" in k}
            first = sess.run(outputs[-1])
            second = sess.run(outputs[-1])
        with pytest.raises(ValueError, match="same type"):
            rnn.static_state_saving_rnn(cell, [tf.constant(x)], saver, "c")
    c = h = np.zeros((2, 4))
    results = []
    for _ in range(2):
        for _ in range(2):
            c, h = _lstm_step(x, c, h, w["rnn/basic_lstm_cell/kernel"],
                              w["rnn/basic_lstm_cell/bias"])
        results.append(h)
    np.testing.assert_allclose(first, results[0], rtol=1e-10)
    np.testing.assert_allclose(second, results[1], rtol=1e-10)


def test_block_cells_with_their_default_names_are_uniquified_like_tf():
    with tf.Graph().as_default():
        x = tf.ones([1, 2])
        for cell in (rnn.LSTMBlockCell(2), rnn.LSTMBlockCell(2), rnn.GRUBlockCell(2)):
            cell(x, cell.zero_state(1, tf.float32))
        names = sorted({v.op.name.split("/")[0] for v in tf.global_variables()})
        assert names == ["gru_cell", "lstm_cell", "lstm_cell_1"]  # w_ru, b_ru, w_c, b_c
        again = rnn.LSTMBlockCell(2, reuse=True)
        out, _ = again(x, again.zero_state(1, tf.float32))
        assert len(tf.global_variables()) == 8  # reused lstm_cell/kernel and bias


@pytest.mark.parametrize("num_proj,use_biases", [(None, False), (2, True)])
def test_nas_cell_against_numpy(num_proj, use_biases):
    xs = [RNG.randn(2, 3) for _ in range(2)]
    with tf.Graph().as_default():
        cell = rnn.NASCell(4, num_proj=num_proj, use_biases=use_biases)
        assert cell.output_size == (num_proj or 4)
        w, (got, final) = _run_cell(cell, xs)
    p = "rnn/nas_cell/"
    names = {"kernel", "recurrent_kernel"} | ({"bias"} if use_biases else set()) | (
        {"projection_weights"} if num_proj else set())
    assert {k[len(p):] for k in w} == names
    relu = lambda v: np.maximum(v, 0)  # noqa: E731
    c, m = np.zeros((2, 4)), np.zeros((2, num_proj or 4))
    for t, x in enumerate(xs):
        mm = m @ w[p + "recurrent_kernel"] + (w[p + "bias"] if use_biases else 0)
        ms, xs_ = np.split(mm, 8, 1), np.split(x @ w[p + "kernel"], 8, 1)
        l1 = [sigmoid(xs_[0] + ms[0]), relu(xs_[1] + ms[1]), sigmoid(xs_[2] + ms[2]),
              relu(xs_[3] * ms[3]), np.tanh(xs_[4] + ms[4]), sigmoid(xs_[5] + ms[5]),
              np.tanh(xs_[6] + ms[6]), sigmoid(xs_[7] + ms[7])]
        l2 = [np.tanh(l1[0] * l1[1]), np.tanh(l1[2] + l1[3]), np.tanh(l1[4] * l1[5]),
              sigmoid(l1[6] + l1[7])]
        c = np.tanh(l2[0] + c) * l2[1]
        m = np.tanh(c * np.tanh(l2[2] + l2[3]))
        if num_proj:
            m = m @ w[p + "projection_weights"]
        np.testing.assert_allclose(got[t], m, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(final.c, c, rtol=1e-9)


def test_lstm_block_fused_cell_takes_a_list_of_steps():
    xs = [RNG.randn(2, 3) for _ in range(3)]
    with tf.Graph().as_default():
        fused = rnn.LSTMBlockFusedCell(4)
        outputs, state = fused([tf.constant(x) for x in xs], dtype=tf.float64)
        assert isinstance(outputs, list) and len(outputs) == 3
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w = _values(sess)
            got, final = sess.run([outputs, state])
    c = h = np.zeros((2, 4))
    for t, x in enumerate(xs):
        c, h = _lstm_step(x, c, h, w["lstm_fused_cell/kernel"], w["lstm_fused_cell/bias"])
        np.testing.assert_allclose(got[t], h, rtol=1e-10)
    np.testing.assert_allclose(final[0], c, rtol=1e-10)


@pytest.mark.parametrize("as_list", [False, True])
def test_bidirectional_fused_lstm_matches_numpy(as_list):
    xs = RNG.randn(4, 2, 3)
    lengths = np.array([4, 2])
    with tf.Graph().as_default():
        inputs = [tf.constant(x) for x in xs] if as_list else tf.constant(xs)
        fw = rnn.LSTMBlockFusedCell(3)
        bw = rnn.TimeReversedFusedRNN(rnn.LSTMBlockFusedCell(3))
        out_fw, _ = fw(inputs, dtype=tf.float64, sequence_length=lengths, scope="fw")
        out_bw, state_bw = bw(inputs, dtype=tf.float64, sequence_length=lengths, scope="bw")
        assert sorted(v.op.name for v in tf.global_variables()) == [
            "bw/bias", "bw/kernel", "fw/bias", "fw/kernel"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w = _values(sess)
            got_fw, got_bw, final_bw = sess.run([out_fw, out_bw, state_bw])
    got_fw, got_bw = np.asarray(got_fw), np.asarray(got_bw)
    for b, n in enumerate(lengths):
        for direction, got in (("fw", got_fw), ("bw", got_bw)):
            order = range(n) if direction == "fw" else range(n - 1, -1, -1)
            c = h = np.zeros((1, 3))
            for t in order:
                c, h = _lstm_step(xs[t, b:b + 1], c, h, w[f"{direction}/kernel"],
                                  w[f"{direction}/bias"])
                np.testing.assert_allclose(got[t, b], h[0], rtol=1e-9)
            np.testing.assert_allclose(got[n:, b], 0.0)
            if direction == "bw":
                np.testing.assert_allclose(final_bw[1][b], h[0], rtol=1e-9)


def test_fused_rnn_cell_adaptor_static_and_dynamic_agree():
    xs = RNG.randn(3, 2, 2)
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.GRUCell(3)
        static_out, _ = rnn.FusedRNNCellAdaptor(cell)(tf.constant(xs), dtype=tf.float64)
        dynamic_out, _ = rnn.FusedRNNCellAdaptor(cell, use_dynamic_rnn=True)(
            [tf.constant(x) for x in xs], dtype=tf.float64)
        assert isinstance(dynamic_out, list)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            a, b = sess.run([static_out, dynamic_out])
    np.testing.assert_allclose(a, np.stack(b), rtol=1e-12)


@pytest.mark.parametrize("couple", [True, False])
def test_highway_wrapper_against_numpy(couple):
    xs = [RNG.randn(2, 3) for _ in range(2)]
    with tf.Graph().as_default():
        cell = rnn.HighwayWrapper(tf.nn.rnn_cell.BasicRNNCell(3),
                                  couple_carry_transform_gates=couple, carry_bias_init=0.5)
        w, (got, _) = _run_cell(cell, xs)
    expected = {"rnn/carry_w", "rnn/carry_b", "rnn/basic_rnn_cell/kernel",
                "rnn/basic_rnn_cell/bias"}
    if not couple:
        expected |= {"rnn/transform_w", "rnn/transform_b"}
    assert set(w) == expected
    np.testing.assert_allclose(w["rnn/carry_b"], 0.5)
    h = np.zeros((2, 3))
    for t, x in enumerate(xs):
        h = np.tanh(np.concatenate([x, h], 1) @ w["rnn/basic_rnn_cell/kernel"]
                    + w["rnn/basic_rnn_cell/bias"])
        carry = sigmoid(x @ w["rnn/carry_w"] + w["rnn/carry_b"])
        transform = 1 - carry if couple else sigmoid(x @ w["rnn/transform_w"]
                                                     + w["rnn/transform_b"])
        np.testing.assert_allclose(got[t], x * carry + h * transform, rtol=1e-10)


def test_ind_rnn_and_sru_cells_against_numpy():
    xs = [RNG.randn(2, 3) for _ in range(2)]
    with tf.Graph().as_default():
        w, (got, _) = _run_cell(rnn.IndRNNCell(4), xs)
    p = "rnn/ind_rnn_cell/"
    assert np.all(np.abs(w[p + "kernel_u"]) <= 1.0)
    h = np.zeros((2, 4))
    for t, x in enumerate(xs):
        h = np.maximum(x @ w[p + "kernel_w"] + h * w[p + "kernel_u"] + w[p + "bias"], 0)
        np.testing.assert_allclose(got[t], h, rtol=1e-10)
    with tf.Graph().as_default():
        w, (got, final) = _run_cell(rnn.SRUCell(4), xs)
    p = "rnn/sru_cell/"
    c = np.zeros((2, 4))
    for t, x in enumerate(xs):
        x_bar, f, r, x_tx = np.split(x @ w[p + "kernel"], 4, 1)
        f, r = np.split(sigmoid(np.concatenate([f, r], 1) + w[p + "bias"]), 2, 1)
        c = f * c + (1 - f) * x_bar
        np.testing.assert_allclose(got[t], r * np.tanh(c) + (1 - r) * x_tx, rtol=1e-10)
    np.testing.assert_allclose(final, c, rtol=1e-10)


def test_compiled_wrapper_and_layer_rnn_cell_alias():
    assert rnn.LayerRNNCell is tf.nn.rnn_cell.RNNCell
    with tf.Graph().as_default():
        w, (got, _) = _run_cell(rnn.CompiledWrapper(tf.nn.rnn_cell.BasicRNNCell(2)),
                                [np.ones((1, 2))])
    assert set(w) == {"rnn/basic_rnn_cell/kernel", "rnn/basic_rnn_cell/bias"}
    want = np.tanh(np.concatenate([np.ones((1, 2)), np.zeros((1, 2))], 1)
                   @ w["rnn/basic_rnn_cell/kernel"] + w["rnn/basic_rnn_cell/bias"])
    np.testing.assert_allclose(got[0], want, rtol=1e-10)
