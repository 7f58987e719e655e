"""tf.metrics running means: mean_cosine_distance, mean_relative_error, percentage_below."""

import numpy as np
import pytest
from metrics_helpers import stream

import tensorflux as tf

RNG = np.random.RandomState(3)


def _unit(x, axis):
    return x / np.linalg.norm(x, axis=axis, keepdims=True)


def _weighted_mean(values, weights):
    weights = np.broadcast_to(weights, values.shape)
    return (values * weights).sum() / weights.sum() if weights.sum() > 0 else 0.0


def test_mean_cosine_distance_streams_with_row_weights():
    a = RNG.rand(2, 4, 3).astype(np.float32)
    b = RNG.rand(2, 4, 3).astype(np.float32)
    w = RNG.rand(2, 4).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.placeholder(tf.float32, [None, 3])
        ws = tf.placeholder(tf.float32, [None])
        xn, yn = tf.nn.l2_normalize(x, 1), tf.nn.l2_normalize(y, 1)
        pairs = [tf.metrics.mean_cosine_distance(xn, yn, 1, metrics_collections=["m"]),
                 tf.metrics.mean_cosine_distance(xn, yn, 1, weights=ws),
                 tf.metrics.mean_cosine_distance(xn, yn, 0)]
        assert [v.op.name for v in tf.local_variables()][:2] == [
            "mean_cosine_distance/total", "mean_cosine_distance/count"]
        assert tf.get_collection("m") == [pairs[0][0]]
        before, updates, values = stream(pairs, [{x: a[i], y: b[i], ws: w[i]}
                                                  for i in range(2)])
    np.testing.assert_allclose(before, [1.0, 1.0, 1.0])
    for i in range(2):
        an, bn = _unit(a[:i + 1].reshape(-1, 3), 1), _unit(b[:i + 1].reshape(-1, 3), 1)
        rows = (an * bn).sum(1)
        batches = [(_unit(a[j], 1) * _unit(b[j], 1)).sum(0) for j in range(i + 1)]
        want = [1 - rows.mean(), 1 - _weighted_mean(rows, w[:i + 1].ravel()),
                1 - np.mean(batches)]
        np.testing.assert_allclose(updates[i], want, rtol=1e-5)
        np.testing.assert_allclose(values[i], want, rtol=1e-5)


def test_mean_relative_error_zero_normalizer_and_weights():
    labels = RNG.rand(2, 5).astype(np.float32)
    preds = RNG.rand(2, 5).astype(np.float32)
    norm = RNG.rand(2, 5).astype(np.float32)
    norm[:, 1] = 0.0
    w = RNG.rand(2, 5).astype(np.float32)
    with tf.Graph().as_default():
        lab = tf.placeholder(tf.float32, [None])
        pre = tf.placeholder(tf.float32, [None])
        nor = tf.placeholder(tf.float32, [None])
        ws = tf.placeholder(tf.float32, [None])
        pairs = [tf.metrics.mean_relative_error(lab, pre, nor),
                 tf.metrics.mean_relative_error(lab, pre, nor, weights=ws, name="weighted")]
        assert pairs[0][0].op.name == "mean_relative_error/value"
        assert pairs[1][1].op.name == "weighted/update_op"
        _, updates, values = stream(pairs, [{lab: labels[i], pre: preds[i], nor: norm[i],
                                              ws: w[i]} for i in range(2)])
    rel = np.where(norm == 0, 0.0, np.abs(labels - preds) / np.where(norm == 0, 1, norm))
    for i in range(2):
        want = [rel[:i + 1].mean(), _weighted_mean(rel[:i + 1].ravel(), w[:i + 1].ravel())]
        np.testing.assert_allclose(updates[i], want, rtol=1e-5)
        np.testing.assert_allclose(values[i], want, rtol=1e-5)


def test_mean_relative_error_rejects_mismatched_normalizer():
    with pytest.raises(ValueError, match="normalizer"):
        tf.metrics.mean_relative_error(np.ones([4], np.float32), np.ones([4], np.float32),
                                       np.ones([3], np.float32))


def test_percentage_below_counts_strictly_less():
    values = np.array([[0.1, 0.4, 0.5], [0.9, 0.39, 0.4]], np.float32)
    w = np.array([[1.0], [3.0]], np.float32)
    with tf.Graph().as_default():
        pairs = [tf.metrics.percentage_below(values, 0.4),
                 tf.metrics.percentage_below(values, 0.4, weights=w),
                 tf.metrics.percentage_below(np.array([1, 4, 7], np.int32), 4)]
        assert pairs[0][0].op.name == "percentage_below_threshold/value"
        assert [v.op.name for v in tf.local_variables()][:2] == [
            "percentage_below_threshold/total", "percentage_below_threshold/count"]
        _, updates, _ = stream(pairs, [{}])
    np.testing.assert_allclose(updates[0], [2 / 6, (1 + 3) / (3 + 9), 1 / 3], rtol=1e-6)


def test_no_data_means_are_zero_based():
    with tf.Graph().as_default():
        f = tf.placeholder(tf.float32, [None])
        x = tf.placeholder(tf.float32, [None, 4])
        pairs = [tf.metrics.mean_cosine_distance(x, x, 1), tf.metrics.mean_relative_error(f, f, f),
                 tf.metrics.percentage_below(f, 0.5)]
        _, updates, _ = stream(pairs, [{f: np.zeros([0], np.float32),
                                         x: np.zeros([0, 4], np.float32)}])
    np.testing.assert_allclose(updates[0], [1.0, 0.0, 0.0])


def test_mean_aligns_weights_one_rank_off():
    values = RNG.rand(4, 1).astype(np.float32)
    weights = RNG.rand(4).astype(np.float32)
    with tf.Graph().as_default():
        pairs = [tf.metrics.mean(values, weights),
                 tf.metrics.mean(values[:, 0], weights[:, None])]
        _, updates, _ = stream(pairs, [{}])
    want = (values[:, 0] * weights).sum() / weights.sum()
    np.testing.assert_allclose(updates[0], [want, want], rtol=1e-6)
