"""RNN cells and static_rnn against NumPy step functions."""

import numpy as np
import pytest

import tensorflux as tf

RNG = np.random.RandomState(3)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _vars(sess):
    return {v.op.name: sess.run(v) for v in tf.trainable_variables()}


def test_basic_lstm_cell_step_and_names():
    x = RNG.randn(2, 3).astype(np.float32)
    c0 = RNG.randn(2, 4).astype(np.float32)
    h0 = RNG.randn(2, 4).astype(np.float32)
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.BasicLSTMCell(4)
        assert cell.state_size == (4, 4) and cell.output_size == 4
        with tf.variable_scope("rnn"):
            out, state = cell(tf.constant(x), tf.nn.rnn_cell.LSTMStateTuple(c0, h0))
        assert [v.op.name for v in tf.trainable_variables()] == [
            "rnn/basic_lstm_cell/kernel", "rnn/basic_lstm_cell/bias"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got_out, got_state = sess.run([out, state])
            w = _vars(sess)
    gates = np.concatenate([x, h0], 1) @ w["rnn/basic_lstm_cell/kernel"] + \
        w["rnn/basic_lstm_cell/bias"]
    i, j, f, o = np.split(gates, 4, axis=1)
    c = c0 * sigmoid(f + 1.0) + sigmoid(i) * np.tanh(j)
    h = np.tanh(c) * sigmoid(o)
    np.testing.assert_allclose(got_state.c, c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_out, h, rtol=1e-5, atol=1e-6)


def test_gru_and_basic_rnn_steps():
    x = RNG.randn(2, 3).astype(np.float32)
    s = RNG.randn(2, 5).astype(np.float32)
    with tf.Graph().as_default():
        gru_out, _ = tf.nn.rnn_cell.GRUCell(5)(tf.constant(x), tf.constant(s))
        rnn_out, _ = tf.nn.rnn_cell.BasicRNNCell(5)(tf.constant(x), tf.constant(s))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            g, r = sess.run([gru_out, rnn_out])
            w = _vars(sess)
    xs = np.concatenate([x, s], 1)
    gates = sigmoid(xs @ w["gru_cell/gates/kernel"] + w["gru_cell/gates/bias"])
    reset, update = np.split(gates, 2, axis=1)
    cand = np.tanh(np.concatenate([x, reset * s], 1) @ w["gru_cell/candidate/kernel"]
                   + w["gru_cell/candidate/bias"])
    np.testing.assert_allclose(g, update * s + (1 - update) * cand, rtol=1e-5, atol=1e-6)
    ref = np.tanh(xs @ w["basic_rnn_cell/kernel"] + w["basic_rnn_cell/bias"])
    np.testing.assert_allclose(r, ref, rtol=1e-5, atol=1e-6)


def test_multi_rnn_cell_and_lstm_cell_projection():
    with tf.Graph().as_default():
        cells = [tf.nn.rnn_cell.LSTMCell(6, num_proj=3, use_peepholes=True),
                 tf.nn.rnn_cell.BasicRNNCell(2)]
        stack = tf.nn.rnn_cell.MultiRNNCell(cells)
        x = tf.constant(RNG.randn(4, 5).astype(np.float32))
        out, state = stack(x, stack.zero_state(4, tf.float32))
        assert out.shape.as_list() == [4, 2]
        names = [v.op.name for v in tf.trainable_variables()]
        assert "multi_rnn_cell/cell_0/lstm_cell/projection/kernel" in names
        assert "multi_rnn_cell/cell_1/basic_rnn_cell/kernel" in names
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            value, st = sess.run([out, state])
        assert value.shape == (4, 2) and st[0].h.shape == (4, 3)


def test_static_rnn_sequence_length():
    inputs = RNG.randn(3, 4, 2).astype(np.float32)
    lengths = np.array([4, 2, 0])
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.BasicLSTMCell(3)
        steps = [tf.constant(inputs[:, t]) for t in range(4)]
        outputs, state = tf.nn.static_rnn(cell, steps, dtype=tf.float32,
                                          sequence_length=lengths)
        assert [v.op.name for v in tf.trainable_variables()][0] == "rnn/basic_lstm_cell/kernel"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            outs, st = sess.run([outputs, state])
    outs = np.stack(outs, 1)
    assert np.all(outs[1, 2:] == 0) and np.all(outs[2] == 0)
    np.testing.assert_allclose(st.h[1], outs[1, 1])
    np.testing.assert_allclose(st.h[0], outs[0, 3])
    assert np.all(st.c[2] == 0)


def test_static_rnn_trains_and_gradients_flow():
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [8, 5, 1])
        target = tf.placeholder(tf.float32, [8, 1])
        cell = tf.nn.rnn_cell.BasicLSTMCell(8)
        outputs, _ = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float32)
        pred = tf.layers.dense(outputs[-1], 1)
        loss = tf.reduce_mean(tf.square(pred - target))
        train = tf.train.AdamOptimizer(0.05).minimize(loss)
        data = RNG.rand(8, 5, 1).astype(np.float32)
        feed = {x: data, target: data.sum(1)}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(loss, feed)
            for _ in range(60):
                sess.run(train, feed)
            assert sess.run(loss, feed) < 0.1 * first


def test_dropout_wrapper_keeps_everything_at_one():
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicRNNCell(3),
                                             output_keep_prob=1.0)
        x = tf.constant(RNG.randn(2, 3).astype(np.float32))
        out, _ = cell(x, cell.zero_state(2, tf.float32))
        with pytest.raises(ValueError):
            tf.nn.rnn_cell.DropoutWrapper(cell, variational_recurrent=True)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(out).shape == (2, 3)


def test_variational_dropout_reuses_one_mask_over_time_and_batch():
    with tf.Graph().as_default():
        x = tf.constant(RNG.randn(4, 6, 3).astype(np.float32))
        base = tf.nn.rnn_cell.BasicRNNCell(5)
        cell = tf.nn.rnn_cell.DropoutWrapper(base, output_keep_prob=0.5, input_keep_prob=0.6,
                                             variational_recurrent=True, input_size=3,
                                             dtype=tf.float32, seed=1)
        with tf.variable_scope("rnn"):
            out, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        with pytest.raises(ValueError, match="input_size"):
            tf.nn.rnn_cell.DropoutWrapper(base, input_keep_prob=0.5, variational_recurrent=True,
                                          dtype=tf.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first, second = sess.run(out), sess.run(out)
    for value in (first, second):
        zero = value == 0.0
        assert (zero == zero[:1, :1]).all()  # same units dropped at every step and row
    assert (first == 0.0).any() and not (first == 0.0).all()


def test_state_dropout_keeps_lstm_memory_by_default():
    with tf.Graph().as_default():
        x = tf.constant(RNG.randn(3, 4).astype(np.float32))
        lstm = tf.nn.rnn_cell.LSTMCell(8)
        cell = tf.nn.rnn_cell.DropoutWrapper(lstm, state_keep_prob=0.3, seed=2)
        state = lstm.zero_state(3, tf.float32)
        _, dropped = cell(x, state)
        _, plain = lstm(x, state)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            d, p = sess.run([dropped, plain])
    np.testing.assert_allclose(d.c, p.c, rtol=1e-6)
    kept = d.h != 0.0
    np.testing.assert_allclose(d.h[kept], p.h[kept] / 0.3, rtol=1e-5)
    assert (~kept).any()


def test_static_rnn_reuses_variables_of_cells_that_call_get_variable():
    # TF1 programs often write cells whose __call__ makes its own variables; static_rnn
    # reuses its scope after the first step, so all steps share them.
    class ScopedCell(tf.nn.rnn_cell.RNNCell):
        state_size = 3
        output_size = 3

        def __call__(self, inputs, state, scope=None):
            with tf.variable_scope(scope or "scoped_cell"):
                w = tf.get_variable("w", [inputs.shape[1].value + 3, 3], tf.float64)
                h = tf.tanh(tf.matmul(tf.concat([inputs, state], 1), w))
                return h, h

    x = RNG.randn(2, 2)
    with tf.Graph().as_default():
        outputs, _ = tf.nn.static_rnn(ScopedCell(), [tf.constant(x)] * 3, dtype=tf.float64)
        assert [v.op.name for v in tf.global_variables()] == ["rnn/scoped_cell/w"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w = sess.run(tf.global_variables()[0])
            got = sess.run(outputs)
    h = np.zeros((2, 3))
    for t in range(3):
        h = np.tanh(np.concatenate([x, h], 1) @ w)
        np.testing.assert_allclose(got[t], h, rtol=1e-10)
