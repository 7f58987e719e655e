"""Candidate samplers, ComputeAccidentalHits, tf.nn.nce_loss and tf.nn.sampled_softmax_loss:
sampling distributions and expected counts against TF's formulas, losses against a direct NumPy
computation for fixed samples, and gradients that stay sparse."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.ops.nn import candidate_sampling as cs

COVERED_OPS = {"UniformCandidateSampler", "LogUniformCandidateSampler",
               "LearnedUnigramCandidateSampler", "ThreadUnsafeUnigramCandidateSampler",
               "FixedUnigramCandidateSampler", "AllCandidateSampler", "ComputeAccidentalHits"}
GRADIENT_CASES = []

RNG = np.random.RandomState(21)
LABELS = np.array([[1], [5], [7], [1]], np.int64)
FLT_MAX = np.finfo(np.float32).max


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def log_uniform_p(ids, range_max):
    ids = np.asarray(ids, np.float64)
    return np.log((ids + 2) / (ids + 1)) / np.log(range_max + 1)


def expected(p, num_sampled, tries):
    p = np.asarray(p, np.float64)
    return p * num_sampled if tries == num_sampled else -np.expm1(tries * np.log1p(-p))


def implied_tries(count, p):
    """The number of draws that makes the unique-sampling formula give `count`."""
    return np.log1p(-np.asarray(count, np.float64)) / np.log1p(-np.asarray(p, np.float64))


# -- the op table ---------------------------------------------------------------------------

TABLE = [
    ("UniformCandidateSampler", lambda: tf.nn.uniform_candidate_sampler(LABELS, 1, 6, True, 30,
                                                                        seed=1)),
    ("LogUniformCandidateSampler", lambda: tf.nn.log_uniform_candidate_sampler(
        LABELS, 1, 6, False, 30, seed=1)),
    ("LearnedUnigramCandidateSampler", lambda: tf.nn.learned_unigram_candidate_sampler(
        LABELS, 1, 6, True, 30, seed=1)),
    ("ThreadUnsafeUnigramCandidateSampler", lambda: cs.ThreadUnsafeUnigramCandidateSampler(
        LABELS, num_true=1, num_sampled=6, unique=False, range_max=30, seed=1)),
    ("FixedUnigramCandidateSampler", lambda: tf.nn.fixed_unigram_candidate_sampler(
        LABELS, 1, 6, True, 30, unigrams=np.arange(1, 31), seed=1)),
    ("AllCandidateSampler", lambda: tf.nn.all_candidate_sampler(LABELS, 1, 6, True)),
]


@pytest.mark.parametrize("op_type,build", TABLE, ids=[row[0] for row in TABLE])
def test_sampler_table(op_type, build):
    sampled, true_count, sampled_count = build()
    assert sampled.op.type == op_type
    assert sampled.shape.as_list() == [6] and sampled.dtype == tf.int64
    assert true_count.shape.as_list() == [4, 1] and true_count.dtype == tf.float32
    assert sampled_count.shape.as_list() == [6] and sampled_count.dtype == tf.float32
    s, t, c = run([sampled, true_count, sampled_count])
    assert s.dtype == np.int64 and t.dtype == c.dtype == np.float32
    assert np.all((s >= 0) & (s < 30)) and t.shape == (4, 1)
    assert np.all((c > 0) & (c <= 6)) and np.all(t > 0)


def test_uniform_expected_counts():
    s, t, c = run(tf.nn.uniform_candidate_sampler(LABELS, 1, 5, False, 40, seed=2))
    np.testing.assert_allclose(c, 5 / 40, rtol=1e-6)
    np.testing.assert_allclose(t, 5 / 40, rtol=1e-6)
    s, t, c = run(tf.nn.uniform_candidate_sampler(LABELS, 1, 30, True, 40, seed=3))
    assert len(set(s)) == 30
    tries = implied_tries(c[0], 1 / 40)
    assert tries >= 30 and abs(tries - round(tries)) < 1e-3  # a whole number of draws
    np.testing.assert_allclose(c, expected(1 / 40, 30, round(tries)), rtol=1e-5)
    np.testing.assert_allclose(t, expected(1 / 40, 30, round(tries)), rtol=1e-5)


def test_log_uniform_expected_counts_and_frequencies():
    range_max = 50
    s, t, c = run(tf.nn.log_uniform_candidate_sampler(LABELS, 1, 20, True, range_max, seed=4))
    assert len(set(s)) == 20
    p = log_uniform_p(s, range_max)
    tries = implied_tries(c, p)
    np.testing.assert_allclose(tries, tries[0], rtol=1e-4)
    tries = int(round(tries[0]))
    np.testing.assert_allclose(c, expected(p, 20, tries), rtol=1e-5)
    np.testing.assert_allclose(t[:, 0], expected(log_uniform_p(LABELS[:, 0], range_max), 20,
                                                 tries), rtol=1e-5)
    n = 40000
    draws, _, counts = run(tf.nn.log_uniform_candidate_sampler(LABELS, 1, n, False, range_max,
                                                               seed=5))
    frequencies = np.bincount(draws, minlength=range_max) / n
    np.testing.assert_allclose(frequencies, log_uniform_p(np.arange(range_max), range_max),
                               atol=0.006)
    np.testing.assert_allclose(counts, log_uniform_p(draws, range_max) * n, rtol=1e-5)


def test_fixed_unigram_distribution_distortion_and_reserved_ids():
    counts = np.array([5.0, 1.0, 10.0, 4.0, 0.0, 20.0])
    n = 30000
    draws, true_count, _ = run(tf.nn.fixed_unigram_candidate_sampler(
        [[2], [7]], 1, n, False, 8, unigrams=counts, distortion=0.5, num_reserved_ids=2,
        seed=6))
    weights = np.concatenate([[0, 0], counts ** 0.5])
    probs = weights / weights.sum()
    np.testing.assert_allclose(np.bincount(draws, minlength=8) / n, probs, atol=0.01)
    assert not np.any(draws < 2) and not np.any(draws == 6)
    np.testing.assert_allclose(true_count[:, 0], probs[[2, 7]] * n, rtol=1e-5)


def test_fixed_unigram_vocab_file_and_shards(tmp_path):
    vocab = tmp_path / "vocab.csv"
    vocab.write_text("the,40\nof,30\n\nand,20\na,10\n")
    from_file = tf.nn.fixed_unigram_candidate_sampler([[0]], 1, 4, False, 4,
                                                      vocab_file=str(vocab), seed=7)
    from_list = tf.nn.fixed_unigram_candidate_sampler([[0]], 1, 4, False, 4,
                                                      unigrams=[40, 30, 20, 10], seed=7)
    a, b = run([from_file, from_list])
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    # Shard 1 of 2 keeps ids 1 and 3 (weights 30 and 10), renumbered 0 and 1.
    shard = tf.nn.fixed_unigram_candidate_sampler([[0], [1]], 1, 2000, False, 2,
                                                  unigrams=[40, 30, 20, 10], num_shards=2,
                                                  shard=1, seed=8)
    draws, true_count, _ = run(shard)
    np.testing.assert_allclose(np.bincount(draws) / 2000, [0.75, 0.25], atol=0.04)
    np.testing.assert_allclose(true_count[:, 0], [0.75 * 2000, 0.25 * 2000], rtol=1e-5)
    bad = tmp_path / "bad.csv"
    bad.write_text("word,many\n")
    for kwargs, error, match in [
            ({"vocab_file": str(bad)}, tf.errors.InvalidArgumentError, "Wrong vocabulary"),
            ({}, tf.errors.InvalidArgumentError, "either vocab_file or unigrams"),
            ({"unigrams": [1.0, 2.0]}, tf.errors.InvalidArgumentError, "range is 4"),
            ({"vocab_file": str(tmp_path / "missing")}, tf.errors.NotFoundError, "missing")]:
        with pytest.raises(error, match=match):
            run(tf.nn.fixed_unigram_candidate_sampler([[0]], 1, 2, False, 4, **kwargs))


def test_learned_unigram_learns_from_true_classes():
    sampler = tf.nn.learned_unigram_candidate_sampler([[3], [3]], 1, 200, False, 10, seed=9)
    with tf.Session() as sess:
        first = sess.run(sampler)
        for _ in range(20):
            last = sess.run(sampler)
    # Before any update every class has weight 1; after k updates class 3 has 1 + 2k of 10 + 2k.
    np.testing.assert_allclose(first.true_expected_count, 200 / 10, rtol=1e-5)
    np.testing.assert_allclose(last.true_expected_count, (1 + 40) / (10 + 40) * 200, rtol=1e-5)
    assert np.mean(last.sampled_candidates == 3) > 0.6


def test_seeds_and_unique_errors():
    tf.set_random_seed(11)
    a = tf.nn.log_uniform_candidate_sampler(LABELS, 1, 8, True, 100)
    b = tf.nn.log_uniform_candidate_sampler(LABELS, 1, 8, True, 100)
    first = run([a.sampled_candidates, b.sampled_candidates])
    again = run([a.sampled_candidates, b.sampled_candidates])
    np.testing.assert_array_equal(first[0], again[0])  # a new session restarts the stream
    assert not np.array_equal(first[0], first[1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="range is too small"):
        run(tf.nn.uniform_candidate_sampler(LABELS, 1, 11, True, 10))
    with pytest.raises(ValueError, match="num_true columns"):
        tf.nn.uniform_candidate_sampler(LABELS, 2, 3, True, 10)
    labels = tf.placeholder(tf.int64)
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be a matrix"):
        run(tf.nn.uniform_candidate_sampler(labels, 1, 3, True, 10), {labels: [1, 2]})


def test_compute_accidental_hits():
    labels = np.array([[1, 2], [3, 4], [2, 9]], np.int64)
    sampled = np.array([2, 7, 9, 1], np.int64)
    out = tf.nn.compute_accidental_hits(labels, sampled, num_true=2)
    assert out.indices.op.type == "ComputeAccidentalHits"
    indices, ids, weights = run(out)
    assert indices.dtype == np.int32 and ids.dtype == np.int64 and weights.dtype == np.float32
    np.testing.assert_array_equal(indices, [0, 0, 2, 2])
    np.testing.assert_array_equal(ids, [0, 3, 0, 2])
    np.testing.assert_array_equal(weights, -FLT_MAX)
    none = run(tf.nn.compute_accidental_hits(labels, [5, 6], num_true=2))
    assert none.indices.size == 0


# -- the losses -----------------------------------------------------------------------------

def np_logits(weights, biases, labels, inputs, sampled, true_count, sampled_count, remove):
    num_true = labels.shape[1]
    true_logits = (np.einsum("bd,btd->bt", inputs, weights[labels]) + biases[labels]
                   - np.log(true_count))
    sampled_logits = inputs @ weights[sampled].T + biases[sampled] - np.log(sampled_count)
    if remove:
        hits = (labels[:, :, None] == sampled[None, None, :]).any(axis=1)
        sampled_logits = np.where(hits, sampled_logits - FLT_MAX, sampled_logits)
    logits = np.concatenate([true_logits, sampled_logits], 1)
    targets = np.concatenate([np.full(true_logits.shape, 1 / num_true),
                              np.zeros(sampled_logits.shape)], 1)
    return logits, targets


def np_nce(*args):
    logits, targets = np_logits(*args)
    losses = np.maximum(logits, 0) - logits * targets + np.log1p(np.exp(-np.abs(logits)))
    return losses.sum(axis=1)


def np_sampled_softmax(*args):
    logits, targets = np_logits(*args)
    top = logits.max(axis=1, keepdims=True)
    log_softmax = logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))
    return -(targets * log_softmax).sum(axis=1)


VOCAB, DIM, BATCH = 13, 4, 3
WEIGHTS = RNG.randn(VOCAB, DIM)
BIASES = RNG.randn(VOCAB)
INPUTS = RNG.randn(BATCH, DIM)
SAMPLED = np.array([3, 4, 8, 0, 11], np.int64)
SAMPLED_COUNT = np.array([0.3, 0.2, 0.15, 0.9, 0.05])


def _problem(num_true):
    labels = np.array([[1, 3], [5, 0], [7, 12]], np.int64)[:, :num_true]
    true_count = RNG.uniform(0.1, 0.9, (BATCH, num_true))
    return labels, true_count


@pytest.mark.parametrize("loss,reference,remove", [
    (tf.nn.nce_loss, np_nce, False), (tf.nn.nce_loss, np_nce, True),
    (tf.nn.sampled_softmax_loss, np_sampled_softmax, False),
    (tf.nn.sampled_softmax_loss, np_sampled_softmax, True)])
@pytest.mark.parametrize("num_true", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_losses_match_numpy_for_fixed_samples(loss, reference, remove, num_true, dtype):
    labels, true_count = _problem(num_true)
    sampled_values = (SAMPLED, true_count.astype(np.float32), SAMPLED_COUNT.astype(np.float32))
    out = loss(tf.constant(WEIGHTS.astype(dtype)), tf.constant(BIASES.astype(dtype)), labels,
               tf.constant(INPUTS.astype(dtype)), 5, VOCAB, num_true=num_true,
               sampled_values=sampled_values, remove_accidental_hits=remove)
    assert out.shape.as_list() in ([BATCH], [None])
    value = run(out)
    assert value.dtype == dtype
    expected = reference(WEIGHTS, BIASES, labels, INPUTS, SAMPLED,
                         true_count.astype(np.float32).astype(np.float64),
                         SAMPLED_COUNT.astype(np.float32).astype(np.float64), remove)
    np.testing.assert_allclose(value, expected, rtol=2e-5 if dtype == np.float32 else 1e-10)


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_sharded_weights_give_the_same_loss(strategy):
    labels, true_count = _problem(2)
    sampled_values = (SAMPLED, true_count.astype(np.float32), SAMPLED_COUNT.astype(np.float32))
    if strategy == "mod":
        shards = [WEIGHTS[i::3] for i in range(3)]
    else:
        shards = [WEIGHTS[0:5], WEIGHTS[5:9], WEIGHTS[9:13]]
    sharded = tf.nn.sampled_softmax_loss(shards, BIASES, labels, INPUTS, 5, VOCAB, num_true=2,
                                         sampled_values=sampled_values,
                                         partition_strategy=strategy)
    whole = tf.nn.sampled_softmax_loss(WEIGHTS, BIASES, labels, INPUTS, 5, VOCAB, num_true=2,
                                       sampled_values=sampled_values)
    a, b = run([sharded, whole])
    np.testing.assert_allclose(a, b, rtol=1e-12)


def _dense(grad, shape):
    dense = np.zeros(shape)
    np.add.at(dense, grad.indices, grad.values)
    return dense


def _numeric(fn, value, eps=1e-6):
    out = np.zeros_like(value)
    for index in np.ndindex(value.shape):
        up, down = value.copy(), value.copy()
        up[index] += eps
        down[index] -= eps
        out[index] = (fn(up) - fn(down)) / (2 * eps)
    return out


@pytest.mark.parametrize("loss,reference", [(tf.nn.nce_loss, np_nce),
                                            (tf.nn.sampled_softmax_loss, np_sampled_softmax)])
def test_gradients_are_sparse_and_correct(loss, reference):
    labels, true_count = _problem(2)
    counts = (true_count.astype(np.float32), SAMPLED_COUNT.astype(np.float32))
    weights = tf.Variable(WEIGHTS)
    biases = tf.Variable(BIASES)
    inputs = tf.constant(INPUTS)
    total = tf.reduce_sum(loss(weights, biases, labels, inputs, 5, VOCAB, num_true=2,
                               sampled_values=(SAMPLED, *counts),
                               remove_accidental_hits=True))
    grad_w, grad_b, grad_x = tf.gradients(total, [weights, biases, inputs])
    assert isinstance(grad_w, tf.IndexedSlices) and isinstance(grad_b, tf.IndexedSlices)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        gw, gb, gx = sess.run([grad_w, grad_b, grad_x])
    touched = set(labels.reshape(-1)) | set(SAMPLED)
    assert set(np.asarray(gw.indices)) == touched  # only the looked-up rows
    true64 = counts[0].astype(np.float64)
    sampled64 = counts[1].astype(np.float64)

    def total_of(w=WEIGHTS, b=BIASES, x=INPUTS):
        return reference(w, b, labels, x, SAMPLED, true64, sampled64, True).sum()

    np.testing.assert_allclose(_dense(gw, WEIGHTS.shape),
                               _numeric(lambda w: total_of(w=w), WEIGHTS), atol=1e-6)
    np.testing.assert_allclose(_dense(gb, BIASES.shape),
                               _numeric(lambda b: total_of(b=b), BIASES), atol=1e-6)
    np.testing.assert_allclose(gx, _numeric(lambda x: total_of(x=x), INPUTS), atol=1e-6)


def test_sparse_training_step_only_moves_sampled_rows():
    labels = np.array([[2], [6]], np.int64)
    weights = tf.Variable(WEIGHTS)
    biases = tf.Variable(np.zeros(VOCAB))
    loss = tf.reduce_mean(tf.nn.nce_loss(weights, biases, labels, INPUTS[:2], 4, VOCAB,
                                         sampled_values=(np.array([0, 3, 6, 9]),
                                                         np.full((2, 1), 0.5, np.float32),
                                                         np.full(4, 0.5, np.float32))))
    step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(loss)
        for _ in range(5):
            sess.run(step)
        after, w = sess.run([loss, weights])
    assert after < before
    moved = np.flatnonzero(np.any(w != WEIGHTS, axis=1))
    np.testing.assert_array_equal(moved, [0, 2, 3, 6, 9])


def test_default_sampler_path():
    tf.set_random_seed(3)
    labels = RNG.randint(0, VOCAB, (BATCH, 1))
    nce = tf.nn.nce_loss(WEIGHTS, BIASES, labels, INPUTS, 4, VOCAB)
    softmax = tf.nn.sampled_softmax_loss(WEIGHTS, BIASES, labels, INPUTS, 4, VOCAB, seed=5)
    a, b = run([nce, softmax])
    assert a.shape == b.shape == (BATCH,)
    assert np.all(np.isfinite(a)) and np.all(a > 0) and np.all(np.isfinite(b))
    ops = {op.type for op in tf.get_default_graph().get_operations()}
    assert {"LogUniformCandidateSampler", "ComputeAccidentalHits"} <= ops


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=1, max_size=80), st.integers(0, 2**31 - 1),
       st.sampled_from([1, 2, 7, 50000, 2**31 - 1]))
def test_log_uniform_pieces_equal_their_numpy_formulas(stream, seed, range_max):
    stream = np.array(stream, np.int64)
    np.testing.assert_array_equal(cs._first_distinct(stream),
                                  np.sort(np.unique(stream, return_index=True)[1]))
    sampler = cs._LogUniform(range_max, np.random.default_rng(seed))
    uniform = np.random.default_rng(seed).random(100)
    want = (np.exp(uniform * np.log1p(range_max)).astype(np.int64) - 1) % range_max
    np.testing.assert_array_equal(sampler.draw(100), want)
    ids = np.concatenate([want, stream])
    probability = (np.log((ids + 2.0) / (ids + 1.0)) / np.log1p(range_max)).astype(np.float32)
    assert sampler.probability(ids).tobytes() == probability.tobytes()
    tries = 3 + seed % 200
    with np.errstate(divide="ignore"):  # range 1: p = 1, log1p(-1) = -inf, count 1
        counts = (-np.expm1(tries * np.log1p(-probability.astype(np.float64))))
        got = cs._expected_count(probability, 2, tries)
    assert got.tobytes() == counts.astype(np.float32).tobytes()
