"""tf.nn.dynamic_rnn and bidirectional_dynamic_rnn: outputs and final states against a NumPy
unrolling (sequence lengths, time-major, nested states), gradients, and an LSTM trained with
dynamic_rnn reaching the same loss as with static_rnn."""

import collections

import numpy as np
import pytest

import tensorflux as tf

RS = np.random.RandomState(7)
W = RS.randn(3, 4) * 0.5
U = RS.randn(4, 4) * 0.5
X = RS.randn(2, 5, 3)
LENGTHS = np.array([5, 2])

Pair = collections.namedtuple("Pair", "h count")


class TanhCell:
    """A minimal cell with the RNNCell protocol: h' = tanh(x W + h U), output h'."""

    def __init__(self, w=W, u=U, dtype=tf.float64):
        self.w = w
        self.u = u
        self.dtype = dtype

    @property
    def state_size(self):
        return self.u.shape[0]

    @property
    def output_size(self):
        return self.u.shape[0]

    def zero_state(self, batch_size, dtype):
        return tf.zeros(tf.stack([batch_size, self.state_size]), dtype)

    def __call__(self, inputs, state):
        w = tf.constant(self.w, self.dtype) if not isinstance(self.w, tf.Tensor) else self.w
        u = tf.constant(self.u, self.dtype)
        new = tf.tanh(tf.matmul(inputs, w) + tf.matmul(state, u))
        return new, new


class CountingCell(TanhCell):
    """A cell with a nested (namedtuple) state: (h, steps taken)."""

    @property
    def state_size(self):
        return Pair(4, 1)

    def zero_state(self, batch_size, dtype):
        return Pair(tf.zeros(tf.stack([batch_size, 4]), dtype),
                    tf.zeros(tf.stack([batch_size, 1]), dtype))

    def __call__(self, inputs, state):
        out, h = TanhCell.__call__(self, inputs, state.h)
        return out, Pair(h, state.count + 1.0)


def _numpy_rnn(x, lengths, w=W, u=U):
    batch, steps, _ = x.shape
    h = np.zeros((batch, u.shape[0]))
    outputs = np.zeros((batch, steps, u.shape[0]))
    for t in range(steps):
        new = np.tanh(x[:, t] @ w + h @ u)
        live = (t < lengths)[:, None]
        outputs[:, t] = np.where(live, new, 0.0)
        h = np.where(live, new, h)
    return outputs, h


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def test_dynamic_rnn_matches_numpy_with_sequence_lengths():
    x = tf.placeholder(tf.float64, [None, None, 3])
    lengths = tf.placeholder(tf.int32, [None])
    outputs, state = tf.nn.dynamic_rnn(TanhCell(), x, sequence_length=lengths,
                                       dtype=tf.float64)
    assert outputs.shape.as_list() == [None, None, 4]
    out, st = _run([outputs, state], {x: X, lengths: LENGTHS})
    expected_out, expected_state = _numpy_rnn(X, LENGTHS)
    np.testing.assert_allclose(out, expected_out, rtol=1e-12)
    np.testing.assert_allclose(st, expected_state, rtol=1e-12)
    assert np.all(out[1, 2:] == 0)
    np.testing.assert_allclose(st[1], out[1, 1])


def test_dynamic_rnn_without_lengths_time_major_and_initial_state():
    x = tf.constant(X)
    outputs, state = tf.nn.dynamic_rnn(TanhCell(), x, dtype=tf.float64)
    assert outputs.shape.as_list() == [2, 5, 4]
    expected_out, expected_state = _numpy_rnn(X, np.array([5, 5]))
    np.testing.assert_allclose(_run(outputs), expected_out, rtol=1e-12)
    major, major_state = tf.nn.dynamic_rnn(TanhCell(), tf.constant(X.transpose(1, 0, 2)),
                                           initial_state=tf.zeros([2, 4], tf.float64),
                                           time_major=True)
    out, st = _run([major, major_state])
    np.testing.assert_allclose(out, expected_out.transpose(1, 0, 2), rtol=1e-12)
    np.testing.assert_allclose(st, expected_state, rtol=1e-12)


def test_nested_state_and_all_zero_lengths():
    outputs, state = tf.nn.dynamic_rnn(CountingCell(), tf.constant(X),
                                       sequence_length=[3, 0], dtype=tf.float64)
    assert isinstance(state, Pair)
    out, st = _run([outputs, state])
    assert st.count[:, 0].tolist() == [3.0, 0.0]
    assert np.all(out[1] == 0) and np.all(st.h[1] == 0)


def test_bidirectional_dynamic_rnn():
    x = tf.constant(X)
    (fw, bw), (st_fw, st_bw) = tf.nn.bidirectional_dynamic_rnn(
        TanhCell(), TanhCell(W * 0.5, U), x, sequence_length=LENGTHS, dtype=tf.float64)
    fw_v, bw_v, sf, sb = _run([fw, bw, st_fw, st_bw])
    expected_fw, expected_sf = _numpy_rnn(X, LENGTHS)
    np.testing.assert_allclose(fw_v, expected_fw, rtol=1e-12)
    np.testing.assert_allclose(sf, expected_sf, rtol=1e-12)
    reversed_x = X.copy()
    for b, n in enumerate(LENGTHS):
        reversed_x[b, :n] = X[b, :n][::-1]
    bw_out, bw_state = _numpy_rnn(reversed_x, LENGTHS, W * 0.5)
    for b, n in enumerate(LENGTHS):
        bw_out[b, :n] = bw_out[b, :n][::-1]
    np.testing.assert_allclose(bw_v, bw_out, rtol=1e-12)
    np.testing.assert_allclose(sb, bw_state, rtol=1e-12)


def test_errors():
    with pytest.raises(ValueError, match="dtype"):
        tf.nn.dynamic_rnn(TanhCell(), tf.constant(X))
    with pytest.raises(TypeError, match="RNNCell"):
        tf.nn.dynamic_rnn(object(), tf.constant(X), dtype=tf.float64)
    with pytest.raises(ValueError, match="rank"):
        tf.nn.dynamic_rnn(TanhCell(), tf.constant([1.0, 2.0], tf.float64), dtype=tf.float64)
    with pytest.raises(ValueError, match="vector"):
        tf.nn.dynamic_rnn(TanhCell(), tf.constant(X), sequence_length=[[1]], dtype=tf.float64)


def test_gradients_match_finite_differences():
    w = tf.placeholder(tf.float64, [3, 4])
    x = tf.placeholder(tf.float64, [2, 5, 3])
    outputs, state = tf.nn.dynamic_rnn(TanhCell(w=w), x, sequence_length=LENGTHS,
                                       dtype=tf.float64)
    loss = tf.reduce_sum(outputs * outputs) + tf.reduce_sum(state)
    gw, gx = tf.gradients(loss, [w, x])
    with tf.Session() as sess:
        analytic_w, analytic_x = sess.run([gw, gx], {w: W, x: X})
        eps = 1e-6
        for index in [(0, 0), (1, 2), (2, 3)]:
            up, down = W.copy(), W.copy()
            up[index] += eps
            down[index] -= eps
            numeric = (sess.run(loss, {w: up, x: X}) - sess.run(loss, {w: down, x: X})) / (2 * eps)
            np.testing.assert_allclose(analytic_w[index], numeric, rtol=1e-5)
        for index in [(0, 4, 1), (1, 1, 0), (1, 3, 2)]:
            up, down = X.copy(), X.copy()
            up[index] += eps
            down[index] -= eps
            numeric = (sess.run(loss, {w: W, x: up}) - sess.run(loss, {w: W, x: down})) / (2 * eps)
            np.testing.assert_allclose(analytic_x[index], numeric, rtol=1e-5, atol=1e-9)
    assert analytic_x[1, 3:].max() == 0  # past the sequence end nothing flows back


def _train_lstm(dynamic: bool, steps: int = 30) -> list:
    rs = np.random.RandomState(3)
    data = rs.randn(4, 6, 3).astype(np.float32)
    target = rs.randn(4, 5).astype(np.float32)
    lengths = np.array([6, 4, 2, 5], np.int32)
    with tf.Graph().as_default():
        x = tf.constant(data)
        cell = tf.nn.rnn_cell.BasicLSTMCell(5, initializer=tf.constant_initializer(0.1)) \
            if _accepts_initializer() else tf.nn.rnn_cell.BasicLSTMCell(5)
        if dynamic:
            _, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)
        else:
            _, state = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), sequence_length=lengths,
                                        dtype=tf.float32)
        loss = tf.reduce_mean(tf.square(state.h - target))
        variables = tf.trainable_variables()
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            rs_init = np.random.RandomState(11)
            for v in variables:  # identical starting weights for both versions
                shape = v.shape.as_list()
                sess.run(tf.assign(v, (rs_init.randn(*shape) * 0.3).astype(np.float32)))
            losses = [sess.run([train, loss])[1] for _ in range(steps)]
            return losses


def _accepts_initializer():
    import inspect

    return "initializer" in inspect.signature(tf.nn.rnn_cell.BasicLSTMCell.__init__).parameters


def test_lstm_trained_with_dynamic_rnn_reaches_the_static_rnn_loss():
    dynamic = _train_lstm(True)
    static = _train_lstm(False)
    assert dynamic[-1] < dynamic[0] * 0.7  # it learns
    np.testing.assert_allclose(dynamic, static, rtol=1e-4, atol=1e-6)


def test_raw_rnn_matches_dynamic_rnn_semantics():
    lengths = tf.constant(LENGTHS, tf.int32)
    inputs_ta = tf.TensorArray(tf.float64, size=5).unstack(tf.constant(X.transpose(1, 0, 2)))
    cell = TanhCell()

    def loop_fn(time, cell_output, cell_state, loop_state):
        state = cell.zero_state(2, tf.float64) if cell_output is None else cell_state
        steps = tf.constant(0) if loop_state is None else loop_state + 1
        finished = time >= lengths
        next_input = tf.cond(tf.reduce_all(finished), lambda: tf.zeros([2, 3], tf.float64),
                             lambda: inputs_ta.read(tf.minimum(time, 4)))
        return finished, next_input, state, cell_output, steps

    emit_ta, final_state, steps = tf.nn.raw_rnn(cell, loop_fn)
    outputs = tf.transpose(emit_ta.stack(), [1, 0, 2])
    out, state, count = _run([outputs, final_state, steps])
    expected_out, expected_state = _numpy_rnn(X, LENGTHS)
    np.testing.assert_allclose(out, expected_out, rtol=1e-12)
    np.testing.assert_allclose(state, expected_state, rtol=1e-12)
    assert count == 5
    with pytest.raises(TypeError, match="callable"):
        tf.nn.raw_rnn(cell, None)


class _ArgmaxCell:
    """Emits int32 argmax indices of a float running-max state (as tf.contrib.crf's decoder)."""

    state_size = 3
    output_size = 3

    def zero_state(self, batch_size, dtype):
        return tf.zeros([batch_size, 3], dtype)

    def __call__(self, inputs, state):
        scores = tf.expand_dims(state, 2) + tf.expand_dims(inputs, 1)
        return tf.cast(tf.argmax(scores, 1), tf.int32), tf.reduce_max(scores, 1)


def test_explicit_dtype_is_the_output_dtype_as_in_tf():
    x = RS.randn(2, 4, 3)
    init = RS.randn(2, 3)
    outputs, state = tf.nn.dynamic_rnn(_ArgmaxCell(), tf.constant(x),
                                       sequence_length=[4, 2], initial_state=tf.constant(init),
                                       dtype=tf.int32)
    assert outputs.dtype == tf.int32 and state.dtype == tf.float64
    with tf.Session() as sess:
        out_v, state_v = sess.run([outputs, state])
    h = init.copy()
    for t in range(4):
        scores = h[:, :, None] + x[:, t][:, None, :]
        live = t < np.array([4, 2])
        np.testing.assert_array_equal(out_v[:, t], np.where(live[:, None], scores.argmax(1), 0))
        h = np.where(live[:, None], scores.max(1), h)
    np.testing.assert_allclose(state_v, h)


def test_dynamic_rnn_op_names_follow_tf1():
    # Programs and notebooks of the TF 1.x era print or fetch these names: the while loop and
    # the output stack sit directly in the rnn scope; the LSTM state is (c, h) = Exit_3, Exit_4
    # (Exit, Exit_1, Exit_2: the iteration counter, time and the output TensorArray).
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None, 3])
        outputs, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(4), x, dtype=tf.float32,
                                           time_major=True)
        assert outputs.name == "rnn/TensorArrayStack/TensorArrayGatherV3:0"
        assert (state.c.name, state.h.name) == ("rnn/while/Exit_3:0", "rnn/while/Exit_4:0")
        lengths = tf.placeholder(tf.int32, [None])
        cell = tf.nn.rnn_cell.GRUCell(2)
        (fw, bw), _ = tf.nn.bidirectional_dynamic_rnn(cell, cell, x, lengths, dtype=tf.float32,
                                                      time_major=True)
        assert fw.name == "bidirectional_rnn/fw/fw/TensorArrayStack/TensorArrayGatherV3:0"
        assert bw.name == "ReverseSequence:0"   # reversed back outside the scope
        ta = tf.TensorArray(tf.float32, size=2, clear_after_read=False).unstack(
            tf.constant([[1.0, 2.0], [3.0, 4.0]]))
        gathered = ta.gather([1, 0])
        assert gathered.name == "TensorArrayGatherV3:0"
        stacked = ta.stack(name="all")
        assert stacked.name == "all/all:0"
        with tf.Session() as sess:
            g, s = sess.run([gathered, stacked])
        np.testing.assert_array_equal(g, [[3.0, 4.0], [1.0, 2.0]])
        np.testing.assert_array_equal(s, [[1.0, 2.0], [3.0, 4.0]])
