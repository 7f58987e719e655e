"""Random ops: distributions (moments, ranges, frequencies), seeds and determinism, shapes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.ops.random import stateful as random_ops

COVERED_OPS = {"RandomUniform", "RandomUniformInt", "RandomStandardNormal", "TruncatedNormal",
               "Multinomial", "RandomShuffle", "RandomGamma", "RandomPoissonV2"}
GRADIENT_CASES = []

N = 20000


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def _close_mean(values, mean, std, sigmas=5.0):
    """Sample mean within `sigmas` standard errors of `mean`."""
    error = std / np.sqrt(values.size)
    assert abs(values.mean() - mean) < sigmas * error, (values.mean(), mean, error)


# -- the op table: each op's static shape, dtype and kernel output agree ----------------------

def _table():
    return [
        ("RandomUniform", lambda: tf.random_uniform([3, 4], seed=1), (3, 4), np.float32),
        ("RandomUniform", lambda: tf.random_uniform([5], dtype=tf.float16, seed=1), (5,),
         np.float16),
        ("RandomUniformInt", lambda: tf.random_uniform([2, 2], 0, 9, tf.int64, seed=1), (2, 2),
         np.int64),
        ("RandomStandardNormal", lambda: tf.random_normal([7], dtype=tf.float64, seed=1), (7,),
         np.float64),
        ("TruncatedNormal", lambda: tf.truncated_normal([2, 3], seed=1), (2, 3), np.float32),
        ("Multinomial", lambda: tf.multinomial([[0.0, 1.0], [2.0, 0.0]], 6, seed=1), (2, 6),
         np.int64),
        ("RandomShuffle", lambda: tf.random_shuffle(np.arange(6).reshape(3, 2), seed=1), (3, 2),
         np.int64),
        ("RandomGamma", lambda: random_ops.RandomGamma([4], [1.0, 2.0], seed=1), (4, 2),
         np.float32),
        ("RandomPoissonV2", lambda: tf.random_poisson([1.0, 3.0], [5], seed=1), (5, 2),
         np.float32),
    ]


@pytest.mark.parametrize("op_type,build,shape,dtype", _table(),
                         ids=[f"{row[0]}-{i}" for i, row in enumerate(_table())])
def test_table_shape_dtype_and_value(graph, op_type, build, shape, dtype):
    out = build()
    op = out.op if out.op.type == op_type else next(
        o for o in graph.get_operations() if o.type == op_type)
    assert op.type == op_type
    assert out.shape.as_list() == list(shape)
    value = _run(out)
    assert value.shape == shape
    assert value.dtype == dtype


# -- distributions ---------------------------------------------------------------------------

def test_uniform_float_range_and_moments(graph):
    x = tf.random_uniform([N], seed=3)
    y = tf.random_uniform([N], minval=-2.0, maxval=6.0, dtype=tf.float64, seed=4)
    a, b = _run([x, y])
    assert a.dtype == np.float32 and 0.0 <= a.min() and a.max() < 1.0
    _close_mean(a, 0.5, np.sqrt(1 / 12))
    assert abs(a.var() - 1 / 12) < 0.005
    assert b.dtype == np.float64 and -2.0 <= b.min() and b.max() < 6.0
    _close_mean(b, 2.0, 8 / np.sqrt(12))


def test_uniform_half_never_reaches_one(graph):
    value = _run(tf.random_uniform([N], dtype=tf.float16, seed=5))
    assert value.dtype == np.float16 and value.min() >= 0 and value.max() < 1


def test_uniform_int_covers_range(graph):
    value = _run(tf.random_uniform([N], minval=-3, maxval=4, dtype=tf.int32, seed=6))
    assert value.dtype == np.int32
    counts = np.bincount(value + 3, minlength=7)
    assert counts.size == 7 and counts.min() > N / 7 * 0.85


def test_uniform_int_errors(graph):
    with pytest.raises(ValueError, match="Must specify maxval for integer dtype"):
        tf.random_uniform([2], dtype=tf.int32)
    with pytest.raises(ValueError, match="invalid value"):
        tf.random_uniform([2], dtype=tf.bool)
    low = tf.placeholder(tf.int32, [])
    out = tf.random_uniform([2], low, 5, dtype=tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Need minval < maxval, got 5 >= 5"):
        _run(out, {low: 5})
    with pytest.raises(ValueError, match="minval must be a scalar"):
        tf.random_uniform([2], [1, 2], 5, dtype=tf.int32)


def test_normal_moments_with_mean_and_stddev(graph):
    value = _run(tf.random_normal([N], mean=3.0, stddev=2.0, seed=7))
    _close_mean(value, 3.0, 2.0)
    assert abs(value.std() - 2.0) < 0.06
    skew = np.mean(((value - value.mean()) / value.std()) ** 3)
    assert abs(skew) < 0.1


def test_truncated_normal_bound_and_moments(graph):
    value = _run(tf.truncated_normal([N], mean=1.0, stddev=0.5, seed=8))
    assert np.all(np.abs(value - 1.0) < 2 * 0.5 + 1e-6)
    # The standard normal truncated at +-2 has variance 1 - 4 phi(2) / (2 Phi(2) - 1).
    phi = np.exp(-2.0) / np.sqrt(2 * np.pi)
    inside = 0.9544997361036416
    std = 0.5 * np.sqrt(1 - 4 * phi / inside)
    _close_mean(value, 1.0, std)
    assert abs(value.std() - std) < 0.01
    # Values reach close to the bound: truncation, not clipping or squashing.
    assert np.abs(value - 1.0).max() > 0.95 and np.mean(np.abs(value - 1.0) > 0.9) < 0.05


def test_truncated_normal_half_precision_bound(graph):
    value = _run(tf.truncated_normal([N], dtype=tf.float16, seed=9))
    assert value.dtype == np.float16 and np.all(np.abs(value) < 2)


def test_multinomial_frequencies_match_softmax(graph):
    with np.errstate(divide="ignore"):
        logits = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]]))
    samples = _run(tf.multinomial(tf.constant(logits, tf.float32), N, seed=10))
    assert samples.shape == (2, N) and samples.dtype == np.int64
    for row, probs in zip(samples, ([0.1, 0.2, 0.7], [0.5, 0.5, 0.0])):
        freq = np.bincount(row, minlength=3) / N
        np.testing.assert_allclose(freq, probs, atol=0.015)
    assert not np.any(samples[1] == 2)  # probability 0 (logit -inf) is never drawn


def test_multinomial_output_dtype_and_edge_rows(graph):
    out = tf.multinomial([[-np.inf, -np.inf], [0.0, -np.inf]], 3, output_dtype=tf.int32,
                         seed=1)
    value = _run(out)
    assert value.dtype == np.int32
    np.testing.assert_array_equal(value, [[2, 2, 2], [0, 0, 0]])  # TF: no finite logit -> n
    cat = tf.random.categorical(np.zeros((4, 5), np.float32), 3, dtype=tf.int32, seed=2)
    assert cat.shape.as_list() == [4, 3] and cat.dtype == tf.int32


def test_multinomial_errors(graph):
    logits = tf.placeholder(tf.float32)
    out = tf.multinomial(logits, 3)
    assert out.shape.as_list() == [None, 3]
    with pytest.raises(tf.errors.InvalidArgumentError, match="logits should be a matrix"):
        _run(out, {logits: [1.0, 2.0]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_classes should be positive"):
        _run(out, {logits: np.zeros((2, 0), np.float32)})
    with pytest.raises(ValueError, match="must be non-negative"):
        tf.multinomial(logits, -1)


def test_shuffle_is_a_permutation_of_rows(graph):
    rows = np.arange(40).reshape(20, 2)
    out = tf.random_shuffle(rows, seed=11)
    with tf.Session() as sess:
        first, second = sess.run(out), sess.run(out)
    for value in (first, second):
        np.testing.assert_array_equal(np.sort(value[:, 0]), rows[:, 0])
        np.testing.assert_array_equal(value[:, 1], value[:, 0] + 1)  # rows stay whole
    assert not np.array_equal(first, second)
    assert _run(tf.random_shuffle(5)) == 5


def test_gamma_moments_and_shape(graph):
    alpha = np.array([0.5, 2.0, 9.0], np.float32)
    value = _run(random_ops.RandomGamma(np.int32([N]), alpha, seed=12))
    assert value.shape == (N, 3) and value.dtype == np.float32
    for k, a in enumerate(alpha):
        _close_mean(value[:, k], a, np.sqrt(a))
        assert abs(value[:, k].var() / a - 1) < 0.1
    edge = _run(random_ops.RandomGamma(np.int32([2]), np.float64([0.0, -1.0]), seed=1))
    np.testing.assert_array_equal(edge[:, 0], 0)
    assert np.all(np.isnan(edge[:, 1]))


def test_random_gamma_wrapper_scales_by_beta(graph):
    out = tf.random_gamma([N], [[2.0], [4.0]], beta=[1.0, 4.0], seed=13)
    assert out.shape.as_list() == [N, 2, 2]
    value = _run(out)
    expected = np.array([[2.0, 0.5], [4.0, 1.0]])
    np.testing.assert_allclose(value.mean(axis=0), expected, rtol=0.05)
    assert value.min() > 0


def test_poisson_moments(graph):
    value = _run(tf.random_poisson([0.5, 4.0, 30.0], [N], dtype=tf.int64, seed=14))
    assert value.shape == (N, 3) and value.dtype == np.int64
    for k, lam in enumerate([0.5, 4.0, 30.0]):
        _close_mean(value[:, k], lam, np.sqrt(lam))
        assert abs(value[:, k].var() / lam - 1) < 0.1
    np.testing.assert_array_equal(_run(tf.random_poisson([-1.0], [3])), [[0.0]] * 3)


# -- seeds -----------------------------------------------------------------------------------

def test_get_seed_rules(graph):
    assert tf.get_seed(None) == (None, None)
    assert tf.get_seed(5) == (87654321, 5)
    tf.set_random_seed(0)
    assert graph.seed == 0
    assert tf.get_seed(None) == (0, 2**31 - 1)  # (0, 0) would read as "nondeterministic"
    assert tf.get_seed(None) == (0, 1)  # the per-graph op counter advances
    assert tf.get_seed(7) == (0, 7)
    tf.random.set_random_seed(2**33 + 5)
    assert tf.random.get_seed(2**40) == ((2**33 + 5) % (2**31 - 1), 2**40 % (2**31 - 1))


def _build_pair(graph_seed, op_seed):
    g = tf.Graph()
    with g.as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        a = tf.random_uniform([6], seed=op_seed)
        b = tf.random_normal([6], seed=op_seed)
    return g, a, b


@pytest.mark.parametrize("graph_seed,op_seed", [(1, None), (None, 2), (3, 4)])
def test_seeded_graphs_repeat_across_sessions_and_graphs(graph_seed, op_seed):
    g, a, b = _build_pair(graph_seed, op_seed)
    with tf.Session(graph=g) as sess:
        run1 = [sess.run([a, b]) for _ in range(2)]
    with tf.Session(graph=g) as sess:
        run2 = [sess.run([a, b]) for _ in range(2)]
    g2, a2, b2 = _build_pair(graph_seed, op_seed)
    with tf.Session(graph=g2) as sess:
        run3 = [sess.run([a2, b2]) for _ in range(2)]
    for other in (run2, run3):
        for (x1, y1), (x2, y2) in zip(run1, other):
            np.testing.assert_array_equal(x1, x2)
            np.testing.assert_array_equal(y1, y2)
    assert not np.array_equal(run1[0][0], run1[1][0])  # the sequence advances per step


def test_ops_get_different_sequences_under_a_graph_seed(graph):
    tf.set_random_seed(42)
    a = tf.random_uniform([8])
    b = tf.random_uniform([8])
    x, y = _run([a, b])
    assert not np.array_equal(x, y)


def test_unseeded_ops_differ_between_sessions(graph):
    a = tf.random_uniform([16])
    assert a.op.get_attr("seed") == 0 and a.op.get_attr("seed2") == 0
    assert not np.array_equal(_run(a), _run(a))


# -- shapes and runtime checks ---------------------------------------------------------------

def test_shape_from_placeholder_and_runtime_shape_errors(graph):
    shape = tf.placeholder(tf.int32)
    out = tf.random_uniform(shape)
    assert out.shape.ndims is None
    assert _run(out, {shape: [2, 3]}).shape == (2, 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Dimension -1 must be >= 0"):
        _run(out, {shape: [2, -1]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="shape must be a vector"):
        _run(out, {shape: [[2]]})
    assert tf.random_normal(tf.TensorShape([2, 5])).shape.as_list() == [2, 5]
    assert tf.truncated_normal([]).shape.as_list() == []


def test_partially_known_shapes(graph):
    x = tf.placeholder(tf.float32, [None, 3])
    vector = tf.placeholder(tf.int32, [2])
    assert tf.random_normal(tf.shape(x)).shape.as_list() == [None, 3]
    assert tf.random_uniform([tf.shape(x)[0], 4]).shape.as_list() == [None, 4]
    assert tf.truncated_normal(vector).shape.as_list() == [None, None]
    out = tf.random_uniform([tf.shape(x)[0], 4], seed=2)
    assert _run(out, {x: np.zeros((5, 3))}).shape == (5, 4)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=3), st.sampled_from(["uniform", "normal", "trunc"]))
def test_output_shape_matches_request(shape, kind):
    with tf.Graph().as_default():
        make = {"uniform": tf.random.uniform, "normal": tf.random.normal,
                "trunc": tf.random.truncated_normal}[kind]
        out = make(shape, seed=1)
        assert out.shape.as_list() == shape
        value = _run(out)
    assert value.shape == tuple(shape) and value.dtype == np.float32
