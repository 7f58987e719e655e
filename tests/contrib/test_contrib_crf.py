"""tf.contrib.crf against brute-force enumeration of all tag sequences."""

import itertools

import numpy as np
import pytest

import tensorflux as tf

crf = tf.contrib.crf


def _score(x, tags, trans):
    return sum(x[t, k] for t, k in enumerate(tags)) + sum(
        trans[a, b] for a, b in zip(tags[:-1], tags[1:]))


def _brute(x, tags, length, trans):
    """(sequence score, log Z, best tags, best score) by enumeration over the first `length`."""
    if length == 0:
        return 0.0, 0.0, None, None
    x = x[:length]
    all_seqs = list(itertools.product(range(x.shape[1]), repeat=length))
    scores = np.array([_score(x, s, trans) for s in all_seqs])
    log_z = np.log(np.sum(np.exp(scores - scores.max()))) + scores.max()
    best = int(np.argmax(scores))
    return _score(x, tags[:length], trans), log_z, list(all_seqs[best]), scores[best]


def _case(seed, batch=4, steps=4, num_tags=3):
    rng = np.random.RandomState(seed)
    x = rng.randn(batch, steps, num_tags)
    tags = rng.randint(0, num_tags, size=(batch, steps))
    lengths = rng.randint(0, steps + 1, size=batch)
    lengths[0] = steps
    if batch > 2:
        lengths[1] = 1
        lengths[2] = 0
    trans = rng.randn(num_tags, num_tags)
    return x, tags, lengths, trans


@pytest.mark.parametrize("seed,steps,tag_dtype", [(0, 4, tf.int32), (1, 3, tf.int64),
                                                  (2, 1, tf.int32), (3, 5, tf.int32)])
def test_scores_and_log_likelihood_match_enumeration(seed, steps, tag_dtype):
    x, tags, lengths, trans = _case(seed, steps=steps)
    ll, t = crf.crf_log_likelihood(tf.constant(x), tf.constant(tags, tag_dtype),
                                   tf.constant(lengths), tf.constant(trans))
    score = crf.crf_sequence_score(tf.constant(x), tf.constant(tags, tag_dtype),
                                   tf.constant(lengths), tf.constant(trans))
    log_norm = crf.crf_log_norm(tf.constant(x), tf.constant(lengths), tf.constant(trans))
    with tf.Session() as sess:
        ll_v, score_v, norm_v, t_v = sess.run([ll, score, log_norm, t])
    np.testing.assert_allclose(t_v, trans)
    for b in range(x.shape[0]):
        s, z, _, _ = _brute(x[b], tags[b], lengths[b], trans)
        np.testing.assert_allclose(score_v[b], s, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(norm_v[b], z, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(ll_v[b], s - z, rtol=1e-10, atol=1e-12)


def test_unknown_max_seq_len_uses_a_cond():
    for steps in (1, 4):
        x, tags, lengths, trans = _case(5, steps=steps)
        xp = tf.placeholder(tf.float64, [None, None, None] if steps == 4 else [None, None, 3])
        tp = tf.placeholder(tf.int32, [None, None])
        ll, _ = crf.crf_log_likelihood(xp, tp, tf.constant(lengths), tf.constant(trans))
        tags_out, best = crf.crf_decode(xp, tf.constant(trans), tf.constant(lengths))
        with tf.Session() as sess:
            ll_v, tags_v, best_v = sess.run([ll, tags_out, best], {xp: x, tp: tags})
        for b in range(x.shape[0]):
            s, z, best_tags, best_score = _brute(x[b], tags[b], lengths[b], trans)
            np.testing.assert_allclose(ll_v[b], s - z, rtol=1e-10, atol=1e-12)
            if lengths[b] > 0:
                assert tags_v[b, :lengths[b]].tolist() == best_tags
                np.testing.assert_allclose(best_v[b], best_score, rtol=1e-12)


def test_multitag_score_is_logsumexp_over_allowed_sequences():
    x, _, lengths, trans = _case(6, steps=3)
    bitmap = np.random.RandomState(7).rand(*x.shape) < 0.6
    bitmap[..., 0] = True
    out = crf.crf_multitag_sequence_score(tf.constant(x), tf.constant(bitmap),
                                          tf.constant(lengths), tf.constant(trans))
    with tf.Session() as sess:
        got = sess.run(out)
    for b in range(x.shape[0]):
        n = lengths[b]
        if n == 0:
            assert got[b] == 0.0
            continue
        allowed = [s for s in itertools.product(range(3), repeat=n)
                   if all(bitmap[b, t, k] for t, k in enumerate(s))]
        scores = np.array([_score(x[b, :n], s, trans) for s in allowed])
        np.testing.assert_allclose(got[b], np.log(np.exp(scores).sum()), rtol=1e-10)


@pytest.mark.parametrize("seed,steps", [(10, 4), (11, 1), (12, 6), (13, 2)])
def test_crf_decode_matches_viterbi_decode_and_enumeration(seed, steps):
    x, _, lengths, trans = _case(seed, batch=5, steps=steps, num_tags=4)
    x *= 3.0
    tags, best = crf.crf_decode(tf.constant(x, tf.float32), tf.constant(trans, tf.float32),
                                tf.constant(lengths))
    assert tags.dtype == tf.int32
    with tf.Session() as sess:
        tags_v, best_v = sess.run([tags, best])
    assert tags_v.shape == (5, steps)
    for b in range(5):
        n = lengths[b]
        if n == 0:
            continue
        _, _, bf_tags, bf_score = _brute(x[b], np.zeros(steps, int), n, trans)
        vit, vit_score = crf.viterbi_decode(x[b, :n], trans)
        assert vit == bf_tags
        np.testing.assert_allclose(vit_score, bf_score, rtol=1e-12)
        assert tags_v[b, :n].tolist() == bf_tags
        assert (tags_v[b, n:] == 0).all()
        np.testing.assert_allclose(best_v[b], bf_score, rtol=1e-5)


def test_gradients_match_finite_differences():
    x, tags, lengths, trans = _case(20, batch=3, steps=3)
    xp = tf.placeholder(tf.float64, x.shape)
    tp = tf.placeholder(tf.float64, trans.shape)
    ll, _ = crf.crf_log_likelihood(xp, tf.constant(tags), tf.constant(lengths), tp)
    loss = tf.reduce_sum(ll * tf.constant([1.0, 0.7, -0.3], tf.float64))
    gx, gt = tf.gradients(loss, [xp, tp])
    with tf.Session() as sess:
        gx_v, gt_v = sess.run([gx, gt], {xp: x, tp: trans})

        def f(xv, tv):
            return sess.run(loss, {xp: xv, tp: tv})

        eps = 1e-6
        for idx in [(0, 0, 0), (0, 2, 1), (1, 0, 2), (1, 2, 2), (2, 1, 1)]:
            d = np.zeros_like(x)
            d[idx] = eps
            fd = (f(x + d, trans) - f(x - d, trans)) / (2 * eps)
            np.testing.assert_allclose(gx_v[idx], fd, rtol=1e-6, atol=1e-8)
        for idx in itertools.product(range(3), range(3)):
            d = np.zeros_like(trans)
            d[idx] = eps
            fd = (f(x, trans + d) - f(x, trans - d)) / (2 * eps)
            np.testing.assert_allclose(gt_v[idx], fd, rtol=1e-6, atol=1e-8)
    # Padding positions (lengths[1] == 1: steps 1 and 2) get no gradient.
    np.testing.assert_array_equal(gx_v[1, 1:], 0.0)


def test_transitions_variable_is_created_and_a_tagger_trains():
    rng = np.random.RandomState(0)
    num_tags, vocab, steps, batch = 3, 6, 5, 16
    words = rng.randint(0, vocab, size=(batch, steps))
    # The tag of each word is word % 3, except a word following tag 2 always gets tag 0:
    # the transitions must learn that.
    gold = words % num_tags
    for b in range(batch):
        for t in range(1, steps):
            if gold[b, t - 1] == 2:
                gold[b, t] = 0
    lengths = rng.randint(2, steps + 1, size=batch)
    with tf.variable_scope("tagger"):
        emb = tf.get_variable("emb", [vocab, num_tags], tf.float32,
                              initializer=tf.zeros_initializer())
        logits = tf.nn.embedding_lookup(emb, tf.constant(words))
        ll, trans = crf.crf_log_likelihood(logits, tf.constant(gold), tf.constant(lengths))
    assert trans.op.name == "tagger/transitions"
    assert trans.shape.as_list() == [num_tags, num_tags]
    loss = tf.reduce_mean(-ll)
    train = tf.train.AdamOptimizer(0.3).minimize(loss)
    decoded, _ = crf.crf_decode(logits, trans, tf.constant(lengths))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss)
        for _ in range(60):
            sess.run(train)
        last, tags_v = sess.run([loss, decoded])
    # Zero emissions: -ll is log Z - score of the gold path under random transitions alone.
    assert first > 0.5 * np.mean(lengths) * np.log(3)
    assert last < 0.1 * first
    for b in range(batch):
        assert tags_v[b, :lengths[b]].tolist() == gold[b, :lengths[b]].tolist()


def test_cells_with_dynamic_rnn_compute_the_forward_alphas():
    x, _, _, trans = _case(30, batch=2, steps=4)
    cell = crf.CrfForwardRnnCell(tf.constant(trans))
    assert cell.state_size == 3 and cell.output_size == 3
    _, alphas = tf.nn.dynamic_rnn(cell, tf.constant(x[:, 1:]), initial_state=tf.constant(x[:, 0]))
    with tf.Session() as sess:
        alphas_v = sess.run(alphas)
    for b in range(2):
        _, z, _, _ = _brute(x[b], np.zeros(4, int), 4, trans)
        np.testing.assert_allclose(np.log(np.exp(alphas_v[b]).sum()), z, rtol=1e-10)
    assert crf.CrfDecodeForwardRnnCell(tf.constant(trans)).output_size == 3
    assert crf.CrfDecodeBackwardRnnCell(3).state_size == 1


def test_bad_input_raises_typed_errors():
    with pytest.raises(ValueError, match="inputs"):
        crf.crf_log_likelihood(tf.zeros([2, 3]), tf.zeros([2, 3], tf.int32), [3, 3])
    with pytest.raises(ValueError, match="transition_params"):
        crf.crf_log_likelihood(tf.zeros([2, 3, 4]), tf.zeros([2, 3], tf.int32), [3, 3],
                               tf.zeros([3, 3]))
    with pytest.raises(ValueError, match="num_tags"):
        crf.crf_log_likelihood(tf.placeholder(tf.float32, [2, 3, None]),
                               tf.zeros([2, 3], tf.int32), [3, 3])
    with pytest.raises(ValueError, match="num_tags"):
        crf.crf_decode(tf.placeholder(tf.float32, [2, 3, None]),
                       tf.placeholder(tf.float32, [None, None]), [3, 3])
    with pytest.raises(TypeError, match="tag_indices"):
        crf.crf_unary_score(tf.zeros([2, 3]), [3, 3], tf.zeros([2, 3, 4]))
    with pytest.raises(ValueError, match="transition_params"):
        crf.viterbi_decode(np.zeros((3, 4)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="score"):
        crf.viterbi_decode(np.zeros(4), np.zeros((4, 4)))
