"""tf.distributions Gamma, Exponential, Beta, Dirichlet and the RandomGammaGrad op: values
against closed forms and TF 1.x literals, sample moments, reparameterized gradients."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.ops.random.gamma import RandomGammaGrad, reparameterized_gamma

tfd = tf.distributions
_lgamma = np.vectorize(math.lgamma)

COVERED_OPS = {"RandomGammaGrad"}
GRADIENT_CASES = []


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


# -- RandomGammaGrad ---------------------------------------------------------------------------

def test_random_gamma_grad_against_inverse_cdf_derivative():
    special = pytest.importorskip("scipy.special")
    alpha = np.array([0.1, 0.5, 1.0, 3.0, 10.0, 100.0, 1000.0, 0.3, 2.0, 2e4, 3e5])
    x = np.array([0.01, 0.2, 1.3, 2.0, 14.0, 90.0, 1020.0, 5.0, 12.0, 2.03e4, 2.99e5])
    out = _run(RandomGammaGrad(alpha, x))
    u = special.gammainc(alpha, x)
    h = 1e-6 * np.maximum(alpha, 1.0)
    numeric = (special.gammaincinv(alpha + h, u) - special.gammaincinv(alpha - h, u)) / (2 * h)
    np.testing.assert_allclose(out, numeric, rtol=1e-6)


def test_random_gamma_grad_exponential_case_shapes_and_edges():
    # alpha = 1: P(1, x) = 1 - e^-x and dP/da at a = 1 has the closed form
    # -(e^-x) (log x + gamma_euler) - E1(x) - ... ; instead check the mean identity
    # E[dx/dalpha] = dE[x]/dalpha = 1 on many standard gamma draws.
    rng = np.random.default_rng(0)
    for a in (0.3, 1.0, 4.0):
        draws = rng.standard_gamma(a, size=20000)
        grad = _run(RandomGammaGrad(np.float64(a), draws))
        np.testing.assert_allclose(grad.mean(), 1.0, rtol=0.03)
    out = RandomGammaGrad(np.ones([2, 1], np.float32), np.ones([3], np.float32))
    assert out.shape.as_list() == [2, 3]
    value = _run(out)
    assert value.shape == (2, 3) and value.dtype == np.float32
    edges = _run(RandomGammaGrad(np.array([1.0, -1.0, 2.0]), np.array([0.0, 1.0, np.inf])))
    np.testing.assert_array_equal(edges, [0.0, 0.0, 0.0])
    with pytest.raises(TypeError):
        RandomGammaGrad(np.array([1], np.int32), np.array([1], np.int32))


def test_reparameterized_gamma_gradients_match_moments():
    alpha = tf.placeholder(tf.float64, [2])
    beta = tf.placeholder(tf.float64, [2])
    s = reparameterized_gamma([30000], alpha, beta, dtype=tf.float64, seed=3)
    g_a, g_b = tf.gradients(tf.reduce_mean(s, 0), [alpha, beta])
    sv, ga, gb = _run([s, g_a, g_b], {alpha: [0.7, 5.0], beta: [1.0, 2.0]})
    assert sv.shape == (30000, 2)
    np.testing.assert_allclose(sv.mean(0), [0.7, 2.5], rtol=0.03)
    np.testing.assert_allclose(ga, [1.0, 0.5], rtol=0.03)   # d(a/b)/da = 1/b
    np.testing.assert_allclose(gb, -sv.mean(0) / [1.0, 2.0], rtol=1e-10)  # x/b exactly


# -- Gamma, Exponential ------------------------------------------------------------------------

CONC = np.array([0.5, 3.0, 7.5])
RATE = np.array([1.0, 2.0, 0.5])


def test_gamma_values():
    g = tfd.Gamma(CONC, RATE)
    x = np.array([0.5, 2.0, 10.0])
    expected = (CONC * np.log(RATE) + (CONC - 1) * np.log(x) - RATE * x - _lgamma(CONC))
    out = _run([g.log_prob(x), g.prob(x), g.mean(), g.variance(), g.stddev(), g.mode(),
                g.entropy()])
    np.testing.assert_allclose(out[0], expected, rtol=1e-12)
    np.testing.assert_allclose(out[1], np.exp(expected), rtol=1e-12)
    np.testing.assert_allclose(out[2], CONC / RATE, rtol=1e-12)
    np.testing.assert_allclose(out[3], CONC / RATE**2, rtol=1e-12)
    np.testing.assert_allclose(out[4], np.sqrt(CONC) / RATE, rtol=1e-12)
    np.testing.assert_allclose(out[5], [np.nan, 1.0, 13.0], rtol=1e-12)
    np.testing.assert_allclose(out[6], [0.0906096, 1.1544316, 3.0735884],
                               rtol=1e-5, atol=1e-6)  # TF 1.x (float32)


def test_gamma_log_prob_at_zero_uses_xlogy():
    g = tfd.Gamma([1.0, 2.0], [2.0, 2.0])
    np.testing.assert_allclose(_run(g.log_prob([0.0, 0.0])), [np.log(2.0), -np.inf])


def test_gamma_samples_and_gradient():
    conc = tf.placeholder(tf.float64, [])
    rate = tf.placeholder(tf.float64, [])
    g = tfd.Gamma(conc, rate)
    s = g.sample([200, 100], seed=8)
    grad = tf.gradients(tf.reduce_mean(tf.square(s)), [conc])[0]
    sv, gv = _run([s, grad], {conc: 2.5, rate: 2.0})
    assert sv.shape == (200, 100) and sv.min() > 0
    np.testing.assert_allclose([sv.mean(), sv.var()], [1.25, 0.625], rtol=0.04)
    # E[x^2] = a (a + 1) / b^2 -> d/da = (2a + 1) / b^2
    np.testing.assert_allclose(gv, 6.0 / 4.0, rtol=0.05)


def test_exponential_values_and_samples():
    rate = np.array([1.0, 2.5])
    e = tfd.Exponential(rate)
    x = np.array([0.5, 3.0])
    out = _run([e.log_prob(x), e.cdf(x), e.survival_function(x), e.log_survival_function(x),
                e.mean(), e.variance(), e.mode(), e.entropy(), e.concentration])
    np.testing.assert_allclose(out[0], np.log(rate) - rate * x, rtol=1e-12)
    np.testing.assert_allclose(out[1], 1 - np.exp(-rate * x), rtol=1e-12)
    np.testing.assert_allclose(out[2], np.exp(-rate * x), rtol=1e-12)
    np.testing.assert_allclose(out[3], -rate * x, rtol=1e-12)
    np.testing.assert_allclose(out[4], 1 / rate)
    np.testing.assert_allclose(out[5], 1 / rate**2)
    np.testing.assert_allclose(out[6], [np.nan, np.nan])  # Gamma's mode needs alpha > 1 (TF)
    np.testing.assert_allclose(out[7], 1 - np.log(rate), rtol=1e-12)
    np.testing.assert_allclose(out[8], [1.0, 1.0])
    r = tf.placeholder(tf.float64, [])
    s = tfd.Exponential(r).sample(40000, seed=1)
    g = tf.gradients(tf.reduce_mean(s), [r])[0]
    sv, gv = _run([s, g], {r: 2.0})
    np.testing.assert_allclose(sv.mean(), 0.5, rtol=0.03)
    np.testing.assert_allclose(gv, -sv.mean() / 2.0, rtol=1e-10)


# -- Beta --------------------------------------------------------------------------------------

C1 = np.array([0.5, 2.0, 4.0])
C0 = np.array([3.0, 1.5, 0.7])


def test_beta_values():
    b = tfd.Beta(C1, C0)
    x = np.array([0.3, 0.6, 0.95])
    log_b = _lgamma(C1) + _lgamma(C0) - _lgamma(C1 + C0)
    expected = (C1 - 1) * np.log(x) + (C0 - 1) * np.log1p(-x) - log_b
    out = _run([b.log_prob(x), b.prob(x), b.mean(), b.variance(), b.mode(), b.entropy(),
                b.total_concentration])
    np.testing.assert_allclose(out[0], expected, rtol=1e-12)
    np.testing.assert_allclose(out[1], np.exp(expected), rtol=1e-12)
    mean = C1 / (C1 + C0)
    np.testing.assert_allclose(out[2], mean, rtol=1e-12)
    np.testing.assert_allclose(out[3], mean * (1 - mean) / (1 + C1 + C0), rtol=1e-12)
    np.testing.assert_allclose(out[4], [np.nan, 1 / 1.5, np.nan], rtol=1e-12)
    np.testing.assert_allclose(out[5], [-1.1080502, -0.1080499, -0.9370944],
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[6], C1 + C0)


def test_beta_samples_and_gradient():
    c1 = tf.placeholder(tf.float64, [2])
    c0 = tf.placeholder(tf.float64, [2])
    s = tfd.Beta(c1, c0).sample(30000, seed=6)
    g1, g0 = tf.gradients(tf.reduce_mean(s, 0), [c1, c0])
    sv, gv1, gv0 = _run([s, g1, g0], {c1: [2.0, 0.5], c0: [3.0, 0.5]})
    assert np.all((sv > 0) & (sv < 1))
    np.testing.assert_allclose(sv.mean(0), [0.4, 0.5], atol=0.01)
    np.testing.assert_allclose(sv.var(0), [0.04, 0.125], rtol=0.05)
    # d/dc1 of c1 / (c1 + c0) = c0 / (c1 + c0)^2
    np.testing.assert_allclose(gv1, [3 / 25, 0.5], rtol=0.08)
    np.testing.assert_allclose(gv0, [-2 / 25, -0.5], rtol=0.08)


# -- Dirichlet ---------------------------------------------------------------------------------

ALPHA = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 4.0]])


def test_dirichlet_values():
    d = tfd.Dirichlet(ALPHA)
    x = np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]])
    total = ALPHA.sum(-1)
    lbeta = _lgamma(ALPHA).sum(-1) - _lgamma(total)
    expected = ((ALPHA - 1) * np.log(x)).sum(-1) - lbeta
    out = _run([d.log_prob(x), d.prob(x), d.mean(), d.variance(), d.covariance(), d.entropy(),
                d.log_prob([0.0, 0.5, 0.5])])
    np.testing.assert_allclose(out[0], expected, rtol=1e-12)
    np.testing.assert_allclose(out[1], np.exp(expected), rtol=1e-12)
    mean = ALPHA / total[:, None]
    np.testing.assert_allclose(out[2], mean, rtol=1e-12)
    cov = (np.eye(3) * mean[:, None, :] - mean[:, :, None] * mean[:, None, :]) / (
        1 + total[:, None, None])
    np.testing.assert_allclose(out[3], np.diagonal(cov, axis1=1, axis2=2), rtol=1e-12)
    np.testing.assert_allclose(out[4], cov, rtol=1e-12)
    np.testing.assert_allclose(out[5], [-1.2443442, -2.9611931], rtol=1e-5, atol=1e-6)
    # concentration 1 on a zero coordinate contributes 0 (xlogy), 0.5 gives +inf
    assert np.isfinite(out[6][0]) and out[6][1] == np.inf
    assert d.batch_shape.as_list() == [2] and d.event_shape.as_list() == [3]


def test_dirichlet_mode():
    d = tfd.Dirichlet([[2.0, 3.0, 4.0], [0.5, 2.0, 3.0]])
    np.testing.assert_allclose(_run(d.mode()), [[1 / 6, 2 / 6, 3 / 6], [np.nan] * 3],
                               rtol=1e-6)


def test_dirichlet_samples_and_gradient():
    alpha = tf.placeholder(tf.float64, [3])
    s = tfd.Dirichlet(alpha).sample(20000, seed=12)
    g = tf.gradients(tf.reduce_mean(s[:, 0]), [alpha])[0]
    sv, gv = _run([s, g], {alpha: [1.0, 2.0, 3.0]})
    np.testing.assert_allclose(sv.sum(-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(sv.mean(0), [1 / 6, 2 / 6, 3 / 6], atol=0.01)
    # d/dalpha of alpha_0 / sum(alpha) = (sum - alpha_0, -alpha_0, -alpha_0) / sum^2
    np.testing.assert_allclose(gv, np.array([5.0, -1.0, -1.0]) / 36, atol=0.01)


def test_gamma_and_beta_cdfs():
    # Erlang (integer concentration): P = 1 - e^-z sum_{j<k} z^j / j!
    g = tfd.Gamma(np.array([1.0, 2.0, 3.0]), np.array([2.0, 1.0, 0.5]))
    x = np.array([0.7, 1.5, 4.0])
    z = np.array([2.0, 1.0, 0.5]) * x
    erlang = 1 - np.exp(-z) * np.array([1.0, 1 + z[1], 1 + z[2] + z[2] ** 2 / 2])
    b = tfd.Beta(np.array([1.0, 2.5, 0.5]), np.array([3.0, 1.0, 3.0]))
    bx = np.array([0.3, 0.6, 0.0])
    out = _run([g.cdf(x), g.survival_function(x), g.log_cdf(x), b.cdf(bx), b.log_cdf(bx),
                b.survival_function(bx)])
    np.testing.assert_allclose(out[0], erlang, rtol=1e-10)
    np.testing.assert_allclose(out[1], 1 - erlang, rtol=1e-9)
    np.testing.assert_allclose(out[2], np.log(erlang), rtol=1e-10)
    beta_cdf = np.array([1 - 0.7**3, 0.6**2.5, 0.0])  # closed forms with a or b = 1
    np.testing.assert_allclose(out[3], beta_cdf, rtol=1e-10)
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(out[4], np.log(beta_cdf), rtol=1e-10)
    np.testing.assert_allclose(out[5], 1 - beta_cdf, rtol=1e-10)
    # TF 1.x literals (float32): Gamma([.5, 3], [1, 2]).cdf([.5, 2]), Beta([.5, 2], 3).cdf(...)
    lit = _run([tfd.Gamma([0.5, 3.0], [1.0, 2.0]).cdf([0.5, 2.0]),
                tfd.Beta([0.5, 2.0], 3.0).cdf([0.3, 0.6])])
    np.testing.assert_allclose(lit[0], [0.6826895, 0.7618967], rtol=1e-5)
    np.testing.assert_allclose(lit[1], [0.8400695, 0.8207999], rtol=1e-5)


_positive = st.floats(0.05, 20.0)


@settings(max_examples=25, deadline=None)
@given(_positive, _positive, st.floats(0.01, 0.99), _positive)
def test_gamma_beta_log_prob_property(a, b, u, scale):
    with tf.Graph().as_default():
        x = np.float64(u * scale)
        g = tfd.Gamma(np.float64(a), np.float64(b))
        bt = tfd.Beta(np.float64(a), np.float64(b))
        lg, lb, kl = _run([g.log_prob(x), bt.log_prob(np.float64(u)),
                           tfd.kl_divergence(bt, bt)])
    log_beta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    np.testing.assert_allclose(lg, a * math.log(b) + (a - 1) * math.log(x) - b * x
                               - math.lgamma(a), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(lb, (a - 1) * math.log(u) + (b - 1) * math.log1p(-u) - log_beta,
                               rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(kl, 0.0, atol=1e-9)
