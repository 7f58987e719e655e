"""tf.contrib.seq2seq against NumPy: losses, decoding, attention, beam search, gradients."""

import itertools

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.contrib import seq2seq

COVERED_OPS = {"GatherTree"}
RNG = np.random.RandomState(11)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _values(sess):
    return {v.op.name: sess.run(v) for v in tf.global_variables()}


# ---------------------------------------------------------------- sequence_loss

def _np_crossent(logits, targets):
    logp = np.log(softmax(logits))
    return -np.take_along_axis(logp, targets[..., None], -1)[..., 0]


@pytest.mark.parametrize("avg_t,avg_b,sum_t,sum_b", [
    (True, True, False, False), (False, False, True, True), (True, False, False, False),
    (False, True, False, False), (False, False, True, False), (False, False, False, True),
    (False, False, False, False), (True, False, False, True)])
def test_sequence_loss_reductions(avg_t, avg_b, sum_t, sum_b):
    logits = RNG.randn(3, 4, 5)
    targets = RNG.randint(0, 5, (3, 4))
    weights = (RNG.rand(3, 4) > 0.3).astype(np.float64) * RNG.rand(3, 4)
    weights[0, 0] = 0.0
    with tf.Graph().as_default():
        loss = seq2seq.sequence_loss(tf.constant(logits), tf.constant(targets),
                                     tf.constant(weights), average_across_timesteps=avg_t,
                                     average_across_batch=avg_b, sum_over_timesteps=sum_t,
                                     sum_over_batch=sum_b)
        got = tf.Session().run(loss)
    ce = _np_crossent(logits, targets) * weights
    if avg_t and avg_b:
        want = ce.sum() / weights.sum()
    elif sum_t and sum_b:
        want = ce.sum() / np.count_nonzero(weights)
    elif avg_t or avg_b:
        axis = 0 if avg_b else 1
        want = ce.sum(axis) / weights.sum(axis)
    elif sum_t or sum_b:
        axis = 0 if sum_b else 1
        want = ce.sum(axis) / np.count_nonzero(weights, axis)
    else:
        want = ce
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_sequence_loss_custom_loss_function_and_errors():
    logits = RNG.randn(2, 3, 4)
    targets = RNG.randint(0, 4, (2, 3))
    with tf.Graph().as_default():
        seen = {}

        def loss_fn(labels, logits):
            seen["shapes"] = (labels.get_shape().as_list(), logits.get_shape().as_list())
            return tf.cast(labels, tf.float64) * 2.0

        loss = seq2seq.sequence_loss(tf.constant(logits), tf.constant(targets), tf.ones([2, 3],
                                     tf.float64), softmax_loss_function=loss_fn)
        np.testing.assert_allclose(tf.Session().run(loss), (targets * 2.0).mean())
        assert seen["shapes"][1][1] is None or seen["shapes"][1][1] == 4
        with pytest.raises(ValueError, match="Logits must be"):
            seq2seq.sequence_loss(tf.zeros([2, 3]), tf.zeros([2, 3], tf.int32), tf.ones([2, 3]))
        with pytest.raises(ValueError, match="Weights must be"):
            seq2seq.sequence_loss(tf.zeros([2, 3, 4]), tf.zeros([2, 3], tf.int32), tf.ones([2]))
        with pytest.raises(ValueError, match="cannot be set to True"):
            seq2seq.sequence_loss(tf.zeros([2, 3, 4]), tf.zeros([2, 3], tf.int32),
                                  tf.ones([2, 3]), sum_over_timesteps=True)


# ---------------------------------------------------------------- BasicDecoder + TrainingHelper

def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _np_lstm(x, c, h, kernel, bias):
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ kernel + bias, 4, axis=1)
    c = c * sigmoid(f + 1.0) + sigmoid(i) * np.tanh(j)
    return c, np.tanh(c) * sigmoid(o)


@pytest.mark.parametrize("impute_finished", [False, True])
def test_training_helper_decoding_matches_a_numpy_unroll(impute_finished):
    inputs = RNG.randn(2, 4, 3)
    lengths = np.array([4, 2])
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.BasicLSTMCell(5)
        helper = seq2seq.TrainingHelper(tf.constant(inputs), lengths)
        decoder = seq2seq.BasicDecoder(cell, helper, cell.zero_state(2, tf.float64),
                                       output_layer=tf.layers.Dense(6))
        assert decoder.output_size.rnn_output.as_list() == [6]
        outputs, state, seq_lengths = seq2seq.dynamic_decode(
            decoder, impute_finished=impute_finished)
        again = seq2seq.BasicDecoder(cell, seq2seq.TrainingHelper(tf.constant(inputs), lengths),
                                     cell.zero_state(2, tf.float64),
                                     output_layer=decoder._output_layer)
        major, _, _ = seq2seq.dynamic_decode(again, output_time_major=True,
                                             impute_finished=impute_finished)
        assert sorted(v.op.name for v in tf.global_variables()) == [
            "decoder/basic_lstm_cell/bias", "decoder/basic_lstm_cell/kernel",
            "decoder/dense/bias", "decoder/dense/kernel"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w = _values(sess)
            out, final, got_lengths, out_major = sess.run([outputs, state, seq_lengths, major])
    np.testing.assert_array_equal(got_lengths, lengths)
    assert out.rnn_output.shape == (2, 4, 6)
    c = h = np.zeros((2, 5))
    for t in range(4):
        new_c, new_h = _np_lstm(inputs[:, t], c, h, w["decoder/basic_lstm_cell/kernel"],
                                w["decoder/basic_lstm_cell/bias"])
        logits = new_h @ w["decoder/dense/kernel"] + w["decoder/dense/bias"]
        live = (t < lengths)[:, None]
        want = np.where(live, logits, 0.0) if impute_finished else logits
        np.testing.assert_allclose(out.rnn_output[:, t], want, rtol=1e-9, atol=1e-12)
        ids = np.where(live[:, 0], logits.argmax(-1), 0) if impute_finished \
            else logits.argmax(-1)
        np.testing.assert_array_equal(out.sample_id[:, t], ids)
        if impute_finished:
            new_c, new_h = np.where(live, new_c, c), np.where(live, new_h, h)
        c, h = new_c, new_h
    np.testing.assert_allclose(final.c, c, rtol=1e-9)
    np.testing.assert_allclose(np.swapaxes(out_major.rnn_output, 0, 1), out.rnn_output,
                               rtol=1e-12)


def test_dynamic_decode_maximum_iterations_and_type_errors():
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.GRUCell(3)
        helper = seq2seq.TrainingHelper(tf.ones([2, 6, 2]), [6, 5])
        decoder = seq2seq.BasicDecoder(cell, helper, cell.zero_state(2, tf.float32))
        outputs, _, lengths = seq2seq.dynamic_decode(decoder, maximum_iterations=3)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out, got = sess.run([outputs, lengths])
        assert out.rnn_output.shape == (2, 3, 3)
        np.testing.assert_array_equal(got, [3, 3])
        with pytest.raises(TypeError, match="Decoder"):
            seq2seq.dynamic_decode(cell)
        with pytest.raises(ValueError, match="scalar"):
            seq2seq.dynamic_decode(decoder, maximum_iterations=[1, 2])
        with pytest.raises(TypeError, match="Helper"):
            seq2seq.BasicDecoder(cell, object(), cell.zero_state(2, tf.float32))


# ---------------------------------------------------------------- a hand-made Markov model

class MarkovCell(tf.nn.rnn_cell.RNNCell):
    """Inputs are one-hot previous tokens; the logits are the log transition probabilities."""

    def __init__(self, log_table):
        super().__init__()
        self._table = log_table

    @property
    def state_size(self):
        return 1

    @property
    def output_size(self):
        return self._table.shape[1]

    def build(self, input_shape):
        self.built = True

    def call(self, inputs, state):
        return tf.matmul(inputs, tf.constant(self._table)), state + 1.0


# token 0 = GO, 1 = EOS, 2 = A, 3 = B. Greedy takes A (0.55) but A's continuations are poor;
# B (0.45) ends almost surely: the best complete sequence is "B EOS".
TABLE = np.log(np.array([
    [0.00001, 0.00001, 0.55, 0.44998],
    [0.97, 0.01, 0.01, 0.01],
    [0.00001, 0.3, 0.34999, 0.35],
    [0.00001, 0.99, 0.00499, 0.005]]))
TABLE = TABLE - np.log(np.exp(TABLE).sum(1, keepdims=True))


def _best_sequences(max_len, penalty=0.0):
    """Brute force over complete sequences (ending with EOS) of up to max_len tokens."""
    results = []
    for n in range(1, max_len + 1):
        for seq in itertools.product(range(4), repeat=n):
            if seq[-1] != 1 or 1 in seq[:-1]:
                continue
            logp, prev = 0.0, 0
            for tok in seq:
                logp += TABLE[prev, tok]
                prev = tok
            results.append((logp / ((5.0 + n) / 6.0) ** penalty, seq, logp))
    return sorted(results, reverse=True)


def test_greedy_embedding_helper_follows_the_argmax():
    with tf.Graph().as_default():
        cell = MarkovCell(TABLE)
        helper = seq2seq.GreedyEmbeddingHelper(tf.eye(4, dtype=tf.float64), [0, 3], 1)
        decoder = seq2seq.BasicDecoder(cell, helper, tf.zeros([2, 1], tf.float64))
        outputs, state, lengths = seq2seq.dynamic_decode(decoder, maximum_iterations=6)
        out, final, got_lengths = tf.Session().run([outputs, state, lengths])
    # From GO: A (0.55), then B (A -> B is 0.35 > A -> A), then EOS. From B: EOS at once;
    # a finished entry keeps being fed while the other runs (EOS -> GO -> A).
    np.testing.assert_array_equal(out.sample_id[0], [2, 3, 1])
    np.testing.assert_array_equal(out.sample_id[1], [1, 0, 2])
    np.testing.assert_array_equal(got_lengths, [3, 1])
    np.testing.assert_allclose(out.rnn_output[0, 0], TABLE[0])
    with pytest.raises(ValueError, match="start_tokens"):
        seq2seq.GreedyEmbeddingHelper(tf.eye(4), [[0]], 1)


def test_sample_embedding_helper_samples_from_the_softmax():
    table = np.log(np.array([[0.0001, 0.2, 0.7999, 0.0], [1, 0, 0, 0], [1, 0, 0, 0],
                             [1, 0, 0, 0]]) + 1e-12)
    with tf.Graph().as_default():
        helper = seq2seq.SampleEmbeddingHelper(tf.eye(4, dtype=tf.float64), tf.zeros([400],
                                               tf.int32), 1, seed=3)
        decoder = seq2seq.BasicDecoder(MarkovCell(table), helper, tf.zeros([400, 1],
                                       tf.float64))
        outputs, _, _ = seq2seq.dynamic_decode(decoder, maximum_iterations=1)
        first = tf.Session().run(outputs.sample_id)[:, 0]
    assert set(first) <= {1, 2}
    assert 0.7 < np.mean(first == 2) < 0.9


@pytest.mark.parametrize("penalty", [0.0, 1.0])
def test_beam_search_finds_the_best_sequence_that_greedy_misses(penalty):
    beam_width = 3
    with tf.Graph().as_default():
        decoder = seq2seq.BeamSearchDecoder(
            MarkovCell(TABLE), tf.eye(4, dtype=tf.float64), [0], 1,
            tf.zeros([beam_width, 1], tf.float64), beam_width, length_penalty_weight=penalty)
        outputs, state, _ = seq2seq.dynamic_decode(decoder, maximum_iterations=4)
        out, final = tf.Session().run([outputs, state])
    best = _best_sequences(4, penalty)
    ids = out.predicted_ids[0]                       # [time, beam]
    first = tuple(int(t) for t in ids[:, 0])
    assert first[:2] == best[0][1] == (3, 1)
    step_scores = out.beam_search_decoder_output.scores[0]
    np.testing.assert_allclose(step_scores[-1, 0], best[0][0], rtol=1e-6)  # float32 penalty
    np.testing.assert_allclose(final.log_probs[0, 0], best[0][2], rtol=1e-9)
    assert final.lengths[0, 0] == 2 and final.finished.all()
    # The second beam is the next best complete sequence the search kept.
    second = tuple(int(t) for t in ids[:, 1] if t != 1) + (1,)
    assert second in [seq for _, seq, _ in best[:4]]


def _np_gather_tree(step_ids, parent_ids, lengths, end_token):
    max_time, batch, beam = step_ids.shape
    out = np.full_like(step_ids, end_token)
    for b in range(batch):
        n = min(lengths[b], max_time)
        for k in range(beam):
            parent = k
            for t in range(n - 1, -1, -1):
                out[t, b, k] = step_ids[t, b, parent]
                parent = parent_ids[t, b, parent]
            seen_end = False
            for t in range(n):
                if seen_end:
                    out[t, b, k] = end_token
                seen_end = seen_end or out[t, b, k] == end_token
    return out


def test_gather_tree_matches_a_numpy_backtrack():
    step_ids = RNG.randint(0, 6, (5, 3, 4)).astype(np.int32)
    parent_ids = RNG.randint(0, 4, (5, 3, 4)).astype(np.int32)
    lengths = np.array([5, 3, 0], np.int32)
    with tf.Graph().as_default():
        beams = seq2seq.gather_tree(step_ids, parent_ids, lengths, 5)
        assert beams.get_shape().as_list() == [5, 3, 4]
        got = tf.Session().run(beams)
        np.testing.assert_array_equal(got, _np_gather_tree(step_ids, parent_ids, lengths, 5))
        bad = parent_ids.copy()
        bad[4, 0, :] = 9
        with pytest.raises(tf.errors.InvalidArgumentError, match="invalid parent id"):
            tf.Session().run(seq2seq.gather_tree(step_ids, bad, lengths, 5))
        with pytest.raises(ValueError):
            seq2seq.gather_tree(step_ids, parent_ids, [1, 2], 5)


def test_tile_batch_repeats_each_entry():
    x = RNG.randn(2, 3)
    with tf.Graph().as_default():
        tiled = seq2seq.tile_batch((tf.constant(x), tf.constant([4, 5])), 3)
        assert tiled[0].get_shape().as_list() == [6, 3]
        a, b = tf.Session().run(tiled)
    np.testing.assert_array_equal(a, np.repeat(x, 3, axis=0))
    np.testing.assert_array_equal(b, [4, 4, 4, 5, 5, 5])


# ---------------------------------------------------------------- attention

def _attention_setup(mechanism_fn):
    memory = RNG.randn(2, 4, 3)
    query = RNG.randn(2, 5)
    with tf.Graph().as_default():
        mechanism = mechanism_fn(tf.constant(memory), [4, 2])
        alignments, _ = mechanism(tf.constant(query), state=None)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return memory, query, _values(sess), sess.run(alignments)


def _masked_softmax(score, lengths):
    mask = np.arange(score.shape[1])[None] < np.array(lengths)[:, None]
    return softmax(np.where(mask, score, -np.inf))


@pytest.mark.parametrize("normalize", [False, True])
def test_bahdanau_attention_scores(normalize):
    memory, query, w, got = _attention_setup(
        lambda m, n: seq2seq.BahdanauAttention(5, m, memory_sequence_length=n,
                                               normalize=normalize))
    names = {"memory_layer/kernel", "bahdanau_attention/query_layer/kernel",
             "bahdanau_attention/attention_v"}
    if normalize:
        names |= {"bahdanau_attention/attention_g", "bahdanau_attention/attention_b"}
    assert set(w) == names
    mask = (np.arange(4)[None] < np.array([4, 2])[:, None])[..., None]
    keys = (memory * mask) @ w["memory_layer/kernel"]
    processed = (query @ w["bahdanau_attention/query_layer/kernel"])[:, None]
    v = w["bahdanau_attention/attention_v"]
    if normalize:
        v = w["bahdanau_attention/attention_g"] * v / np.sqrt((v ** 2).sum())
        score = (v * np.tanh(keys + processed + w["bahdanau_attention/attention_b"])).sum(2)
        np.testing.assert_allclose(w["bahdanau_attention/attention_g"], np.sqrt(1 / 5))
    else:
        score = (v * np.tanh(keys + processed)).sum(2)
    np.testing.assert_allclose(got, _masked_softmax(score, [4, 2]), rtol=1e-9, atol=1e-15)
    assert np.all(got[1, 2:] == 0)


@pytest.mark.parametrize("scale", [False, True])
def test_luong_attention_scores(scale):
    memory, query, w, got = _attention_setup(
        lambda m, n: seq2seq.LuongAttention(5, m, memory_sequence_length=n, scale=scale))
    assert set(w) == ({"memory_layer/kernel"} | ({"luong_attention/attention_g"}
                                                  if scale else set()))
    mask = (np.arange(4)[None] < np.array([4, 2])[:, None])[..., None]
    keys = (memory * mask) @ w["memory_layer/kernel"]
    score = np.einsum("bd,btd->bt", query, keys)
    if scale:
        score = score * w["luong_attention/attention_g"]
    np.testing.assert_allclose(got, _masked_softmax(score, [4, 2]), rtol=1e-9, atol=1e-15)
    with tf.Graph().as_default():
        mechanism = seq2seq.LuongAttention(3, tf.constant(memory))
        with pytest.raises(ValueError, match="Incompatible or unknown inner dimensions"):
            mechanism(tf.constant(query), None)


def test_attention_wrapper_step_against_numpy():
    memory = RNG.randn(2, 3, 4)
    x = RNG.randn(2, 2)
    with tf.Graph().as_default():
        mechanism = seq2seq.LuongAttention(5, tf.constant(memory), memory_sequence_length=[3, 1])
        cell = seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicRNNCell(5), mechanism,
                                        attention_layer_size=6, alignment_history=True)
        assert cell.output_size == 6
        state0 = cell.zero_state(2, tf.float64)
        out1, state1 = cell(tf.constant(x), state0)
        out2, state2 = cell(tf.constant(x), state1)
        history = state2.alignment_history.stack()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w = _values(sess)
            o1, o2, s2, hist = sess.run([out1, out2, state2._replace(alignment_history=()),
                                         history])
    prefix = "attention_wrapper/"
    assert set(w) == {"memory_layer/kernel", prefix + "basic_rnn_cell/kernel",
                      prefix + "basic_rnn_cell/bias", prefix + "attention_layer/kernel"}
    mask = (np.arange(3)[None] < np.array([3, 1])[:, None])
    values = memory * mask[..., None]
    keys = values @ w["memory_layer/kernel"]
    h = np.zeros((2, 5))
    attention = np.zeros((2, 6))
    outs, aligns = [], []
    for _ in range(2):
        h = np.tanh(np.concatenate([x, attention, h], 1) @ w[prefix + "basic_rnn_cell/kernel"]
                    + w[prefix + "basic_rnn_cell/bias"])
        align = _masked_softmax(np.einsum("bd,btd->bt", h, keys), [3, 1])
        context = np.einsum("bt,btd->bd", align, values)
        attention = np.concatenate([h, context], 1) @ w[prefix + "attention_layer/kernel"]
        outs.append(attention)
        aligns.append(align)
    np.testing.assert_allclose(o1, outs[0], rtol=1e-9)
    np.testing.assert_allclose(o2, outs[1], rtol=1e-9)
    np.testing.assert_allclose(s2.cell_state, h, rtol=1e-9)
    np.testing.assert_allclose(s2.alignments, aligns[1], rtol=1e-9)
    np.testing.assert_allclose(hist, np.stack(aligns), rtol=1e-9)
    assert s2.time == 2


def test_attention_wrapper_options_and_state_clone():
    memory = RNG.randn(2, 3, 4)
    with tf.Graph().as_default():
        m1 = seq2seq.BahdanauAttention(3, tf.constant(memory))
        m2 = seq2seq.LuongAttention(4, tf.constant(memory), name="second")
        cell = seq2seq.AttentionWrapper(tf.nn.rnn_cell.GRUCell(4), [m1, m2],
                                        output_attention=False)
        assert cell.output_size == 4
        assert cell.state_size.attention == 8 and cell.state_size.alignments == (3, 3)
        encoder_state = tf.constant(RNG.randn(2, 4))
        state = cell.zero_state(2, tf.float64).clone(cell_state=encoder_state)
        out, new_state = cell(tf.ones([2, 1], tf.float64), state)
        assert len(new_state.alignments) == 2
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            o, cell_state = sess.run([out, new_state.cell_state])
        np.testing.assert_allclose(o, cell_state)
        with pytest.raises(TypeError, match="AttentionMechanism"):
            seq2seq.AttentionWrapper(tf.nn.rnn_cell.GRUCell(4), object())
        with pytest.raises(ValueError, match="exactly one"):
            seq2seq.AttentionWrapper(tf.nn.rnn_cell.GRUCell(4), [m1, m2],
                                     attention_layer_size=[3])
        with pytest.raises(TypeError, match="AttentionWrapperState"):
            cell(tf.ones([2, 1], tf.float64), encoder_state)


def test_hardmax_and_safe_cumprod():
    x = RNG.rand(3, 5)
    with tf.Graph().as_default():
        h, c = tf.Session().run([seq2seq.hardmax(tf.constant(x)),
                                 seq2seq.safe_cumprod(tf.constant(x), axis=1,
                                                      exclusive=True)])
    np.testing.assert_array_equal(h, np.eye(5)[x.argmax(1)])
    want = np.concatenate([np.ones((3, 1)), np.cumprod(x, 1)[:, :-1]], 1)
    np.testing.assert_allclose(c, want, rtol=1e-9)


# ---------------------------------------------------------------- gradients and learning

def test_gradients_through_attention_decoding_match_finite_differences():
    memory_value = RNG.randn(2, 3, 2)
    inputs_value = RNG.randn(2, 3, 2)
    with tf.Graph().as_default():
        memory = tf.placeholder(tf.float64, [2, 3, 2])
        inputs = tf.placeholder(tf.float64, [2, 3, 2])
        mechanism = seq2seq.BahdanauAttention(3, memory, memory_sequence_length=[3, 2])
        cell = seq2seq.AttentionWrapper(tf.nn.rnn_cell.GRUCell(3), mechanism,
                                        attention_layer_size=2)
        decoder = seq2seq.BasicDecoder(cell, seq2seq.TrainingHelper(inputs, [3, 2]),
                                       cell.zero_state(2, tf.float64),
                                       output_layer=tf.layers.Dense(4))
        outputs, _, _ = seq2seq.dynamic_decode(decoder, impute_finished=True)
        loss = seq2seq.sequence_loss(outputs.rnn_output, tf.constant([[1, 2, 3], [0, 1, 0]]),
                                     tf.constant([[1.0, 1, 1], [1, 1, 0]], tf.float64))
        kernel = [v for v in tf.trainable_variables() if "query_layer" in v.op.name][0]
        grads = tf.gradients(loss, [memory, inputs, kernel])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            feed = {memory: memory_value, inputs: inputs_value}
            analytic = sess.run(grads, feed)
            eps = 1e-6
            for index, (target, value) in enumerate([(memory, memory_value),
                                                     (inputs, inputs_value)]):
                numeric = np.zeros_like(value)
                for pos in np.ndindex(value.shape):
                    for sign in (1, -1):
                        shifted = value.copy()
                        shifted[pos] += sign * eps
                        numeric[pos] += sign * sess.run(loss, {**feed, target: shifted}) / (
                            2 * eps)
                np.testing.assert_allclose(analytic[index], numeric, rtol=1e-5, atol=1e-8)
            start = sess.run(kernel)
            numeric = np.zeros_like(start)
            for pos in np.ndindex(start.shape):
                values = []
                for sign in (1, -1):
                    shifted = start.copy()
                    shifted[pos] += sign * eps
                    kernel.load(shifted, sess)
                    values.append(sess.run(loss, feed))
                numeric[pos] = (values[0] - values[1]) / (2 * eps)
            kernel.load(start, sess)
            np.testing.assert_allclose(analytic[2], numeric, rtol=1e-5, atol=1e-8)
    assert np.abs(analytic[0]).sum() > 0 and np.abs(analytic[2]).sum() > 0


def test_a_copy_task_trained_with_attention_learns():
    vocab, length, batch = 6, 3, 16
    rng = np.random.RandomState(0)
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        source = tf.placeholder(tf.int32, [batch, length])
        embedding = tf.get_variable("embedding", [vocab, 8])
        memory, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(16),
                                      tf.nn.embedding_lookup(embedding, source),
                                      dtype=tf.float32, scope="encoder")
        go = tf.zeros([batch, 1], tf.int32)
        decoder_inputs = tf.nn.embedding_lookup(embedding, tf.concat([go, source[:, :-1]], 1))
        mechanism = seq2seq.LuongAttention(16, memory)
        cell = seq2seq.AttentionWrapper(tf.nn.rnn_cell.GRUCell(16), mechanism,
                                        attention_layer_size=16)
        decoder = seq2seq.BasicDecoder(
            cell, seq2seq.TrainingHelper(decoder_inputs, tf.fill([batch], length)),
            cell.zero_state(batch, tf.float32), output_layer=tf.layers.Dense(vocab))
        outputs, _, _ = seq2seq.dynamic_decode(decoder)
        loss = seq2seq.sequence_loss(outputs.rnn_output, source, tf.ones([batch, length]))
        train = tf.train.AdamOptimizer(0.06).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = []
            for _ in range(30):
                data = rng.randint(1, vocab, (batch, length))
                losses.append(sess.run([loss, train], {source: data})[0])
    assert losses[0] > 1.5
    assert np.mean(losses[-5:]) < 0.4 * losses[0], losses


@pytest.mark.parametrize("probability", [0.0, 1.0])
def test_scheduled_embedding_helper_samples_with_its_probability(probability):
    table = np.log(np.array([[1e-12, 1e-12, 1e-12, 1.0]] * 4))
    with tf.Graph().as_default():
        helper = seq2seq.ScheduledEmbeddingTrainingHelper(
            tf.constant(np.eye(4)[np.zeros((2, 3), int)]), [3, 3], tf.eye(4, dtype=tf.float64),
            probability,
            seed=1, scheduling_seed=2)
        decoder = seq2seq.BasicDecoder(MarkovCell(table), helper, tf.zeros([2, 1], tf.float64))
        outputs, _, _ = seq2seq.dynamic_decode(decoder)
        ids = tf.Session().run(outputs.sample_id)
    np.testing.assert_array_equal(ids, np.full((2, 3), -1 if probability == 0.0 else 3))


def test_scheduled_embedding_helper_feeds_embeddings_where_it_sampled():
    inputs = RNG.randn(2, 3, 4)
    embedding = RNG.randn(5, 4)
    with tf.Graph().as_default():
        helper = seq2seq.ScheduledEmbeddingTrainingHelper(
            tf.constant(inputs), [3, 3], tf.constant(embedding), 0.5)
        helper.initialize()
        finished, next_inputs, _ = helper.next_inputs(
            0, tf.zeros([2, 5], tf.float64), (), tf.constant([-1, 2], tf.int32))
        got, done = tf.Session().run([next_inputs, finished])
    np.testing.assert_allclose(got[0], inputs[0, 1])
    np.testing.assert_allclose(got[1], embedding[2])
    assert not done.any()
    with pytest.raises(ValueError, match="scalar or a vector"):
        seq2seq.ScheduledEmbeddingTrainingHelper(tf.zeros([1, 2, 3]), [2], tf.eye(3),
                                                 [[0.5]])


def _np_monotonic(p, previous):
    """attention[i] = p[i] * q[i], q[i] = (1 - p[i - 1]) q[i - 1] + previous[i]."""
    out = np.zeros_like(p)
    for b in range(p.shape[0]):
        q = 0.0
        for i in range(p.shape[1]):
            q = (1 - p[b, i - 1]) * q + previous[b, i] if i else previous[b, i]
            out[b, i] = p[b, i] * q
    return out


def test_monotonic_attention_modes_against_numpy():
    p = RNG.uniform(0.05, 0.95, (3, 5))
    previous = softmax(RNG.randn(3, 5))
    hard_p = (RNG.rand(3, 5) > 0.5).astype(np.float64)
    hard_prev = np.eye(5)[[0, 2, 4]]
    with tf.Graph().as_default():
        recursive, parallel, hard = tf.Session().run([
            seq2seq.monotonic_attention(tf.constant(p), tf.constant(previous), "recursive"),
            seq2seq.monotonic_attention(tf.constant(p), tf.constant(previous), "parallel"),
            seq2seq.monotonic_attention(tf.constant(hard_p), tf.constant(hard_prev), "hard")])
        with pytest.raises(ValueError, match="mode must be"):
            seq2seq.monotonic_attention(tf.constant(p), tf.constant(previous), "soft")
    want = _np_monotonic(p, previous)
    np.testing.assert_allclose(recursive, want, rtol=1e-10)
    np.testing.assert_allclose(parallel, want, rtol=1e-7)
    for b, start in enumerate([0, 2, 4]):
        chosen = [i for i in range(start, 5) if hard_p[b, i] == 1]
        expected = np.zeros(5)
        if chosen:
            expected[chosen[0]] = 1
        np.testing.assert_array_equal(hard[b], expected)


@pytest.mark.parametrize("kind", ["bahdanau", "luong"])
def test_monotonic_mechanisms_in_an_attention_wrapper(kind):
    memory = RNG.randn(2, 4, 3)
    with tf.Graph().as_default():
        if kind == "bahdanau":
            mechanism = seq2seq.BahdanauMonotonicAttention(3, tf.constant(memory),
                                                           memory_sequence_length=[4, 3],
                                                           score_bias_init=-1.0)
        else:
            mechanism = seq2seq.LuongMonotonicAttention(3, tf.constant(memory), scale=True,
                                                        memory_sequence_length=[4, 3],
                                                        score_bias_init=-1.0)
        cell = seq2seq.AttentionWrapper(tf.nn.rnn_cell.GRUCell(3), mechanism)
        state0 = cell.zero_state(2, tf.float64)
        _, state1 = cell(tf.ones([2, 1], tf.float64), state0)
        query = state1.cell_state
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w = _values(sess)
            initial, h, align = sess.run([state0.alignments, query, state1.alignments])
    np.testing.assert_array_equal(initial, np.eye(4)[[0, 0]])
    scope = f"attention_wrapper/{kind}_monotonic_attention/"
    np.testing.assert_allclose(w[scope + "attention_score_bias"], -1.0)
    mask = np.arange(4)[None] < np.array([4, 3])[:, None]
    keys = (memory * mask[..., None]) @ w["memory_layer/kernel"]
    if kind == "bahdanau":
        processed = h @ w[scope + "query_layer/kernel"]
        score = (w[scope + "attention_v"] * np.tanh(keys + processed[:, None])).sum(2)
    else:
        score = np.einsum("bd,btd->bt", h, keys) * w[scope + "attention_g"]
    score = np.where(mask, score + w[scope + "attention_score_bias"], -np.inf)
    want = _np_monotonic(1 / (1 + np.exp(-score)), initial)
    np.testing.assert_allclose(align, want, rtol=1e-7, atol=1e-12)
    assert align[1, 3] == 0.0


def test_gather_tree_from_array_reorders_steps_along_each_beams_ancestry():
    from tensorflux.contrib.seq2seq.beam_search_decoder import gather_tree_from_array

    steps, batch, beam = 4, 2, 3
    values = RNG.randn(steps, batch * beam, 2)
    parents = RNG.randint(0, beam, (steps, batch, beam)).astype(np.int32)
    lengths = np.array([[4, 2, 3], [1, 1, 0]], np.int64)
    with tf.Graph().as_default():
        got = tf.Session().run(gather_tree_from_array(tf.constant(values), tf.constant(parents),
                                                      tf.constant(lengths)))
    raw = values.reshape(steps, batch, beam, 2)
    want = raw.copy()
    for b in range(batch):
        longest = lengths[b].max()
        for k in range(beam):
            ancestors = np.full(steps, -1)
            if longest > 0:
                ancestors[longest - 1] = k
                parent = parents[longest - 1, b, k]
                for level in range(longest - 2, -1, -1):
                    ancestors[level] = parent
                    parent = parents[level, b, parent]
            for t in range(steps):
                want[t, b, k] = raw[t, b, ancestors[t] if t < lengths[b, k] else k]
    np.testing.assert_allclose(got, want.reshape(steps, batch * beam, 2))


def test_beam_search_with_attention_history_and_coverage_penalty():
    batch, beam, vocab = 2, 3, 6
    memory = RNG.randn(batch, 5, 4)
    with tf.Graph().as_default():
        tiled = seq2seq.tile_batch(tf.constant(memory), beam)
        mechanism = seq2seq.BahdanauAttention(6, tiled, memory_sequence_length=seq2seq.tile_batch(
            tf.constant([5, 3]), beam))
        cell = seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicLSTMCell(6), mechanism,
                                        attention_layer_size=8, alignment_history=True)
        decoder = seq2seq.BeamSearchDecoder(
            cell, tf.constant(RNG.randn(vocab, 3)), tf.fill([batch], 1), 2,
            cell.zero_state(batch * beam, tf.float64), beam,
            output_layer=tf.layers.Dense(vocab), coverage_penalty_weight=0.3,
            length_penalty_weight=0.6)
        outputs, state, _ = seq2seq.dynamic_decode(decoder, maximum_iterations=4)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            ids, history, probs = sess.run([outputs.predicted_ids,
                                            state.cell_state.alignment_history,
                                            state.accumulated_attention_probs])
    assert ids.shape[0] == batch and ids.shape[2] == beam and ids.shape[1] <= 4
    assert history.shape == (ids.shape[1], batch * beam, 5)
    np.testing.assert_allclose(history.sum(-1), 1.0, rtol=1e-9)
    assert np.all(history[:, beam:, 3:] == 0)        # batch entry 1 has 3 memory steps
    assert probs.shape == (batch, beam, 5) and np.all(probs >= 0)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="no cell is attentional"):
            seq2seq.BeamSearchDecoder(
                tf.nn.rnn_cell.GRUCell(2), tf.eye(3), [0], 1, tf.zeros([2, 2]), 2,
                coverage_penalty_weight=0.5).initialize()


def test_attention_wrapper_state_clone_checks_shapes():
    with tf.Graph().as_default():
        mechanism = seq2seq.LuongAttention(3, tf.zeros([2, 4, 3]))
        cell = seq2seq.AttentionWrapper(tf.nn.rnn_cell.GRUCell(3), mechanism)
        state = cell.zero_state(2, tf.float32)
        unknown = tf.placeholder(tf.float32, [None, None])
        cloned = state.clone(cell_state=unknown)
        assert cloned.cell_state.get_shape().as_list() == [2, 3]
        assert cloned.attention is state.attention
        with pytest.raises(ValueError):
            state.clone(cell_state=tf.zeros([5, 3]))


def test_scheduled_output_helper_feeds_outputs_with_auxiliary_inputs():
    inputs = RNG.randn(2, 3, 2)
    auxiliary = RNG.randn(2, 3, 1)
    outputs = RNG.randn(2, 2)
    with tf.Graph().as_default():
        helper = seq2seq.ScheduledOutputTrainingHelper(
            tf.constant(inputs), [3, 3], 0.5, next_inputs_fn=lambda o: o * 10.0,
            auxiliary_inputs=tf.constant(auxiliary))
        _, first = helper.initialize()
        _, next_inputs, _ = helper.next_inputs(0, tf.constant(outputs), (),
                                               tf.constant([1, 0], tf.int32))
        always = seq2seq.ScheduledOutputTrainingHelper(tf.constant(inputs), [3, 3], 1.0)
        never = seq2seq.ScheduledOutputTrainingHelper(tf.constant(inputs), [3, 3], 0.0)
        samples = [h.sample(0, tf.constant(outputs), ()) for h in (always, never)]
        got_first, got, (ones, zeros) = tf.Session().run([first, next_inputs, samples])
    np.testing.assert_allclose(got_first, np.concatenate([inputs[:, 0], auxiliary[:, 0]], 1))
    np.testing.assert_allclose(got[0], np.concatenate([outputs[0] * 10.0, auxiliary[0, 1]]))
    np.testing.assert_allclose(got[1], np.concatenate([inputs[1, 1], auxiliary[1, 1]]))
    np.testing.assert_array_equal(ones, [1, 1])
    np.testing.assert_array_equal(zeros, [0, 0])


def test_beam_search_decoder_reuses_the_training_decoders_variables():
    # The NMT-tutorial pattern: the inference decoder is built again in the training
    # decoder's scope with reuse=True, on tiled memory; no new variables appear.
    batch, beam, vocab, units = 2, 3, 7, 5
    with tf.Graph().as_default():
        memory = tf.constant(RNG.rand(batch, 4, units))
        embedding = tf.get_variable("embedding", [vocab, units], tf.float64)
        base = tf.nn.rnn_cell.LSTMCell(units)
        projection = tf.layers.Dense(vocab, use_bias=False, name="output_projection")
        with tf.variable_scope("decode"):
            cell = seq2seq.AttentionWrapper(base, seq2seq.BahdanauAttention(units, memory),
                                            attention_layer_size=units)
            helper = seq2seq.TrainingHelper(
                tf.nn.embedding_lookup(embedding, tf.zeros([batch, 3], tf.int32)), [3, 3])
            seq2seq.dynamic_decode(seq2seq.BasicDecoder(
                cell, helper, cell.zero_state(batch, tf.float64), output_layer=projection))
        trained = sorted(v.op.name for v in tf.global_variables())
        with tf.variable_scope("decode", reuse=True):
            cell = seq2seq.AttentionWrapper(
                base, seq2seq.BahdanauAttention(units, seq2seq.tile_batch(memory, beam)),
                attention_layer_size=units)
            decoder = seq2seq.BeamSearchDecoder(cell, embedding, tf.fill([batch], 1), 2,
                                                cell.zero_state(batch * beam, tf.float64),
                                                beam, output_layer=projection)
            outputs, _, _ = seq2seq.dynamic_decode(decoder, maximum_iterations=5)
        assert sorted(v.op.name for v in tf.global_variables()) == trained
        assert "decode/memory_layer/kernel" in trained
        assert "decode/decoder/attention_wrapper/bahdanau_attention/attention_v" in trained
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            ids = sess.run(outputs.predicted_ids)
    assert ids.shape[0] == batch and ids.shape[2] == beam and 1 <= ids.shape[1] <= 5


def test_attention_wrapper_with_given_layer_and_cell_input_fn():
    memory = RNG.randn(2, 3, 4)
    x = RNG.randn(2, 2)
    with tf.Graph().as_default():
        mechanism = seq2seq.LuongAttention(5, tf.constant(memory))
        layer = tf.layers.Dense(3, use_bias=False, name="my_attention")
        cell = seq2seq.AttentionWrapper(
            tf.nn.rnn_cell.BasicRNNCell(5), mechanism, attention_layer=layer,
            cell_input_fn=lambda inputs, attention: inputs * 2.0, name="attention")
        assert cell.output_size == 3
        out, state = cell(tf.constant(x), cell.zero_state(2, tf.float64))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w = _values(sess)
            got = sess.run(out)
        with pytest.raises(ValueError, match="Only one of"):
            seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicRNNCell(5), mechanism,
                                     attention_layer_size=3, attention_layer=layer)
        with pytest.raises(TypeError, match="cell_input_fn"):
            seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicRNNCell(5), mechanism,
                                     cell_input_fn=3)
    assert set(w) == {"memory_layer/kernel", "attention/basic_rnn_cell/kernel",
                      "attention/basic_rnn_cell/bias", "attention/my_attention/kernel"}
    h = np.tanh(np.concatenate([x * 2.0, np.zeros((2, 5))], 1)
                @ w["attention/basic_rnn_cell/kernel"] + w["attention/basic_rnn_cell/bias"])
    keys = memory @ w["memory_layer/kernel"]
    align = softmax(np.einsum("bd,btd->bt", h, keys))
    context = np.einsum("bt,btd->bd", align, memory)
    np.testing.assert_allclose(got, np.concatenate([h, context], 1)
                               @ w["attention/my_attention/kernel"], rtol=1e-9)


def test_custom_and_inference_helpers_drive_a_basic_decoder():
    with tf.Graph().as_default():
        start = tf.constant(np.eye(4)[[0, 3]])

        def next_inputs_fn(time, outputs, state, sample_ids):
            return tf.equal(sample_ids, 1), tf.one_hot(sample_ids, 4, dtype=tf.float64), state

        custom = seq2seq.CustomHelper(
            lambda: (tf.constant([False, False]), start),
            lambda time, outputs, state: tf.cast(tf.argmax(outputs, -1), tf.int32),
            next_inputs_fn)
        inference = seq2seq.InferenceHelper(
            sample_fn=lambda outputs: tf.one_hot(tf.argmax(outputs, -1), 4, dtype=tf.float64),
            sample_shape=[4], sample_dtype=tf.float64, start_inputs=start,
            end_fn=lambda sample_ids: tf.equal(tf.argmax(sample_ids, -1), 1))
        results = []
        for helper in (custom, inference):
            decoder = seq2seq.BasicDecoder(MarkovCell(TABLE), helper,
                                           tf.zeros([2, 1], tf.float64))
            outputs, _, lengths = seq2seq.dynamic_decode(decoder, maximum_iterations=6)
            results.append((outputs.sample_id, lengths))
        (ids, lengths), (one_hots, lengths2) = tf.Session().run(results)
    np.testing.assert_array_equal(ids[0], [2, 3, 1])          # the greedy chain again
    np.testing.assert_array_equal(lengths, [3, 1])
    np.testing.assert_array_equal(one_hots.argmax(-1)[0], [2, 3, 1])
    np.testing.assert_array_equal(lengths2, [3, 1])


def test_beam_search_decoder_argument_errors():
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.GRUCell(2)
        state = tf.zeros([2, 2])
        with pytest.raises(ValueError, match="start_tokens must be a vector"):
            seq2seq.BeamSearchDecoder(cell, tf.eye(3), [[0]], 1, state, 2)
        with pytest.raises(ValueError, match="end_token must be a scalar"):
            seq2seq.BeamSearchDecoder(cell, tf.eye(3), [0], [1], state, 2)
        with pytest.raises(TypeError, match="output_layer must be a Layer"):
            seq2seq.BeamSearchDecoder(cell, tf.eye(3), [0], 1, state, 2, output_layer=tf.tanh)
        with pytest.raises(ValueError, match="reshape"):  # a state not batch * beam
            seq2seq.BeamSearchDecoder(cell, tf.eye(3), [0], 1, tf.zeros([3, 2]), 2)


def test_sequence_loss_object_defaults_to_sums_over_non_zero_weights():
    logits = RNG.randn(2, 3, 4)
    targets = RNG.randint(0, 4, (2, 3))
    weights = np.array([[1.0, 2.0, 0.0], [0.5, 0.0, 0.0]])
    with tf.Graph().as_default():
        loss = seq2seq.SequenceLoss()
        weighted, plain = tf.Session().run([
            loss(tf.constant(targets), tf.constant(logits), tf.constant(weights)),
            loss(tf.constant(targets), tf.constant(logits))])
    ce = _np_crossent(logits, targets)
    np.testing.assert_allclose(weighted, (ce * weights).sum() / 3, rtol=1e-10)
    np.testing.assert_allclose(plain, ce.mean(), rtol=1e-10)
