"""tf.distributions Bernoulli, Categorical, Multinomial, DirichletMultinomial: values against
closed forms, sample frequencies with fixed seeds, shapes and dtypes."""

import math

import numpy as np
import pytest

import tensorflux as tf

tfd = tf.distributions
_lgamma = np.vectorize(math.lgamma)


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


# -- Bernoulli ---------------------------------------------------------------------------------

def test_bernoulli_from_logits():
    logits = np.array([0.0, 1.0, -2.0])
    b = tfd.Bernoulli(logits=logits)
    p = _sigmoid(logits)
    out = _run([b.log_prob([1, 0, 1]), b.prob([1, 0, 1]), b.entropy(), b.mean(), b.variance(),
                b.mode(), b.probs, b.logits, b.stddev()])
    np.testing.assert_allclose(out[0], np.log([p[0], 1 - p[1], p[2]]), rtol=1e-12)
    np.testing.assert_allclose(out[1], [p[0], 1 - p[1], p[2]], rtol=1e-12)
    np.testing.assert_allclose(out[2], -p * np.log(p) - (1 - p) * np.log1p(-p), rtol=1e-12)
    np.testing.assert_allclose(out[3], p, rtol=1e-12)
    np.testing.assert_allclose(out[4], p * (1 - p), rtol=1e-12)
    np.testing.assert_array_equal(out[5], [0, 1, 0])
    assert out[5].dtype == np.int32 and b.dtype == tf.int32
    np.testing.assert_allclose(out[6], p, rtol=1e-12)
    np.testing.assert_allclose(out[8], np.sqrt(p * (1 - p)), rtol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inf - inf in the float kernels
def test_bernoulli_from_probs_broadcast_and_extremes():
    b = tfd.Bernoulli(probs=[0.2, 0.0, 1.0], dtype=tf.float32)
    lp = _run(b.log_prob([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]))
    # as TF 1.x: infinite logits give NaN (inf - inf) except -inf for the impossible 1 at p=0
    np.testing.assert_allclose(lp, [[np.log(0.2), np.nan, np.nan], [np.log(0.8), -np.inf, np.nan]],
                               rtol=1e-6)
    logits = _run(b.logits)
    np.testing.assert_allclose(logits, [np.log(0.25), -np.inf, np.inf], rtol=1e-6)
    s = _run(b.sample(10, seed=1))
    assert s.dtype == np.float32 and s.shape == (10, 3)
    np.testing.assert_array_equal(s[:, 1:], np.tile([0.0, 1.0], (10, 1)))
    # scalar parameter, vector event
    np.testing.assert_allclose(_run(tfd.Bernoulli(probs=0.25).log_prob([0, 1])),
                               np.log([0.75, 0.25]), rtol=1e-6)


def test_bernoulli_sample_frequencies():
    b = tfd.Bernoulli(probs=[0.1, 0.5, 0.9])
    s = _run(b.sample(20000, seed=4))
    assert s.dtype == np.int32 and set(np.unique(s)) <= {0, 1}
    np.testing.assert_allclose(s.mean(0), [0.1, 0.5, 0.9], atol=0.015)


def test_bernoulli_log_prob_gradient():
    logits = tf.placeholder(tf.float64, [3])
    y = tf.reduce_sum(tfd.Bernoulli(logits=logits).log_prob([1, 0, 1]))
    g = tf.gradients(y, [logits])[0]
    lv = np.array([0.3, -1.0, 2.0])
    np.testing.assert_allclose(_run(g, {logits: lv}), np.array([1, 0, 1]) - _sigmoid(lv),
                               rtol=1e-12)


# -- Categorical -------------------------------------------------------------------------------

PROBS = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])


def test_categorical_values():
    c = tfd.Categorical(probs=PROBS)
    out = _run([c.log_prob([0, 2]), c.prob([1, 2]), c.entropy(), c.mode(), c.event_size,
                c.logits, c.cdf([1, 3]), c.cdf([0, -1]), c.log_prob([[0], [1]])])
    np.testing.assert_allclose(out[0], np.log([0.2, 0.8]), rtol=1e-12)
    np.testing.assert_allclose(out[1], [0.3, 0.8], rtol=1e-12)
    np.testing.assert_allclose(out[2], -(PROBS * np.log(PROBS)).sum(-1), rtol=1e-12)
    np.testing.assert_array_equal(out[3], [2, 2])
    assert out[4] == 3
    np.testing.assert_allclose(out[5], np.log(PROBS), rtol=1e-12)
    # TF 1.x's Categorical cdf(k) sums the classes below k: P[X < k]
    np.testing.assert_allclose(out[6], [0.2, 1.0], rtol=1e-12)
    np.testing.assert_allclose(out[7], [0.0, 0.0])
    # k of shape [2, 1] broadcasts against batch [2]: [[log p0(0), log p1(0)], [.. (1) ..]]
    np.testing.assert_allclose(out[8], np.log([[0.2, 0.1], [0.3, 0.1]]), rtol=1e-12)


def test_categorical_from_logits_and_shapes():
    logits = np.log(np.array([[[1.0, 2.0, 7.0]], [[5.0, 4.0, 1.0]]]))
    c = tfd.Categorical(logits=logits, dtype=tf.int64)
    assert c.batch_shape.as_list() == [2, 1] and c.event_shape.as_list() == []
    s = c.sample([3, 5], seed=2)
    assert s.shape.as_list() == [3, 5, 2, 1] and s.dtype == tf.int64
    sv, probs, mode = _run([s, c.probs, c.mode()])
    assert sv.shape == (3, 5, 2, 1) and sv.dtype == np.int64
    np.testing.assert_allclose(probs, [[[0.1, 0.2, 0.7]], [[0.5, 0.4, 0.1]]], rtol=1e-12)
    np.testing.assert_array_equal(mode, [[2], [0]])


def test_categorical_sample_frequencies():
    c = tfd.Categorical(logits=np.log(PROBS))
    s = _run(c.sample(20000, seed=9))
    for row in range(2):
        freq = np.bincount(s[:, row], minlength=3) / 20000.0
        np.testing.assert_allclose(freq, PROBS[row], atol=0.015)


# -- Multinomial -------------------------------------------------------------------------------

def _multinomial_log_pmf(n, p, counts):
    return (_lgamma(n + 1) - _lgamma(counts + 1).sum(-1) + (counts * np.log(p)).sum(-1))


def test_multinomial_values():
    n = np.array([3.0, 4.0])
    p = np.array([0.2, 0.3, 0.5])
    m = tfd.Multinomial(total_count=n, probs=p)
    counts = np.array([[1.0, 1.0, 1.0], [0.0, 1.0, 3.0]])
    out = _run([m.log_prob(counts), m.prob(counts), m.mean(), m.variance(), m.covariance()])
    np.testing.assert_allclose(out[0], _multinomial_log_pmf(n, p, counts), rtol=1e-12)
    np.testing.assert_allclose(out[1], np.exp(_multinomial_log_pmf(n, p, counts)), rtol=1e-12)
    np.testing.assert_allclose(out[2], n[:, None] * p, rtol=1e-12)
    np.testing.assert_allclose(out[3], n[:, None] * p * (1 - p), rtol=1e-12)
    cov = n[:, None, None] * (np.diag(p) - np.outer(p, p))
    np.testing.assert_allclose(out[4], cov, rtol=1e-12, atol=1e-15)
    assert m.batch_shape.as_list() == [2] and m.event_shape.as_list() == [3]
    logits_m = tfd.Multinomial(total_count=5.0, logits=np.log([[1.0, 1.0, 2.0]]))
    np.testing.assert_allclose(_run(logits_m.log_prob([2.0, 1.0, 2.0])),
                               _multinomial_log_pmf(5.0, np.array([0.25, 0.25, 0.5]),
                                                    np.array([2.0, 1.0, 2.0])), rtol=1e-12)


def test_multinomial_samples():
    m = tfd.Multinomial(total_count=[3.0, 7.0, 0.0], probs=[0.2, 0.3, 0.5])
    s = m.sample([400, 50], seed=5)
    assert s.shape.as_list() == [400, 50, 3, 3]
    sv = _run(s)
    assert sv.dtype == np.float32
    np.testing.assert_array_equal(sv.sum(-1), np.broadcast_to([3.0, 7.0, 0.0], (400, 50, 3)))
    np.testing.assert_allclose(sv.mean((0, 1))[:2], [[0.6, 0.9, 1.5], [1.4, 2.1, 3.5]],
                               rtol=0.04)
    np.testing.assert_allclose(sv.var((0, 1))[1], 7 * np.array([0.2, 0.3, 0.5]) *
                               np.array([0.8, 0.7, 0.5]), rtol=0.06)


# -- DirichletMultinomial ----------------------------------------------------------------------

def test_dirichlet_multinomial_values():
    n = np.array([3.0, 4.0])
    alpha = np.array([[1.0, 2.0, 3.0], [2.0, 2.0, 2.0]])
    dm = tfd.DirichletMultinomial(n, alpha)
    counts = np.array([[1.0, 1.0, 1.0], [0.0, 1.0, 3.0]])

    def lbeta(a):
        return _lgamma(a).sum(-1) - _lgamma(a.sum(-1))

    expected = (lbeta(alpha + counts) - lbeta(alpha) + _lgamma(n + 1)
                - _lgamma(counts + 1).sum(-1))
    out = _run([dm.log_prob(counts), dm.prob(counts), dm.mean(), dm.variance(),
                dm.covariance()])
    np.testing.assert_allclose(out[0], expected, rtol=1e-12)
    np.testing.assert_allclose(out[1], np.exp(expected), rtol=1e-12)
    a0 = alpha.sum(-1)
    p = alpha / a0[:, None]
    np.testing.assert_allclose(out[2], n[:, None] * p, rtol=1e-12)
    spread = (n + a0) / (1 + a0)
    cov = (n * spread)[:, None, None] * (p[:, :, None] * np.eye(3) - p[:, :, None] *
                                         p[:, None, :])
    np.testing.assert_allclose(out[3], np.diagonal(cov, axis1=1, axis2=2), rtol=1e-12)
    np.testing.assert_allclose(out[4], cov, rtol=1e-12)
    # the probabilities of all count vectors with total 2 over 2 classes sum to 1
    dm2 = tfd.DirichletMultinomial(2.0, [0.7, 1.9])
    np.testing.assert_allclose(_run(dm2.prob([[0.0, 2.0], [1.0, 1.0], [2.0, 0.0]])).sum(), 1.0,
                               rtol=1e-6)


def test_dirichlet_multinomial_samples():
    dm = tfd.DirichletMultinomial(5.0, [[1.0, 2.0, 3.0], [2.0, 2.0, 2.0]])
    s = dm.sample(20000, seed=3)
    assert s.shape.as_list() == [20000, 2, 3]
    sv, mean, var = _run([s, dm.mean(), dm.variance()])
    np.testing.assert_array_equal(sv.sum(-1), 5.0)
    np.testing.assert_allclose(sv.mean(0), mean, rtol=0.04)
    np.testing.assert_allclose(sv.var(0), var, rtol=0.06)
