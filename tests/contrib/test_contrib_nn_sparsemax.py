"""tf.contrib.nn variants and tf.contrib.sparsemax against NumPy references and the paper's
formulas (Martins & Astudillo 2016), with finite-difference gradients."""

import numpy as np
import pytest

import tensorflux as tf


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def _sparsemax_ref(z):
    out = np.zeros_like(z)
    for i, row in enumerate(z):
        srt = np.sort(row)[::-1]
        cums = np.cumsum(srt)
        ks = np.arange(1, len(row) + 1)
        k = ks[1 + ks * srt > cums].max()
        tau = (cums[k - 1] - 1) / k
        out[i] = np.maximum(row - tau, 0)
    return out


def test_sparsemax_values_match_the_projection():
    z = np.random.RandomState(0).randn(6, 5) * 2
    z[0] = [5.0, 0.0, 0.0, 0.0, 0.0]  # one-hot
    z[1] = [1.0, 1.0, 1.0, 1.0, 1.0]  # uniform
    got = _run(tf.contrib.sparsemax.sparsemax(tf.constant(z)))
    np.testing.assert_allclose(got, _sparsemax_ref(z), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.sum(1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(got[0], [1, 0, 0, 0, 0])
    np.testing.assert_allclose(got[1], 0.2)
    assert (got == 0).any()
    bad = _run(tf.contrib.sparsemax.sparsemax(tf.constant([[np.nan, 1.0], [np.inf, 0.0],
                                                           [0.5, 0.25]])))
    assert np.isnan(bad[:2]).all()
    np.testing.assert_allclose(bad[2], [0.625, 0.375])


def test_sparsemax_jacobian_and_loss_gradient_match_the_paper():
    rng = np.random.RandomState(1)
    z = rng.randn(4, 5)
    x = tf.placeholder(tf.float64, z.shape)
    s = tf.contrib.sparsemax.sparsemax(x)
    v = rng.randn(4, 5)
    (g,) = tf.gradients(tf.reduce_sum(s * v), [x])
    q = np.eye(5)[rng.randint(0, 5, size=4)]
    loss = tf.contrib.sparsemax.sparsemax_loss(x, s, tf.constant(q))
    (gl,) = tf.gradients(tf.reduce_sum(loss), [x])
    s_v, g_v, loss_v, gl_v = _run([s, g, loss, gl], {x: z})
    for i in range(4):
        support = (s_v[i] > 0).astype(float)
        jac = np.diag(support) - np.outer(support, support) / support.sum()
        np.testing.assert_allclose(g_v[i], jac @ v[i], rtol=1e-10, atol=1e-12)
        on = s_v[i] > 0
        # loss = sum_{j in S} (z_j^2 - tau^2) / 2 + |q|^2 / 2 - q . z  (s_j = z_j - tau on S)
        tau = z[i, on][0] - s_v[i, on][0]
        expected = 0.5 * np.sum(z[i, on] ** 2 - tau ** 2) + 0.5 * q[i] @ q[i] - q[i] @ z[i]
        assert loss_v[i] == pytest.approx(expected, rel=1e-10)
        assert loss_v[i] >= 0
    # d loss / d z = sparsemax(z) - q (the sparsemax argument is held fixed, as in TF)
    np.testing.assert_allclose(gl_v, s_v - q, rtol=1e-10, atol=1e-12)


def test_sparsemax_loss_is_zero_at_the_target_and_handles_minus_inf():
    z = np.array([[10.0, 0.0, -np.inf]])
    s = _run(tf.contrib.sparsemax.sparsemax(tf.constant(z)))
    loss = _run(tf.contrib.sparsemax.sparsemax_loss(z, s, np.array([[1.0, 0.0, 0.0]])))
    assert loss[0] == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="logits"):
        tf.contrib.sparsemax.sparsemax(tf.zeros([3]))
    with pytest.raises(TypeError, match="float"):
        tf.contrib.sparsemax.sparsemax(tf.zeros([2, 3], tf.int32))


def test_alpha_dropout_keeps_mean_and_variance():
    x = np.random.RandomState(2).randn(200, 1000).astype(np.float32)
    keep = 0.8
    out = _run(tf.contrib.nn.alpha_dropout(tf.constant(x), keep, seed=3))
    alpha = -1.7580993408473766
    a = (keep + keep * (1 - keep) * alpha ** 2) ** -0.5
    b = -a * alpha * (1 - keep)
    kept = np.isclose(out, a * x + b, atol=1e-5)
    dropped = np.isclose(out, a * alpha + b, atol=1e-5)
    assert (kept | dropped).all()
    assert abs(dropped.mean() - (1 - keep)) < 0.01
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1) < 0.02
    same = tf.constant(x[:2])
    assert tf.contrib.nn.alpha_dropout(same, 1.0) is same
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match="keep_prob"):
            tf.contrib.nn.alpha_dropout(same, bad)


def test_scaled_softplus_values_and_gradients():
    rng = np.random.RandomState(4)
    xv = rng.randn(3, 4) * 3
    alpha = np.array([0.5, 1.0, 2.0, 0.1])
    x = tf.placeholder(tf.float64, xv.shape)
    y = tf.contrib.nn.scaled_softplus(x, alpha)
    yc = tf.contrib.nn.scaled_softplus(x, alpha, clip=1.0)
    (g,) = tf.gradients(tf.reduce_sum(y), [x])
    y_v, yc_v, g_v = _run([y, yc, g], {x: xv})
    ref = alpha * np.log1p(np.exp(xv / alpha))
    np.testing.assert_allclose(y_v, ref, rtol=1e-12)
    np.testing.assert_allclose(yc_v, np.minimum(ref, 1.0), rtol=1e-12)
    np.testing.assert_allclose(g_v, 1 / (1 + np.exp(-xv / alpha)), rtol=1e-10)


def test_sampled_sparse_softmax_loss_matches_numpy():
    rng = np.random.RandomState(5)
    num_classes, dim, batch = 10, 3, 4
    w = rng.randn(num_classes, dim)
    b = rng.randn(num_classes)
    x = rng.randn(batch, dim)
    labels = np.array([[1], [4], [7], [9]], np.int64)
    sampled = np.array([0, 2, 5], np.int64)
    true_exp = np.full((batch, 1), 0.3)
    sampled_exp = np.array([0.2, 0.4, 0.5])
    loss = tf.contrib.nn.sampled_sparse_softmax_loss(
        tf.constant(w), tf.constant(b), tf.constant(labels), tf.constant(x), 3, num_classes,
        sampled_values=(tf.constant(sampled), tf.constant(true_exp),
                        tf.constant(sampled_exp)))
    got = _run(loss)
    true_logit = np.sum(x * w[labels[:, 0]], 1) + b[labels[:, 0]] - np.log(0.3)
    samp_logits = x @ w[sampled].T + b[sampled] - np.log(sampled_exp)
    logits = np.concatenate([true_logit[:, None], samp_logits], 1)
    ref = -logits[:, 0] + np.log(np.exp(logits).sum(1))
    np.testing.assert_allclose(got, ref, rtol=1e-10)
    with pytest.raises(ValueError, match="labels"):
        tf.contrib.nn.sampled_sparse_softmax_loss(w, b, tf.zeros([4, 2], tf.int64), x, 3, 10)


def test_nth_element():
    v = np.random.RandomState(6).randn(2, 3, 7)
    small, large = _run([tf.contrib.nn.nth_element(v, 2),
                         tf.contrib.nn.nth_element(v, 0, reverse=True)])
    np.testing.assert_array_equal(small, np.sort(v, -1)[..., 2])
    np.testing.assert_array_equal(large, v.max(-1))
    with pytest.raises(ValueError, match="non-negative"):
        tf.contrib.nn.nth_element(v, -1)
    assert tf.contrib.nn.conv1d_transpose is tf.nn.conv1d_transpose


def test_flipped_cross_entropies_take_logits_first():
    logits = np.array([[2.0, -1.0, 0.5], [0.1, 0.2, 0.3]])
    onehot = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    ids = np.array([2, 0])
    soft, sparse, sig = _run([
        tf.contrib.nn.deprecated_flipped_softmax_cross_entropy_with_logits(logits, onehot),
        tf.contrib.nn.deprecated_flipped_sparse_softmax_cross_entropy_with_logits(logits, ids),
        tf.contrib.nn.deprecated_flipped_sigmoid_cross_entropy_with_logits(logits, onehot)])
    log_softmax = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    np.testing.assert_allclose(soft, -log_softmax[[0, 1], ids], rtol=1e-12)
    np.testing.assert_allclose(sparse, soft, rtol=1e-12)
    np.testing.assert_allclose(sig, np.log1p(np.exp(-logits)) + (1 - onehot) * logits,
                               rtol=1e-12)
