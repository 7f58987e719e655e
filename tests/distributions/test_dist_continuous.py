"""tf.distributions Normal, Uniform, Laplace, StudentT: values against closed forms, sample
moments with fixed seeds, and gradients through reparameterized samples."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf

tfd = tf.distributions
_erfc = np.vectorize(math.erfc)
_lgamma = np.vectorize(math.lgamma)


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def _norm_cdf(z):
    return 0.5 * _erfc(-np.asarray(z, np.float64) / np.sqrt(2.0))


# -- Normal ------------------------------------------------------------------------------------

LOC = np.array([0.0, 1.0, -2.0], np.float64)
SCALE = np.array([1.0, 2.0, 0.5], np.float64)
X = np.array([0.5, -3.0, -2.2], np.float64)


def test_normal_values():
    n = tfd.Normal(LOC, SCALE)
    z = (X - LOC) / SCALE
    out = _run([n.log_prob(X), n.prob(X), n.cdf(X), n.log_cdf(X), n.survival_function(X),
                n.log_survival_function(X), n.entropy(), n.mean(), n.mode(), n.stddev(),
                n.variance(), n.quantile([0.1, 0.5, 0.975])])
    log_pdf = -0.5 * z**2 - np.log(SCALE) - 0.5 * np.log(2 * np.pi)
    np.testing.assert_allclose(out[0], log_pdf, rtol=1e-12)
    np.testing.assert_allclose(out[1], np.exp(log_pdf), rtol=1e-12)
    np.testing.assert_allclose(out[2], _norm_cdf(z), rtol=1e-12)
    np.testing.assert_allclose(out[3], np.log(_norm_cdf(z)), rtol=1e-12)
    np.testing.assert_allclose(out[4], _norm_cdf(-z), rtol=1e-12)
    np.testing.assert_allclose(out[5], np.log(_norm_cdf(-z)), rtol=1e-12)
    np.testing.assert_allclose(out[6], 0.5 * np.log(2 * np.pi * np.e * SCALE**2), rtol=1e-12)
    np.testing.assert_allclose(out[7], LOC)
    np.testing.assert_allclose(out[8], LOC)
    np.testing.assert_allclose(out[9], SCALE)
    np.testing.assert_allclose(out[10], SCALE**2)
    np.testing.assert_allclose(_norm_cdf((out[11] - LOC) / SCALE), [0.1, 0.5, 0.975],
                               rtol=1e-9)
    assert all(o.dtype == np.float64 for o in out)


def test_normal_float32_and_reference_literals():
    # values printed by TF 1.x's tf.distributions.Normal(0., [1., 2.]) at x = [0.5, -30.]
    n = tfd.Normal(0.0, [1.0, 2.0])
    lp, lc = _run([n.log_prob([0.5, -30.0]), n.log_cdf([0.5, -30.0])])
    assert lp.dtype == np.float32
    np.testing.assert_allclose(lp, [-1.0439385, -114.11209], rtol=1e-6)
    np.testing.assert_allclose(lc, [-0.3689464, -116.13139], rtol=1e-5)


def test_normal_log_cdf_far_tails():
    x = np.array([-40.0, -25.0, -19.0, -5.0, 0.0, 7.0, 9.0, 30.0])
    lc = _run(tfd.Normal(np.float64(0.0), np.float64(1.0)).log_cdf(x))
    # asymptotic log ndtr for x << 0; log1p(-ndtr(-x)) ~ -ndtr(-x) for x >> 0
    far = x[:2]
    asym = (-0.5 * far**2 - np.log(-far) - 0.5 * np.log(2 * np.pi)
            + np.log(1 - 1 / far**2 + 3 / far**4 - 15 / far**6))
    np.testing.assert_allclose(lc[:2], asym, rtol=1e-12)
    np.testing.assert_allclose(lc[2:5], np.log(_norm_cdf(x[2:5])), rtol=1e-10)
    np.testing.assert_allclose(lc[5:], -_norm_cdf(-x[5:]), rtol=1e-8)
    assert np.all(np.isfinite(lc))


@settings(max_examples=25, deadline=None)
@given(st.floats(-5, 5), st.floats(0.1, 5), st.floats(-10, 10))
def test_normal_log_prob_and_cdf_property(loc, scale, x):
    with tf.Graph().as_default():
        n = tfd.Normal(np.float64(loc), np.float64(scale))
        lp, cdf = _run([n.log_prob(np.float64(x)), n.cdf(np.float64(x))])
    z = (x - loc) / scale
    np.testing.assert_allclose(lp, -0.5 * z * z - math.log(scale) - 0.5 * math.log(2 * math.pi),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(cdf, 0.5 * math.erfc(-z / math.sqrt(2)), rtol=1e-10, atol=1e-300)


def test_normal_sample_moments():
    n = tfd.Normal([1.0, -2.0], [0.5, 3.0])
    s = _run(n.sample(40000, seed=17))
    assert s.shape == (40000, 2) and s.dtype == np.float32
    np.testing.assert_allclose(s.mean(0), [1.0, -2.0], atol=0.05)
    np.testing.assert_allclose(s.std(0), [0.5, 3.0], rtol=0.03)


def test_normal_reparameterized_gradient_vae_style():
    mu = tf.placeholder(tf.float64, [3])
    log_sigma = tf.placeholder(tf.float64, [3])
    q = tfd.Normal(mu, tf.exp(log_sigma))
    z = q.sample(seed=5)
    loss = tf.reduce_sum(tf.square(z)) + tf.reduce_sum(tfd.kl_divergence(
        q, tfd.Normal(np.zeros(3), np.ones(3))))
    g_mu, g_ls = tf.gradients(loss, [mu, log_sigma])
    m, ls = np.array([0.3, -1.0, 2.0]), np.array([0.1, -0.5, 0.0])
    zv, gm, gl = _run([z, g_mu, g_ls], {mu: m, log_sigma: ls})
    sigma = np.exp(ls)
    eps = (zv - m) / sigma
    # d/dmu: 2 z + mu ; d/dlog_sigma: 2 z eps sigma + (sigma^2 - 1)
    np.testing.assert_allclose(gm, 2 * zv + m, rtol=1e-10)
    np.testing.assert_allclose(gl, 2 * zv * eps * sigma + sigma**2 - 1, rtol=1e-10)


def test_normal_log_prob_gradient_finite_differences():
    loc = tf.placeholder(tf.float64, [2])
    scale = tf.placeholder(tf.float64, [2])
    y = tf.reduce_sum(tfd.Normal(loc, scale).log_prob([0.3, 1.7]) +
                      tfd.Normal(loc, scale).log_cdf([0.3, -1.7]))
    with tf.Session():
        err = tf.test.compute_gradient_error([loc, scale], [[2], [2]], y, [],
                                             x_init_value=[np.array([0.1, 0.2]),
                                                           np.array([1.2, 0.7])],
                                             delta=1e-5)
    assert err < 1e-6


# -- Uniform -----------------------------------------------------------------------------------

def test_uniform_values_and_edges():
    u = tfd.Uniform(low=[0.0, 1.0], high=3.0)
    x = np.array([[0.5, 3.0], [-1.0, 1.0], [np.nan, 2.0]], np.float32)
    prob, cdf, lp = _run([u.prob(x), u.cdf(x), u.log_prob(x[:2])])
    np.testing.assert_allclose(prob, [[1 / 3, 0.0], [0.0, 0.5], [np.nan, 0.5]], rtol=1e-6)
    np.testing.assert_allclose(cdf, [[1 / 6, 1.0], [0.0, 0.0], [np.nan, 0.5]], rtol=1e-6)
    np.testing.assert_allclose(lp, [[np.log(1 / 3), -np.inf], [-np.inf, np.log(0.5)]], rtol=1e-6)
    out = _run([u.entropy(), u.mean(), u.variance(), u.stddev(), u.range()])
    np.testing.assert_allclose(out[0], np.log([3.0, 2.0]), rtol=1e-6)
    np.testing.assert_allclose(out[1], [1.5, 2.0])
    np.testing.assert_allclose(out[2], np.array([9.0, 4.0]) / 12, rtol=1e-6)
    np.testing.assert_allclose(out[3], np.sqrt(np.array([9.0, 4.0]) / 12), rtol=1e-6)
    np.testing.assert_allclose(out[4], [3.0, 2.0])


def test_uniform_samples_and_gradient():
    low = tf.placeholder(tf.float64, [])
    high = tf.placeholder(tf.float64, [])
    u = tfd.Uniform(low, high)
    s = u.sample(20000, seed=2)
    g_low, g_high = tf.gradients(tf.reduce_mean(s), [low, high])
    sv, gl, gh = _run([s, g_low, g_high], {low: -1.0, high: 3.0})
    assert sv.min() >= -1.0 and sv.max() < 3.0
    np.testing.assert_allclose([sv.mean(), sv.var()], [1.0, 16 / 12], rtol=0.03)
    np.testing.assert_allclose([gl, gh], [0.5, 0.5], atol=0.02)
    np.testing.assert_allclose(gl + gh, 1.0, rtol=1e-12)


# -- Laplace -----------------------------------------------------------------------------------

def test_laplace_values():
    loc, scale = np.array([0.0, 1.0, 2.0]), np.array([1.0, 2.0, 0.5])
    x = np.array([0.5, -3.0, 30.0])
    lap = tfd.Laplace(loc, scale)
    z = (x - loc) / scale
    cdf = np.where(z < 0, 0.5 * np.exp(z), 1 - 0.5 * np.exp(-z))
    out = _run([lap.log_prob(x), lap.prob(x), lap.cdf(x), lap.log_cdf(x),
                lap.log_survival_function(x), lap.survival_function(x), lap.entropy(),
                lap.mean(), lap.mode(), lap.stddev(), lap.variance()])
    np.testing.assert_allclose(out[0], -np.abs(z) - np.log(2 * scale), rtol=1e-12)
    np.testing.assert_allclose(out[1], np.exp(-np.abs(z)) / (2 * scale), rtol=1e-12)
    np.testing.assert_allclose(out[2], cdf, rtol=1e-12)
    np.testing.assert_allclose(out[3], [np.log(cdf[0]), np.log(cdf[1]), -0.5 * np.exp(-56.0)],
                               rtol=1e-9)
    np.testing.assert_allclose(out[4], [np.log(1 - cdf[0]), np.log(1 - cdf[1]), np.log(0.5) - 56],
                               rtol=1e-12)
    np.testing.assert_allclose(out[5], [1 - cdf[0], 1 - cdf[1], 0.5 * np.exp(-56.0)], rtol=1e-9)
    np.testing.assert_allclose(out[6], 1 + np.log(2 * scale), rtol=1e-12)
    np.testing.assert_allclose(out[7], loc)
    np.testing.assert_allclose(out[8], loc)
    np.testing.assert_allclose(out[9], np.sqrt(2) * scale, rtol=1e-12)
    np.testing.assert_allclose(out[10], 2 * scale**2, rtol=1e-12)


def test_laplace_samples_and_gradient():
    loc = tf.placeholder(tf.float64, [])
    scale = tf.placeholder(tf.float64, [])
    s = tfd.Laplace(loc, scale).sample(40000, seed=9)
    g = tf.gradients(tf.reduce_mean(tf.abs(s - loc)), [scale])[0]
    sv, gv = _run([s, g], {loc: 1.0, scale: 2.0})
    np.testing.assert_allclose(sv.mean(), 1.0, atol=0.05)
    np.testing.assert_allclose(sv.var(), 8.0, rtol=0.05)
    np.testing.assert_allclose(gv, np.mean(np.abs(sv - 1.0)) / 2.0, rtol=1e-10)  # E|x-mu|=b


# -- StudentT ----------------------------------------------------------------------------------

DF = np.array([0.5, 1.5, 3.0, 7.0])
T_LOC = np.array([0.0, 1.0, 2.0, -1.0])
T_SCALE = np.array([1.0, 2.0, 3.0, 0.5])


def test_student_t_values():
    t = tfd.StudentT(DF, T_LOC, T_SCALE)
    x = np.array([0.5, -3.0, 1.0, 2.0])
    y = (x - T_LOC) / T_SCALE
    expected = (_lgamma((DF + 1) / 2) - _lgamma(DF / 2) - 0.5 * np.log(DF * np.pi)
                - np.log(T_SCALE) - (DF + 1) / 2 * np.log1p(y**2 / DF))
    out = _run([t.log_prob(x), t.prob(x), t.mean(), t.variance(), t.mode(), t.entropy()])
    np.testing.assert_allclose(out[0], expected, rtol=1e-12)
    np.testing.assert_allclose(out[1], np.exp(expected), rtol=1e-12)
    np.testing.assert_allclose(out[2], [np.nan, 1.0, 2.0, -1.0])
    np.testing.assert_allclose(out[3], [np.nan, np.inf, 27.0, 0.25 * 7 / 5], rtol=1e-12)
    np.testing.assert_allclose(out[4], T_LOC)
    # TF 1.x reference values for entropy and (float32) log_prob
    np.testing.assert_allclose(out[5], [3.666728, 2.8428059, 2.8720896, 0.8732305], rtol=1e-6)
    np.testing.assert_allclose(out[0], [-1.6146318, -3.3939013, -2.1722367, -7.5225468],
                               rtol=1e-6)


def test_student_t_samples_and_gradient():
    df = tf.placeholder(tf.float64, [])
    t = tfd.StudentT(df, np.float64(1.0), np.float64(2.0))
    s = t.sample(60000, seed=4)
    g_df = tf.gradients(tf.reduce_mean(tf.square(s - 1.0)), [df])[0]
    sv, gv = _run([s, g_df], {df: 8.0})
    np.testing.assert_allclose(sv.mean(), 1.0, atol=0.05)
    np.testing.assert_allclose(sv.var(), 4.0 * 8 / 6, rtol=0.05)
    # E[(x - loc)^2] = scale^2 df / (df - 2): derivative -2 scale^2 / (df - 2)^2
    np.testing.assert_allclose(gv, -2 * 4.0 / 36.0, rtol=0.15)


def test_student_t_cdf():
    # df = 1 is the Cauchy distribution, df = 2 has a closed form as well
    t = tfd.StudentT(np.array([1.0, 2.0, 1.0]), np.array([0.0, 1.0, -1.0]),
                     np.array([1.0, 2.0, 0.5]))
    x = np.array([0.5, -3.0, 2.0])
    y = (x - np.array([0.0, 1.0, -1.0])) / np.array([1.0, 2.0, 0.5])
    expected = np.array([0.5 + np.arctan(y[0]) / np.pi, 0.5 + y[1] / (2 * np.sqrt(2 + y[1]**2)),
                         0.5 + np.arctan(y[2]) / np.pi])
    cdf, sf, lc = _run([t.cdf(x), t.survival_function(x), t.log_cdf(x)])
    np.testing.assert_allclose(cdf, expected, rtol=1e-10)
    np.testing.assert_allclose(sf, 1 - expected, rtol=1e-10)
    np.testing.assert_allclose(lc, np.log(expected), rtol=1e-10)
    # TF 1.x literal (float32)
    lit = _run(tfd.StudentT(DF[:3], T_LOC[:3], T_SCALE[:3]).cdf([0.5, -3.0, 1.0]))
    np.testing.assert_allclose(lit, [0.6213409, 0.1120942, 0.3804102], rtol=1e-5)
