"""tf.contrib.legacy_seq2seq against NumPy unrolls."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.contrib import legacy_seq2seq as legacy

RNG = np.random.RandomState(5)


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _values(sess):
    return {v.op.name: sess.run(v) for v in tf.global_variables()}


def _rnn(x, h, w, prefix):
    return np.tanh(np.concatenate([x, h], 1) @ w[prefix + "kernel"] + w[prefix + "bias"])


def test_sequence_loss_by_example_and_sequence_loss():
    logits = [RNG.randn(3, 4) for _ in range(2)]
    targets = [RNG.randint(0, 4, 3) for _ in range(2)]
    weights = [np.array([1.0, 0.5, 0.0]), np.array([1.0, 1.0, 0.0])]
    with tf.Graph().as_default():
        args = ([tf.constant(x) for x in logits], [tf.constant(t) for t in targets],
                [tf.constant(w) for w in weights])
        per_example = legacy.sequence_loss_by_example(*args)
        summed = legacy.sequence_loss_by_example(*args, average_across_timesteps=False)
        total = legacy.sequence_loss(*args)
        no_batch_avg = legacy.sequence_loss(*args, average_across_batch=False)
        got = tf.Session().run([per_example, summed, total, no_batch_avg])
        with pytest.raises(ValueError, match="must be the same"):
            legacy.sequence_loss_by_example(args[0], args[1][:1], args[2])
    ce = [-np.log(softmax(x))[np.arange(3), t] * w for x, t, w in zip(logits, targets, weights)]
    want_sum = ce[0] + ce[1]
    want = want_sum / (weights[0] + weights[1] + 1e-12)
    np.testing.assert_allclose(got[0], want, rtol=1e-10)
    np.testing.assert_allclose(got[1], want_sum, rtol=1e-10)
    np.testing.assert_allclose(got[2], want.sum() / 3, rtol=1e-10)
    np.testing.assert_allclose(got[3], want.sum(), rtol=1e-10)


def test_rnn_decoder_with_a_loop_function_feeds_back_outputs():
    x0 = RNG.randn(2, 3)
    h0 = RNG.randn(2, 3)
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.BasicRNNCell(3)
        outputs, state = legacy.rnn_decoder([tf.constant(x0)] * 3, tf.constant(h0), cell,
                                            loop_function=lambda prev, i: prev * 2.0)
        assert sorted(v.op.name for v in tf.global_variables()) == [
            "rnn_decoder/basic_rnn_cell/bias", "rnn_decoder/basic_rnn_cell/kernel"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w = _values(sess)
            got, final = sess.run([outputs, state])
    h, x = h0, x0
    for t in range(3):
        h = _rnn(x, h, w, "rnn_decoder/basic_rnn_cell/")
        np.testing.assert_allclose(got[t], h, rtol=1e-10)
        x = h * 2.0
    np.testing.assert_allclose(final, h, rtol=1e-10)


def test_basic_and_tied_seq2seq_variables_and_values():
    enc = [RNG.randn(2, 3) for _ in range(2)]
    dec = [RNG.randn(2, 3) for _ in range(2)]
    with tf.Graph().as_default():
        outputs, _ = legacy.basic_rnn_seq2seq([tf.constant(x) for x in enc],
                                              [tf.constant(x) for x in dec],
                                              tf.nn.rnn_cell.BasicRNNCell(3), dtype=tf.float64)
        tied, _ = legacy.tied_rnn_seq2seq([tf.constant(x) for x in enc],
                                          [tf.constant(x) for x in dec],
                                          tf.nn.rnn_cell.BasicRNNCell(3), dtype=tf.float64)
        names = sorted(v.op.name for v in tf.global_variables())
        assert names == [
            "basic_rnn_seq2seq/rnn/basic_rnn_cell/bias",
            "basic_rnn_seq2seq/rnn/basic_rnn_cell/kernel",
            "basic_rnn_seq2seq/rnn_decoder/basic_rnn_cell/bias",
            "basic_rnn_seq2seq/rnn_decoder/basic_rnn_cell/kernel",
            "combined_tied_rnn_seq2seq/tied_rnn_seq2seq/basic_rnn_cell/bias",
            "combined_tied_rnn_seq2seq/tied_rnn_seq2seq/basic_rnn_cell/kernel"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w = _values(sess)
            got, got_tied = sess.run([outputs, tied])
    for prefix_enc, prefix_dec, result in [
            ("basic_rnn_seq2seq/rnn/basic_rnn_cell/",
             "basic_rnn_seq2seq/rnn_decoder/basic_rnn_cell/", got),
            ("combined_tied_rnn_seq2seq/tied_rnn_seq2seq/basic_rnn_cell/",
             "combined_tied_rnn_seq2seq/tied_rnn_seq2seq/basic_rnn_cell/", got_tied)]:
        h = np.zeros((2, 3))
        for x in enc:
            h = _rnn(x, h, w, prefix_enc)
        for t, x in enumerate(dec):
            h = _rnn(x, h, w, prefix_dec)
            np.testing.assert_allclose(result[t], h, rtol=1e-10)


def _embedding_seq2seq_reference(w, enc, dec, feed_previous, scope="embedding_rnn_seq2seq/"):
    wrapper = scope + "rnn/embedding_wrapper/"
    h = np.zeros((2, 3))
    for ids in enc:
        h = _rnn(w[wrapper + "embedding"][ids], h, w, wrapper + "basic_rnn_cell/")
    decoder = scope + "embedding_rnn_decoder/"
    proj = decoder + "rnn_decoder/output_projection_wrapper/"
    outputs = []
    x = w[decoder + "embedding"][dec[0]]
    for t in range(len(dec)):
        if t > 0:
            x = w[decoder + "embedding"][outputs[-1].argmax(1) if feed_previous else dec[t]]
        h = _rnn(x, h, w, proj + "basic_rnn_cell/")
        outputs.append(h @ w[proj + "kernel"] + w[proj + "bias"])
    return outputs, h


@pytest.mark.parametrize("feed_previous", [False, True])
def test_embedding_rnn_seq2seq_against_numpy(feed_previous):
    enc = [RNG.randint(0, 5, 2) for _ in range(3)]
    dec = [RNG.randint(0, 6, 2) for _ in range(3)]
    with tf.Graph().as_default():
        outputs, state = legacy.embedding_rnn_seq2seq(
            [tf.constant(i) for i in enc], [tf.constant(i) for i in dec],
            tf.nn.rnn_cell.BasicRNNCell(3), 5, 6, 4, feed_previous=feed_previous,
            dtype=tf.float64)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w = _values(sess)
            got, final = sess.run([outputs, state])
    want, h = _embedding_seq2seq_reference(w, enc, dec, feed_previous)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-9)
    np.testing.assert_allclose(final, h, rtol=1e-9)


def test_embedding_rnn_seq2seq_feed_previous_tensor_builds_both_decoders():
    enc = [RNG.randint(0, 5, 2) for _ in range(2)]
    dec = [RNG.randint(0, 6, 2) for _ in range(3)]
    with tf.Graph().as_default():
        flag = tf.placeholder(tf.bool, [])
        outputs, state = legacy.embedding_rnn_seq2seq(
            [tf.constant(i) for i in enc], [tf.constant(i) for i in dec],
            tf.nn.rnn_cell.BasicRNNCell(3), 5, 6, 4, feed_previous=flag, dtype=tf.float64)
        names = [v.op.name for v in tf.trainable_variables()]
        assert len(names) == 8 and not any("_1" in n for n in names)  # both decoders share
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w = _values(sess)
            for value in (True, False):
                got = sess.run(outputs, {flag: value})
                want, _ = _embedding_seq2seq_reference(w, enc, dec, value)
                for g, e in zip(got, want):
                    np.testing.assert_allclose(g, e, rtol=1e-9)


def test_output_projection_is_used_when_feeding_previous():
    dec = [RNG.randint(0, 6, 2) for _ in range(2)]
    with tf.Graph().as_default():
        proj_w = tf.constant(RNG.randn(3, 6))
        proj_b = tf.constant(RNG.randn(6))
        outputs, _ = legacy.embedding_rnn_decoder(
            [tf.constant(i) for i in dec], tf.zeros([2, 3], tf.float64),
            tf.nn.rnn_cell.BasicRNNCell(3), 6, 4, output_projection=(proj_w, proj_b),
            feed_previous=True, scope=tf.VariableScope(None, "dec", dtype=tf.float64))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w = _values(sess)
            got, pw, pb = sess.run([outputs, proj_w, proj_b])
    assert got[0].shape == (2, 3)
    h = _rnn(w["dec/embedding"][dec[0]], np.zeros((2, 3)), w, "dec/rnn_decoder/basic_rnn_cell/")
    np.testing.assert_allclose(got[0], h, rtol=1e-9)
    x = w["dec/embedding"][(h @ pw + pb).argmax(1)]
    h = _rnn(x, h, w, "dec/rnn_decoder/basic_rnn_cell/")
    np.testing.assert_allclose(got[1], h, rtol=1e-9)


def test_attention_decoder_against_numpy():
    states = RNG.randn(2, 4, 3)
    inputs = [RNG.randn(2, 2) for _ in range(2)]
    with tf.Graph().as_default():
        outputs, state = legacy.attention_decoder(
            [tf.constant(x) for x in inputs], tf.zeros([2, 3], tf.float64),
            tf.constant(states), tf.nn.rnn_cell.BasicRNNCell(3), output_size=5,
            dtype=tf.float64)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w = {k[len("attention_decoder/"):]: v for k, v in _values(sess).items()}
            got = sess.run(outputs)
    assert sorted(w) == sorted(["AttnW_0", "AttnV_0", "kernel", "bias", "Attention_0/kernel",
                                "Attention_0/bias", "basic_rnn_cell/kernel",
                                "basic_rnn_cell/bias", "AttnOutputProjection/kernel",
                                "AttnOutputProjection/bias"])
    features = states @ w["AttnW_0"][0, 0]
    h = np.zeros((2, 3))
    read = np.zeros((2, 3))
    for t, x in enumerate(inputs):
        mixed = np.concatenate([x, read], 1) @ w["kernel"] + w["bias"]
        h = _rnn(mixed, h, w, "basic_rnn_cell/")
        y = h @ w["Attention_0/kernel"] + w["Attention_0/bias"]
        scores = (w["AttnV_0"] * np.tanh(features + y[:, None])).sum(2)
        read = (softmax(scores)[..., None] * states).sum(1)
        out = np.concatenate([h, read], 1) @ w["AttnOutputProjection/kernel"] \
            + w["AttnOutputProjection/bias"]
        np.testing.assert_allclose(got[t], out, rtol=1e-9)
    with pytest.raises(ValueError, match="at least 1 input"):
        legacy.attention_decoder([], None, tf.constant(states), tf.nn.rnn_cell.GRUCell(3))


def test_model_with_buckets_shares_variables_and_learns_to_copy():
    vocab, length, batch = 5, 3, 16
    rng = np.random.RandomState(0)
    with tf.Graph().as_default():
        tf.set_random_seed(2)
        enc = [tf.placeholder(tf.int32, [batch]) for _ in range(length)]
        dec = [tf.zeros([batch], tf.int32)] + enc[:-1]
        weights = [tf.ones([batch]) for _ in range(length)]

        def model(e, d):
            return legacy.embedding_attention_seq2seq(e, d, tf.nn.rnn_cell.GRUCell(16), vocab,
                                                      vocab, 8)

        outputs, losses = legacy.model_with_buckets(enc, dec, enc, weights,
                                                    [(2, 2), (length, length)], model)
        assert len(outputs[0]) == 2 and len(outputs[1]) == length
        names = [v.op.name for v in tf.trainable_variables()]
        # encoder: embedding + 4 GRU; decoder: embedding, AttnW/V, input mix (2), 4 GRU,
        # projection wrapper (2), Attention_0 (2), AttnOutputProjection (2): one set only.
        assert len(names) == 20 and not any("_1/" in n for n in names), names
        train = tf.train.AdamOptimizer(0.05).minimize(losses[1])
        with pytest.raises(ValueError, match="last bucket"):
            legacy.model_with_buckets(enc, dec, enc[:1], weights, [(2, 2)], model)
        used = tf.nn.rnn_cell.GRUCell(4)
        used(tf.zeros([1, 2]), tf.zeros([1, 4]))
        with pytest.raises(ValueError, match="Create a new cell"):
            legacy.embedding_rnn_seq2seq(enc, dec, used, vocab, vocab, 3)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            history = []
            for _ in range(30):
                data = rng.randint(0, vocab, (length, batch))
                history.append(sess.run([losses[1], train],
                                        dict(zip(enc, data)))[0])
    assert history[0] > 1.2
    assert np.mean(history[-5:]) < 0.5 * history[0], history


def test_a_char_rnn_program_runs_unchanged_with_tf_variable_names():
    # The model of the well-known char-rnn-tensorflow program (MultiRNNCell of
    # BasicLSTMCells, rnn_decoder under "rnnlm", sequence_loss_by_example), trained on a
    # repeating sequence with the state carried between batches.
    from tensorflux.contrib import rnn

    batch_size, seq_length, vocab_size, rnn_size = 8, 6, 5, 16
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        cell = rnn.MultiRNNCell([rnn.BasicLSTMCell(rnn_size) for _ in range(2)],
                                state_is_tuple=True)
        input_data = tf.placeholder(tf.int32, [batch_size, seq_length])
        targets = tf.placeholder(tf.int32, [batch_size, seq_length])
        initial_state = cell.zero_state(batch_size, tf.float32)
        with tf.variable_scope("rnnlm"):
            softmax_w = tf.get_variable("softmax_w", [rnn_size, vocab_size])
            softmax_b = tf.get_variable("softmax_b", [vocab_size])
        embedding = tf.get_variable("embedding", [vocab_size, rnn_size])
        inputs = tf.split(tf.nn.embedding_lookup(embedding, input_data), seq_length, 1)
        inputs = [tf.squeeze(input_, [1]) for input_ in inputs]
        outputs, last_state = legacy.rnn_decoder(inputs, initial_state, cell, scope="rnnlm")
        output = tf.reshape(tf.concat(outputs, 1), [-1, rnn_size])
        logits = tf.matmul(output, softmax_w) + softmax_b
        loss = legacy.sequence_loss_by_example([logits], [tf.reshape(targets, [-1])],
                                               [tf.ones([batch_size * seq_length])])
        cost = tf.reduce_sum(loss) / batch_size / seq_length
        tvars = tf.trainable_variables()
        grads, _ = tf.clip_by_global_norm(tf.gradients(cost, tvars), 5.0)
        train_op = tf.train.AdamOptimizer(0.02).apply_gradients(zip(grads, tvars))
        assert sorted(v.op.name for v in tvars) == [
            "embedding", "rnnlm/multi_rnn_cell/cell_0/basic_lstm_cell/bias",
            "rnnlm/multi_rnn_cell/cell_0/basic_lstm_cell/kernel",
            "rnnlm/multi_rnn_cell/cell_1/basic_lstm_cell/bias",
            "rnnlm/multi_rnn_cell/cell_1/basic_lstm_cell/kernel", "rnnlm/softmax_b",
            "rnnlm/softmax_w"]
        data = np.tile(np.arange(vocab_size), 100)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            state = sess.run(initial_state)
            costs = []
            for step in range(40):
                start = (step * seq_length) % 400
                x = np.stack([data[start + i:start + i + seq_length] for i in range(8)])
                feed = {input_data: x, targets: (x + 1) % vocab_size}
                for i, (c, h) in enumerate(initial_state):
                    feed[c], feed[h] = state[i].c, state[i].h
                value, state, _ = sess.run([cost, last_state, train_op], feed)
                costs.append(value)
    assert costs[0] > 1.4
    assert np.mean(costs[-5:]) < 0.2 * costs[0], costs


@pytest.mark.parametrize("feed_previous", [False, True, "tensor"])
def test_embedding_tied_rnn_seq2seq_against_numpy(feed_previous):
    enc = [RNG.randint(0, 5, 2) for _ in range(2)]
    dec = [RNG.randint(0, 5, 2) for _ in range(3)]
    with tf.Graph().as_default():
        flag = tf.placeholder(tf.bool, []) if feed_previous == "tensor" else feed_previous
        outputs, _ = legacy.embedding_tied_rnn_seq2seq(
            [tf.constant(i) for i in enc], [tf.constant(i) for i in dec],
            tf.nn.rnn_cell.BasicRNNCell(3), 5, 4, dtype=tf.float64, feed_previous=flag)
        scope = "embedding_tied_rnn_seq2seq/combined_tied_rnn_seq2seq/tied_rnn_seq2seq/"
        assert sorted(v.op.name for v in tf.global_variables()) == sorted(
            ["embedding_tied_rnn_seq2seq/embedding"]
            + [scope + "output_projection_wrapper/" + n for n in
               ("kernel", "bias", "basic_rnn_cell/kernel", "basic_rnn_cell/bias")])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w = _values(sess)
            runs = [(True, sess.run(outputs, {flag: True})),
                    (False, sess.run(outputs, {flag: False}))] \
                if feed_previous == "tensor" else [(feed_previous, sess.run(outputs))]
    emb = w["embedding_tied_rnn_seq2seq/embedding"]
    p = scope + "output_projection_wrapper/"
    for fed, got in runs:
        h = np.zeros((2, 3))
        for ids in enc:
            h = _rnn(emb[ids], h, w, p + "basic_rnn_cell/")
        prev = None
        for t, ids in enumerate(dec):
            x = emb[prev.argmax(1)] if fed and prev is not None else emb[ids]
            h = _rnn(x, h, w, p + "basic_rnn_cell/")
            prev = h @ w[p + "kernel"] + w[p + "bias"]
            np.testing.assert_allclose(got[t], prev, rtol=1e-9)


def test_one2many_rnn_seq2seq_decoders_share_the_encoder():
    enc = [RNG.randint(0, 5, 2) for _ in range(2)]
    dec = {"a": [RNG.randint(0, 4, 2) for _ in range(2)],
           "b": [RNG.randint(0, 6, 2) for _ in range(1)]}
    with tf.Graph().as_default():
        outputs, states = legacy.one2many_rnn_seq2seq(
            [tf.constant(i) for i in enc], {k: [tf.constant(i) for i in v] for k, v in
                                            dec.items()},
            tf.nn.rnn_cell.BasicRNNCell(3), {"a": tf.nn.rnn_cell.BasicRNNCell(3),
                                             "b": tf.nn.rnn_cell.BasicRNNCell(3)},
            5, {"a": 4, "b": 6}, 2, dtype=tf.float64)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w = _values(sess)
            got = sess.run(outputs)
        with pytest.raises(ValueError, match="keys"):
            legacy.one2many_rnn_seq2seq([], {"a": []}, tf.nn.rnn_cell.GRUCell(1), {}, 1, {}, 1)
    root = "one2many_rnn_seq2seq/"
    h = np.zeros((2, 3))
    for ids in enc:
        h = _rnn(w[root + "rnn/embedding_wrapper/embedding"][ids], h, w,
                 root + "rnn/embedding_wrapper/basic_rnn_cell/")
    for name, symbols in (("a", 4), ("b", 6)):
        scope = f"{root}one2many_decoder_{name}/embedding_rnn_decoder/"
        proj = scope + "rnn_decoder/output_projection_wrapper/"
        state = h
        for t, ids in enumerate(dec[name]):
            state = _rnn(w[scope + "embedding"][ids], state, w, proj + "basic_rnn_cell/")
            want = state @ w[proj + "kernel"] + w[proj + "bias"]
            assert want.shape == (2, symbols)
            np.testing.assert_allclose(got[name][t], want, rtol=1e-9)
