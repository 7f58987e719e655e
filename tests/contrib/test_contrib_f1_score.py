"""tf.contrib.metrics.f1_score: best F1 over thresholds, streaming, against NumPy."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import errors


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _best_f1(labels, preds, num_thresholds=200, weights=None):
    eps = 1e-7
    ts = [-eps] + [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)] + [1 + eps]
    w = np.ones(len(labels)) if weights is None else np.asarray(weights, np.float64)
    best = 0.0
    for t in ts:
        pos = preds > np.float32(t)
        tp = np.sum(w * (pos & labels))
        fp = np.sum(w * (pos & ~labels))
        fn = np.sum(w * (~pos & labels))
        p, r = tp / (eps + tp + fp), tp / (eps + tp + fn)
        best = max(best, 2 * p * r / (p + r + eps))
    return best


@pytest.mark.parametrize("seed,num_thresholds", [(0, 200), (1, 3), (2, 50)])
def test_streams_over_batches_and_matches_numpy(seed, num_thresholds):
    rng = np.random.RandomState(seed)
    labels = rng.rand(40) > 0.6
    preds = rng.rand(40).astype(np.float32)
    lab_ph, pred_ph = tf.placeholder(tf.bool, [None]), tf.placeholder(tf.float32, [None])
    f1, update = tf.contrib.metrics.f1_score(lab_ph, pred_ph, num_thresholds=num_thresholds)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        for lo in range(0, 40, 10):
            sess.run(update, {lab_ph: labels[lo:lo + 10], pred_ph: preds[lo:lo + 10]})
        got = sess.run(f1)
    assert got == pytest.approx(_best_f1(labels, preds, num_thresholds), rel=1e-5)


def test_weights_and_collections():
    labels = np.array([1, 0, 1, 1, 0, 0], bool)
    preds = np.array([0.9, 0.8, 0.3, 0.6, 0.1, 0.7], np.float32)
    weights = np.array([1.0, 2.0, 0.5, 1.0, 1.0, 0.0], np.float32)
    f1, update = tf.contrib.metrics.f1_score(labels, preds, weights=weights,
                                             metrics_collections=["m"],
                                             updates_collections=["u"], name="my_f1")
    assert tf.get_collection("m") == [f1] and tf.get_collection("u") == [update]
    assert all(v.op.name.startswith("my_f1/") for v in tf.local_variables())
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        sess.run(update)
        assert sess.run(f1) == pytest.approx(_best_f1(labels, preds, weights=weights), rel=1e-5)


def test_predictions_outside_unit_interval_and_bad_thresholds():
    with pytest.raises(ValueError, match="num_thresholds"):
        tf.contrib.metrics.f1_score([1], [0.5], num_thresholds=1)
    pred = tf.placeholder(tf.float64, [None])
    _, update = tf.contrib.metrics.f1_score(tf.constant([True]), pred)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        with pytest.raises(errors.InvalidArgumentError, match=r"\[0, 1\]"):
            sess.run(update, {pred: [1.5]})
