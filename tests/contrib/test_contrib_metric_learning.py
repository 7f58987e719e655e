"""tf.contrib.losses.metric_learning: values against direct NumPy definitions, gradients, errors."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.contrib.losses import metric_learning


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _sq_dists(x):
    return ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)


def _semihard_reference(labels, emb, margin):
    """FaceNet's semi-hard rule, one anchor-positive pair at a time."""
    d = _sq_dists(emb.astype(np.float64))
    losses = []
    for a in range(len(labels)):
        negs = [n for n in range(len(labels)) if labels[n] != labels[a]]
        for p in range(len(labels)):
            if p == a or labels[p] != labels[a]:
                continue
            farther = [d[a, n] for n in negs if d[a, n] > d[a, p]]
            if farther:
                d_an = min(farther)
            else:
                d_an = max(d[a, n] for n in negs)
            losses.append(max(margin + d[a, p] - d_an, 0.0))
    return np.mean(losses)


def test_pairwise_distance_matches_numpy_and_has_zero_diagonal():
    rng = np.random.RandomState(0)
    x = rng.randn(6, 3).astype(np.float32)
    x[4] = x[1]  # a duplicate row: distance exactly 0, not a tiny negative
    sq = metric_learning.pairwise_distance(x, squared=True)
    plain = metric_learning.pairwise_distance(x)
    with tf.Session() as sess:
        sq_v, plain_v = sess.run([sq, plain])
    ref = _sq_dists(x.astype(np.float64))
    np.fill_diagonal(ref, 0.0)
    np.testing.assert_allclose(sq_v, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(plain_v, np.sqrt(ref), rtol=1e-4, atol=1e-3)
    assert np.all(np.diag(plain_v) == 0) and plain_v[1, 4] == 0


@pytest.mark.parametrize("seed,margin", [(1, 1.0), (2, 0.2), (3, 5.0)])
def test_triplet_semihard_loss_matches_per_pair_definition(seed, margin):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 3, size=10).astype(np.int32)
    emb = rng.randn(10, 4).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    loss = metric_learning.triplet_semihard_loss(labels, emb, margin=margin)
    with tf.Session() as sess:
        got = sess.run(loss)
    np.testing.assert_allclose(got, _semihard_reference(labels, emb, margin), rtol=1e-4)


def test_triplet_semihard_loss_falls_back_to_farthest_negative():
    # Anchor 0 / positive 1 are far apart; the only negative is closer than the positive.
    labels = np.array([0, 0, 1], np.int32)
    emb = np.array([[0.0, 0.0], [3.0, 0.0], [1.0, 0.0]], np.float32)
    with tf.Session() as sess:
        got = sess.run(metric_learning.triplet_semihard_loss(labels, emb, margin=1.0))
    # pairs (0,1): 1 + 9 - 1 = 9; (1,0): 1 + 9 - 4 = 6 -> mean 7.5
    assert got == pytest.approx(7.5)
    assert got == pytest.approx(_semihard_reference(labels, emb, 1.0))


def test_triplet_semihard_loss_gradient_matches_finite_differences():
    rng = np.random.RandomState(4)
    labels = np.array([0, 0, 1, 1, 2, 2], np.int32)
    x0 = rng.randn(6, 3)
    emb = tf.placeholder(tf.float64, [6, 3])
    loss = metric_learning.triplet_semihard_loss(labels, emb, margin=1.0)
    (grad,) = tf.gradients(loss, [emb])
    with tf.Session() as sess:
        g = sess.run(grad, {emb: x0})
        num = np.zeros_like(x0)
        eps = 1e-6
        for idx in np.ndindex(*x0.shape):
            xp, xm = x0.copy(), x0.copy()
            xp[idx] += eps
            xm[idx] -= eps
            num[idx] = (sess.run(loss, {emb: xp}) - sess.run(loss, {emb: xm})) / (2 * eps)
    np.testing.assert_allclose(g, num, rtol=1e-4, atol=1e-6)


def test_contrastive_loss_matches_numpy():
    rng = np.random.RandomState(5)
    a, p = rng.randn(7, 3).astype(np.float32), rng.randn(7, 3).astype(np.float32)
    y = np.array([1, 0, 1, 0, 0, 1, 0])
    with tf.Session() as sess:
        got = sess.run(metric_learning.contrastive_loss(y, a, p, margin=2.0))
    d = np.sqrt(((a - p) ** 2).sum(1))
    ref = np.mean(y * d ** 2 + (1 - y) * np.maximum(2.0 - d, 0) ** 2)
    assert got == pytest.approx(ref, rel=1e-5)


def test_bad_ranks_raise_value_error_naming_the_argument():
    with pytest.raises(ValueError, match="embeddings"):
        metric_learning.triplet_semihard_loss([0, 1], np.zeros([2, 2, 2], np.float32))
    with pytest.raises(ValueError, match="labels"):
        metric_learning.triplet_semihard_loss(np.zeros([2, 2, 2], np.int32),
                                              np.zeros([2, 2], np.float32))


def test_contrib_losses_and_framework_expose_tf_1_15_names():
    assert tf.contrib.losses.metric_learning is metric_learning
    x = np.array([[3.0, 1.0, 2.0], [0.5, -1.0, 0.0]], np.float32)
    with tf.Session() as sess:
        idx, srt = sess.run([tf.contrib.framework.argsort(x, axis=1, direction="DESCENDING"),
                             tf.contrib.framework.sort(x, axis=0)])
    np.testing.assert_array_equal(idx, np.argsort(-x, axis=1))
    np.testing.assert_array_equal(srt, np.sort(x, axis=0))
