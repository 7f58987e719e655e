"""tf.contrib.distributions.MultivariateNormalDiag and Independent against NumPy references
(log densities, entropy, the closed-form Gaussian KL with full matrices, sample moments)."""

import math

import numpy as np
import pytest

import tensorflux as tf

tfd = tf.contrib.distributions


def _normal_logpdf(x, m, s):
    return -0.5 * ((x - m) / s) ** 2 - np.log(s) - 0.5 * math.log(2 * math.pi)


def test_mvn_diag_log_prob_entropy_and_kl_match_numpy():
    rng = np.random.RandomState(0)
    loc_a, loc_b = rng.randn(2, 3).astype(np.float32), rng.randn(3).astype(np.float32)
    sc_a = rng.uniform(0.5, 2, (2, 3)).astype(np.float32)
    sc_b = rng.uniform(0.5, 2, 3).astype(np.float32)
    x = rng.randn(4, 1, 3).astype(np.float32)
    with tf.Graph().as_default():
        a = tfd.MultivariateNormalDiag(loc_a, sc_a)
        b = tfd.MultivariateNormalDiag(loc_b, sc_b)
        assert a.batch_shape.as_list() == [2] and a.event_shape.as_list() == [3]
        fetches = [a.log_prob(x), a.entropy(), tfd.kl_divergence(a, b), a.covariance(),
                   b.mean(), a.batch_shape_tensor(), a.event_shape_tensor()]
        with tf.Session() as sess:
            lp, ent, kl, cov, mean_b, bs, es = sess.run(fetches)
    np.testing.assert_allclose(lp, _normal_logpdf(x, loc_a, sc_a).sum(-1), rtol=1e-5)
    np.testing.assert_allclose(ent, (np.log(sc_a) + 0.5 * (1 + math.log(2 * math.pi))).sum(-1),
                               rtol=1e-5)
    for i in range(2):  # KL of full-matrix Gaussians
        cov_a, cov_b = np.diag(sc_a[i] ** 2), np.diag(sc_b ** 2)
        inv_b = np.linalg.inv(cov_b)
        d = loc_b - loc_a[i]
        ref = 0.5 * (np.trace(inv_b @ cov_a) + d @ inv_b @ d - 3
                     + np.log(np.linalg.det(cov_b) / np.linalg.det(cov_a)))
        np.testing.assert_allclose(kl[i], ref, rtol=1e-4)
        np.testing.assert_allclose(cov[i], cov_a, rtol=1e-6)
    np.testing.assert_array_equal(mean_b, loc_b)
    assert bs.tolist() == [2] and es.tolist() == [3]


def test_mvn_diag_samples_have_the_distribution_moments():
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        prior = tfd.MultivariateNormalDiag(tf.zeros(2) + [1.0, -2.0], [0.5, 3.0])
        draws = prior.sample(20000)
        ident = tfd.MultivariateNormalDiag(scale_diag=[2.0, 2.0], scale_identity_multiplier=0.5)
        assert draws.shape.as_list() == [20000, 2]
        with tf.Session() as sess:
            got, one, std = sess.run([draws, ident.sample(), ident.stddev()])
    np.testing.assert_allclose(got.mean(0), [1.0, -2.0], atol=0.06)
    np.testing.assert_allclose(got.std(0), [0.5, 3.0], rtol=0.03)
    assert one.shape == (2,)
    np.testing.assert_array_equal(std, [1.0, 1.0])


def test_independent_bernoulli_sums_the_reinterpreted_axes():
    rng = np.random.RandomState(2)
    logits = rng.randn(2, 3, 4).astype(np.float32)
    x = (rng.rand(5, 2, 3, 4) > 0.5).astype(np.float32)
    with tf.Graph().as_default():
        pixels = tfd.Independent(tfd.Bernoulli(logits), 2)
        assert pixels.batch_shape.as_list() == [2] and pixels.event_shape.as_list() == [3, 4]
        assert tfd.Independent(tfd.Bernoulli(logits)).reinterpreted_batch_ndims == 2
        n_a = tfd.Independent(tf.distributions.Normal(logits, 1.5), 1)
        n_b = tfd.Independent(tf.distributions.Normal(0.0 * logits, 0.5), 1)
        with tf.Session() as sess:
            lp, p, mean, ent, kl, draw = sess.run([
                pixels.log_prob(x), pixels.prob(x[0]), pixels.mean(), n_a.entropy(),
                tfd.kl_divergence(n_a, n_b), pixels.sample(3)])
    probs = 1 / (1 + np.exp(-logits))
    ref = np.where(x == 1, np.log(probs), np.log1p(-probs)).sum((-1, -2))
    np.testing.assert_allclose(lp, ref, rtol=1e-5)
    np.testing.assert_allclose(p, np.exp(ref[0]), rtol=1e-4)
    np.testing.assert_allclose(mean, probs, rtol=1e-6)
    np.testing.assert_allclose(ent, np.full((2, 3), 4 * (0.5 + 0.5 * math.log(2 * math.pi)
                                                          + math.log(1.5))), rtol=1e-5)
    ref_kl = (np.log(0.5 / 1.5) + (1.5 ** 2 + logits ** 2) / (2 * 0.25) - 0.5).sum(-1)
    np.testing.assert_allclose(kl, ref_kl, rtol=1e-5)
    assert draw.shape == (3, 2, 3, 4)


def test_bad_arguments_raise_value_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="loc"):
            tfd.MultivariateNormalDiag()
        with pytest.raises(ValueError, match="cannot exceed"):
            tfd.Independent(tf.distributions.Normal([0.0], 1.0), 2)
        with pytest.raises(ValueError, match="non-negative"):
            tfd.Independent(tf.distributions.Normal([0.0], 1.0), -1)
        with pytest.raises(tf.errors.InvalidArgumentError, match="non-positive"):
            tfd.MultivariateNormalDiag([0.0], [-1.0], validate_args=True)  # known statically
        scale = tf.placeholder(tf.float32, [1])
        checked = tfd.MultivariateNormalDiag([0.0], scale, validate_args=True)
        with tf.Session() as sess:
            assert sess.run(checked.mean(), {scale: [2.0]}).tolist() == [0.0]
            with pytest.raises(tf.errors.InvalidArgumentError, match="non-positive"):
                sess.run(checked.mean(), {scale: [0.0]})
