"""tf.contrib.factorization.KMeans: assignments, scores and center updates vs NumPy."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.contrib.factorization import KMeans

RNG = np.random.RandomState(2)
DATA = np.concatenate([RNG.randn(8, 3) + [5, 0, 0], RNG.randn(8, 3) - [0, 5, 0]]).astype(np.float32)
INIT = DATA[[0, 1, 9]]


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _graph(**kwargs):
    x = tf.placeholder(tf.float32, [None, 3])
    out = KMeans(x, 3, initial_clusters=INIT, **kwargs).training_graph()
    centers = [v for v in tf.global_variables() if v.op.name.endswith("clusters")][0]
    return x, out, centers


def _sq(x, c):
    return ((x[:, None, :] - c[None]) ** 2).sum(-1)


def test_full_batch_squared_euclidean_is_lloyd():
    x, (all_scores, idx, scores, inited, init_op, train), centers = _graph()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert not sess.run(inited)
        sess.run(init_op, {x: DATA})
        sess.run(init_op, {x: DATA[::-1]})  # a second init is a no-op
        ref = INIT.astype(np.float64)
        for _ in range(3):
            d = _sq(DATA, ref)
            got_all, got_idx, got_s, _ = sess.run([all_scores[0], idx[0], scores[0], train],
                                                  {x: DATA})
            np.testing.assert_allclose(got_all, d, rtol=1e-4, atol=1e-3)
            np.testing.assert_array_equal(got_idx, d.argmin(1))
            np.testing.assert_allclose(got_s, d.min(1), rtol=1e-4, atol=1e-3)
            sums = np.zeros_like(ref)
            np.add.at(sums, d.argmin(1), DATA)
            ref = sums / (np.bincount(d.argmin(1), minlength=3)[:, None] + 1e-6)
            np.testing.assert_allclose(sess.run(centers), ref, rtol=1e-4, atol=1e-4)
        assert sess.run(inited)


def test_mini_batch_running_means_count_the_initial_center():
    x, (_, idx, _, _, init_op, train), centers = _graph(use_mini_batch=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(init_op, {x: DATA})
        ref = INIT.astype(np.float64)
        counts = np.ones(3)
        for batch in (DATA[:6], DATA[6:12], DATA[12:]):
            assign = _sq(batch, ref).argmin(1)
            np.testing.assert_array_equal(sess.run(idx[0], {x: batch}), assign)
            sess.run(train, {x: batch})
            for c in np.unique(assign):
                pts = batch[assign == c]
                counts[c] += len(pts)
                ref[c] += (pts.sum(0) - len(pts) * ref[c]) / counts[c]
            np.testing.assert_allclose(sess.run(centers), ref, rtol=1e-4, atol=1e-4)


def test_cosine_normalizes_inputs_and_scores_are_one_minus_cosine():
    x, (all_scores, idx, scores, _, init_op, train), centers = _graph(
        distance_metric="cosine")
    unit = DATA / np.linalg.norm(DATA, axis=1, keepdims=True)
    c = INIT / np.linalg.norm(INIT, axis=1, keepdims=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(init_op, {x: DATA})
        got_all, got_idx, _ = sess.run([all_scores[0], idx[0], train], {x: DATA})
        np.testing.assert_allclose(got_all, 1 - unit @ c.T, atol=1e-5)
        np.testing.assert_array_equal(got_idx, (1 - unit @ c.T).argmin(1))
        sums = np.zeros_like(c)
        np.add.at(sums, got_idx, unit)
        new = sums / (np.bincount(got_idx, minlength=3)[:, None] + 1e-6)
        new /= np.linalg.norm(new, axis=1, keepdims=True)
        np.testing.assert_allclose(sess.run(centers), new, atol=1e-5)


def test_random_init_picks_distinct_input_rows_and_needs_enough_points():
    x = tf.placeholder(tf.float32, [None, 3])
    _, _, _, _, init_op, _ = KMeans(x, 4, random_seed=3).training_graph()
    centers = [v for v in tf.global_variables() if v.op.name.endswith("clusters")][0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError, match="num_clusters"):
            sess.run(init_op, {x: DATA[:3]})
        sess.run(init_op, {x: DATA})
        got = sess.run(centers)
    rows = {tuple(r) for r in DATA}
    assert len({tuple(r) for r in got}) == 4 and all(tuple(r) in rows for r in got)


def test_unsupported_options_raise():
    x = tf.placeholder(tf.float32, [None, 3])
    with pytest.raises(ValueError, match="distance metric"):
        KMeans(x, 2, distance_metric="manhattan")
    with pytest.raises(tf.errors.UnimplementedError, match="kmeans_plus_plus"):
        KMeans(x, 2, initial_clusters="kmeans_plus_plus")
    with pytest.raises(tf.errors.UnimplementedError, match="mini_batch_steps_per_iteration"):
        KMeans(x, 2, use_mini_batch=True, mini_batch_steps_per_iteration=3)
