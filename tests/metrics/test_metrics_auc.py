"""tf.metrics.auc: ROC/PR curves, every summation method, explicit thresholds, weights."""

import numpy as np
import pytest

import tensorflux as tf

RNG = np.random.RandomState(5)


def _counts(labels, preds, weights, points):
    pos = preds[:, None] > np.asarray(points, np.float32)[None, :]
    lab = labels[:, None]
    w = weights[:, None]
    return [((a & b) * w).sum(0).astype(np.float64)
            for a, b in ((pos, lab), (~pos, lab), (~pos, ~lab), (pos, ~lab))]


def _np_auc(labels, preds, weights, curve, method, num_thresholds=200, thresholds=None):
    if thresholds is not None:
        inner = sorted(thresholds)
        num_thresholds = len(inner) + 2
    else:
        inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    tp, fn, tn, fp = _counts(labels, preds, weights, [-1e-7] + inner + [1 + 1e-7])
    if curve == "PR" and method == "careful_interpolation":
        dtp = tp[:-1] - tp[1:]
        p = tp + fp
        dp = np.maximum(p[:-1] - p[1:], 0)
        slope = np.divide(dtp, dp, out=np.zeros_like(dtp), where=dp != 0)
        intercept = tp[1:] - slope * p[1:]
        ratio = np.where((p[:-1] > 0) & (p[1:] > 0), p[:-1] / np.where(p[1:] > 0, p[1:], 1), 1)
        den = np.maximum(tp[1:] + fn[1:], 0)
        num = slope * (dtp + intercept * np.log(ratio))
        return np.divide(num, den, out=np.zeros_like(num), where=den != 0).sum()
    rec = (tp + 1e-6) / (tp + fn + 1e-6)
    x, y = (fp / (fp + tn + 1e-6), rec) if curve == "ROC" else (rec, (tp + 1e-6) /
                                                                (tp + fp + 1e-6))
    heights = {"minoring": np.minimum(y[:-1], y[1:]), "majoring": np.maximum(y[:-1], y[1:])}
    return ((x[:-1] - x[1:]) * heights.get(method, (y[:-1] + y[1:]) / 2)).sum()


CONFIGS = [("ROC", "trapezoidal", {}), ("ROC", "minoring", {"num_thresholds": 7}),
           ("ROC", "majoring", {}), ("ROC", "careful_interpolation", {}),
           ("PR", "careful_interpolation", {}), ("PR", "careful_interpolation",
                                                 {"num_thresholds": 9}),
           ("PR", "minoring", {"thresholds": [0.7, 0.2, 0.5]}),
           ("ROC", "trapezoidal", {"thresholds": [0.3, 0.6]})]


@pytest.mark.parametrize("weighted", [False, True])
def test_auc_streams_for_every_curve_and_method(weighted):
    labels = RNG.rand(2, 30) > 0.5
    preds = np.clip(RNG.rand(2, 30) * 0.6 + labels * 0.4, 0, 1).astype(np.float32)
    weights = RNG.rand(2, 30).astype(np.float32) if weighted else np.ones([2, 30], np.float32)
    with tf.Graph().as_default():
        lab = tf.placeholder(tf.bool, [None])
        pre = tf.placeholder(tf.float32, [None])
        w = tf.placeholder(tf.float32, [None]) if weighted else None
        pairs = [tf.metrics.auc(lab, pre, w, curve=curve, summation_method=method, **kw)
                 for curve, method, kw in CONFIGS]
        assert [v.op.name for v in tf.local_variables()][:4] == [
            "auc/true_positives", "auc/false_negatives", "auc/true_negatives",
            "auc/false_positives"]
        assert tf.local_variables()[-1].shape.as_list() == [4]
        assert (pairs[0][0].op.name, pairs[0][1].op.name) == ("auc/value", "auc/update_op")
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            for i in range(2):
                feed = {lab: labels[i], pre: preds[i]}
                if weighted:
                    feed[w] = weights[i]
                updates = sess.run([u for _, u in pairs], feed)
                values = sess.run([v for v, _ in pairs])
                want = [_np_auc(labels[:i + 1].ravel(), preds[:i + 1].ravel(),
                                weights[:i + 1].ravel(), curve, method, **kw)
                        for curve, method, kw in CONFIGS]
                np.testing.assert_allclose(updates, want, rtol=1e-4, atol=1e-6)
                np.testing.assert_allclose(values, want, rtol=1e-4, atol=1e-6)


def test_auc_known_values():
    labels = np.array([False, False, True, True])
    with tf.Graph().as_default():
        perfect = tf.metrics.auc(labels, np.array([0.1, 0.2, 0.8, 0.9], np.float32))
        inverted = tf.metrics.auc(labels, np.array([0.9, 0.8, 0.2, 0.1], np.float32))
        pr = tf.metrics.auc(labels, np.array([0.1, 0.2, 0.8, 0.9], np.float32), curve="PR",
                            summation_method="careful_interpolation")
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            got = sess.run([perfect[1], inverted[1], pr[1]])
    np.testing.assert_allclose(got, [1.0, 0.0, 1.0], atol=1e-5)


def test_auc_rejects_bad_arguments():
    with pytest.raises(ValueError, match="Curve must be either ROC or PR"):
        tf.metrics.auc([True], [0.5], curve="XY")
    with pytest.raises(ValueError, match="Invalid summation_method"):
        tf.metrics.auc([True], [0.5], summation_method="simpson")
