"""tf.distributions.kl_divergence for the pairs TF 1.x registers: closed forms, TF 1.x
literals, Monte Carlo agreement, and gradients by finite differences."""

import numpy as np
import pytest

import tensorflux as tf

tfd = tf.distributions


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def test_kl_normal_normal_closed_form():
    m1, s1 = np.array([0.0, 1.0, -2.0]), np.array([1.0, 0.5, 3.0])
    m2, s2 = np.array([1.0, 1.0, 0.0]), np.array([2.0, 0.5, 1.0])
    kl = _run(tfd.kl_divergence(tfd.Normal(m1, s1), tfd.Normal(m2, s2)))
    expected = np.log(s2 / s1) + (s1**2 + (m1 - m2) ** 2) / (2 * s2**2) - 0.5
    np.testing.assert_allclose(kl, expected, rtol=1e-12)
    assert kl[1] == 0.0


def test_kl_bernoulli_and_categorical_closed_form():
    pa, pb = np.array([0.1, 0.5, 0.9]), np.array([0.3, 0.5, 0.2])
    kl = _run(tfd.kl_divergence(tfd.Bernoulli(probs=pa), tfd.Bernoulli(probs=pb)))
    expected = pa * np.log(pa / pb) + (1 - pa) * np.log((1 - pa) / (1 - pb))
    np.testing.assert_allclose(kl, expected, rtol=1e-10)
    qa = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])
    qb = np.array([[0.3, 0.3, 0.4], [0.6, 0.2, 0.2]])
    kl = _run(tfd.kl_divergence(tfd.Categorical(probs=qa), tfd.Categorical(logits=np.log(qb))))
    np.testing.assert_allclose(kl, (qa * np.log(qa / qb)).sum(-1), rtol=1e-10)


def test_kl_gamma_family_beta_dirichlet_match_tf_literals():
    g = tfd.Gamma([0.5, 3.0, 7.5], [1.0, 2.0, 0.5])
    e = tfd.Exponential([1.0, 2.5])
    b = tfd.Beta([0.5, 2.0, 4.0], [3.0, 1.5, 0.7])
    d = tfd.Dirichlet([[1.0, 2.0, 3.0], [0.5, 0.5, 4.0]])
    out = _run([
        tfd.kl_divergence(g, tfd.Gamma([1.0, 2.0, 3.0], [2.0, 1.0, 1.5])),
        tfd.kl_divergence(e, tfd.Exponential([3.0, 0.5])),
        tfd.kl_divergence(e, tfd.Gamma([2.0, 1.0], [3.0, 0.5])),
        tfd.kl_divergence(b, tfd.Beta([1.0, 2.0, 3.0], [2.0, 1.0, 0.5])),
        tfd.kl_divergence(d, tfd.Dirichlet([[1.0, 1.0, 1.0], [2.0, 3.0, 0.5]])),
    ])
    # printed by TF 1.x (tf.compat.v1.distributions, float32)
    expected = [[0.2162433, 0.1159314, 13.6233549], [0.9013877, 0.8094379],
                [0.3799913, 0.8094379], [0.5952755, 0.0952753, 0.0355211],
                [0.5511971, 10.5527763]]
    for got, want in zip(out, expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # Exponential-Exponential in closed form: log(r1 / r2) + r2 / r1 - 1
    r1, r2 = np.array([1.0, 2.5]), np.array([3.0, 0.5])
    np.testing.assert_allclose(out[1], np.log(r1 / r2) + r2 / r1 - 1, rtol=1e-6)


def test_kl_of_identical_distributions_is_zero():
    pairs = [(tfd.Gamma(2.0, 3.0), tfd.Gamma(2.0, 3.0)), (tfd.Beta(2.0, 3.0), tfd.Beta(2.0, 3.0)),
             (tfd.Dirichlet([1.0, 2.0]), tfd.Dirichlet([1.0, 2.0]))]
    for a, b in pairs:
        np.testing.assert_allclose(_run(tfd.kl_divergence(a, b)), 0.0, atol=1e-6)


def test_kl_matches_monte_carlo():
    a, b = tfd.Gamma(np.float64(3.0), np.float64(2.0)), tfd.Gamma(np.float64(2.0), np.float64(1.0))
    x = a.sample(100000, seed=21)
    mc = tf.reduce_mean(a.log_prob(x) - b.log_prob(x))
    kl, mc_value = _run([tfd.kl_divergence(a, b), mc])
    np.testing.assert_allclose(mc_value, kl, atol=0.01)


def test_kl_gradients_finite_differences():
    loc = tf.placeholder(tf.float64, [2])
    scale = tf.placeholder(tf.float64, [2])
    logits = tf.placeholder(tf.float64, [2, 3])
    c1 = tf.placeholder(tf.float64, [2])
    c0 = tf.placeholder(tf.float64, [2])
    # gradients with respect to the second argument's parameters do not go through digamma
    y = tf.reduce_sum(
        tfd.kl_divergence(tfd.Normal(loc, scale), tfd.Normal(scale, loc + 2.0))
        + tfd.kl_divergence(tfd.Bernoulli(logits=loc), tfd.Bernoulli(logits=scale))
        + tfd.kl_divergence(tfd.Categorical(logits=logits),
                            tfd.Categorical(logits=logits[::-1] * 0.5))
        + tfd.kl_divergence(tfd.Beta(np.float64(1.5), np.float64(2.5)), tfd.Beta(c1, c0))
        + tfd.kl_divergence(tfd.Gamma(np.float64(1.5), np.float64(2.5)), tfd.Gamma(c1, c0))
        + tfd.kl_divergence(tfd.Dirichlet(np.array([1.0, 2.0])),
                            tfd.Dirichlet(tf.stack([c1, c0], -1))))
    init = [np.array([0.1, -0.4]), np.array([1.2, 0.7]), np.array([[0.1, 0.5, -1.0],
                                                                   [2.0, 0.0, 0.3]]),
            np.array([1.5, 0.7]), np.array([2.0, 3.0])]
    with tf.Session():
        err = tf.test.compute_gradient_error([loc, scale, logits, c1, c0],
                                             [[2], [2], [2, 3], [2], [2]], y, [],
                                             x_init_value=init, delta=1e-5)
    assert err < 1e-5
