"""tf.metrics on confusion counts: mean_iou, mean_per_class_accuracy and the threshold family,
streamed over batches against NumPy references."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metrics_helpers import stream

import tensorflux as tf

RNG = np.random.RandomState(7)


def _np_confusion(labels, predictions, n, weights=None):
    cm = np.zeros([n, n])
    np.add.at(cm, (labels, predictions), 1.0 if weights is None else weights)
    return cm


def _np_mean_iou(cm):
    rows, cols, diag = cm.sum(0), cm.sum(1), np.diag(cm)
    denominator = rows + cols - diag
    valid = denominator != 0
    return (diag[valid] / denominator[valid]).sum() / valid.sum() if valid.any() else 0.0


def _np_per_class_accuracy(labels, predictions, n, weights):
    total = np.bincount(labels, weights, minlength=n)
    correct = np.bincount(labels, weights * (labels == predictions), minlength=n)
    return np.where(total > 0, correct / np.where(total > 0, total, 1), 0.0)


def test_mean_iou_streams_confusion_matrix_and_names_variables():
    labels = RNG.randint(0, 4, size=(3, 10))
    preds = RNG.randint(0, 4, size=(3, 10))
    weights = RNG.rand(3, 10).astype(np.float32)
    with tf.Graph().as_default():
        lab = tf.placeholder(tf.int64, [None])
        pre = tf.placeholder(tf.int64, [None])
        w = tf.placeholder(tf.float32, [None])
        plain = tf.metrics.mean_iou(lab, pre, 4, metrics_collections=["m"],
                                    updates_collections=["u"])
        weighted = tf.metrics.mean_iou(lab, pre, 4, weights=w, name="weighted_iou")
        assert [v.op.name for v in tf.local_variables()] == [
            "mean_iou/total_confusion_matrix", "weighted_iou/total_confusion_matrix"]
        assert tf.get_collection(tf.GraphKeys.METRIC_VARIABLES) == tf.local_variables()
        assert tf.get_collection("m") == [plain[0]] and tf.get_collection("u") == [plain[1]]
        assert plain[0].dtype == tf.float32 and plain[1].dtype.base_dtype == tf.float64
        before, updates, values = stream(
            [plain, weighted], [{lab: labels[i], pre: preds[i], w: weights[i]}
                                for i in range(3)])
    assert before == [0.0, 0.0]
    for i in range(3):
        cm = _np_confusion(labels[:i + 1].ravel(), preds[:i + 1].ravel(), 4)
        wcm = _np_confusion(labels[:i + 1].ravel(), preds[:i + 1].ravel(), 4,
                            weights[:i + 1].ravel())
        np.testing.assert_allclose(updates[i][0], cm)
        np.testing.assert_allclose(updates[i][1], wcm, rtol=1e-6)
        np.testing.assert_allclose(values[i], [_np_mean_iou(cm), _np_mean_iou(wcm)], rtol=1e-5)


def test_mean_iou_ignores_absent_classes_and_flattens():
    labels = np.array([[0, 0], [2, 2]])
    preds = np.array([[0, 2], [2, 2]])
    with tf.Graph().as_default():
        value, update = tf.metrics.mean_iou(tf.constant(labels), tf.constant(preds), 5)
        _, _, values = stream([(value, update)], [{}])
    # class 0: 1 / 2, class 2: 2 / 3; classes 1, 3, 4 never occur.
    np.testing.assert_allclose(values[0][0], (0.5 + 2 / 3) / 2, rtol=1e-6)


def test_mean_iou_rejects_out_of_range_ids():
    with tf.Graph().as_default():
        lab = tf.placeholder(tf.int64, [None])
        _, update = tf.metrics.mean_iou(lab, tf.constant([0, 1], tf.int64), 3)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match="out of bound"):
                sess.run(update, {lab: [0, 3]})
            with pytest.raises(tf.errors.InvalidArgumentError, match="negative"):
                sess.run(update, {lab: [-1, 0]})
        with pytest.raises(ValueError, match="incompatible"):
            tf.metrics.mean_iou(tf.constant([1, 2]), tf.constant([1, 2, 3]), 4)


def test_mean_per_class_accuracy_streams_and_update_is_per_class():
    labels = RNG.randint(0, 5, size=(3, 8))
    preds = RNG.randint(0, 5, size=(3, 8))
    weights = RNG.rand(3, 8).astype(np.float32)
    with tf.Graph().as_default():
        lab = tf.placeholder(tf.int32, [None])
        pre = tf.placeholder(tf.int32, [None])
        w = tf.placeholder(tf.float32, [None])
        plain = tf.metrics.mean_per_class_accuracy(lab, pre, 5)
        weighted = tf.metrics.mean_per_class_accuracy(lab, pre, 6, weights=w)
        assert [v.op.name for v in tf.local_variables()] == [
            "mean_accuracy/total", "mean_accuracy/count", "mean_accuracy_1/total",
            "mean_accuracy_1/count"]
        assert plain[0].op.name == "mean_accuracy/mean_accuracy"
        assert plain[1].op.name == "mean_accuracy/update_op"
        before, updates, values = stream(
            [plain, weighted], [{lab: labels[i], pre: preds[i], w: weights[i]}
                                for i in range(3)])
    assert before == [0.0, 0.0]
    for i in range(3):
        seen_l, seen_p = labels[:i + 1].ravel(), preds[:i + 1].ravel()
        acc = _np_per_class_accuracy(seen_l, seen_p, 5, np.ones(seen_l.size))
        wacc = _np_per_class_accuracy(seen_l, seen_p, 6, weights[:i + 1].ravel())
        np.testing.assert_allclose(updates[i][0], acc, rtol=1e-6)
        np.testing.assert_allclose(updates[i][1], wacc, rtol=1e-5)
        np.testing.assert_allclose(values[i], [acc.mean(), wacc.mean()], rtol=1e-5)


_SHARED = {}


def _shared_graph():
    """One graph for all hypothesis examples (graph building is the slow part)."""
    if not _SHARED:
        graph = tf.Graph()
        with graph.as_default():
            lab = tf.placeholder(tf.int64, [None])
            pre = tf.placeholder(tf.int64, [None])
            w = tf.placeholder(tf.float32, [None])
            pairs = [tf.metrics.mean_iou(lab, pre, 4, weights=w),
                     tf.metrics.mean_per_class_accuracy(lab, pre, 4, weights=w)]
        _SHARED.update(graph=graph, l=lab, p=pre, w=w, pairs=pairs)
    return _SHARED


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.sampled_from([0.0, 0.5, 2.0])),
                min_size=0, max_size=12))
def test_mean_iou_and_per_class_accuracy_match_numpy(rows):
    labels = np.array([r[0] for r in rows], np.int64)
    preds = np.array([r[1] for r in rows], np.int64)
    weights = np.array([r[2] for r in rows], np.float32)
    g = _shared_graph()
    with g["graph"].as_default():
        _, updates, values = stream(g["pairs"], [{g["l"]: labels, g["p"]: preds,
                                                   g["w"]: weights}])
    cm = _np_confusion(labels, preds, 4, weights)
    np.testing.assert_allclose(values[0][0], _np_mean_iou(cm), rtol=1e-5)
    acc = _np_per_class_accuracy(labels, preds, 4, weights)
    np.testing.assert_allclose(updates[0][1], acc, rtol=1e-5)


THRESHOLDS = [0.0, 0.25, 0.5, 0.9, 1.0]


def _np_counts(labels, preds, thresholds, weights):
    """float32 counts, as the metric variables hold them (ties then break the same way)."""
    pos = preds[:, None] > np.asarray(thresholds, np.float32)[None, :]
    lab = labels[:, None].astype(bool)
    w = weights[:, None].astype(np.float32)
    return {"tp": ((pos & lab) * w).sum(0, dtype=np.float32),
            "fp": ((pos & ~lab) * w).sum(0, dtype=np.float32),
            "tn": ((~pos & ~lab) * w).sum(0, dtype=np.float32),
            "fn": ((~pos & lab) * w).sum(0, dtype=np.float32)}


def test_counts_precision_recall_at_thresholds_stream():
    labels = RNG.rand(3, 10) > 0.5
    preds = RNG.rand(3, 10).astype(np.float32)
    preds[0, :3] = [0.0, 1.0, 0.5]
    weights = RNG.rand(3, 10).astype(np.float32)
    m = tf.metrics
    with tf.Graph().as_default():
        lab = tf.placeholder(tf.bool, [None])
        pre = tf.placeholder(tf.float32, [None])
        w = tf.placeholder(tf.float32, [None])
        pairs = [m.true_positives_at_thresholds(lab, pre, THRESHOLDS, w),
                 m.false_positives_at_thresholds(lab, pre, THRESHOLDS, w),
                 m.true_negatives_at_thresholds(lab, pre, THRESHOLDS, w),
                 m.false_negatives_at_thresholds(lab, pre, THRESHOLDS, w),
                 m.precision_at_thresholds(lab, pre, THRESHOLDS, w, ["m"], ["u"]),
                 m.recall_at_thresholds(lab, pre, THRESHOLDS)]
        assert [v.op.name for v in tf.local_variables()] == [
            "true_positives/true_positives", "false_positives/false_positives",
            "true_negatives/true_negatives", "false_negatives/false_negatives",
            "precision_at_thresholds/true_positives", "precision_at_thresholds/false_positives",
            "recall_at_thresholds/true_positives", "recall_at_thresholds/false_negatives"]
        assert pairs[4][0].op.name == "precision_at_thresholds/precision_value"
        assert pairs[4][1].op.name == "precision_at_thresholds/precision_update_op"
        assert pairs[5][0].op.name == "recall_at_thresholds/recall_value"
        assert tf.get_collection("m") == [pairs[4][0]]
        assert all(v.shape.as_list() == [5] for v, _ in pairs)
        before, updates, values = stream(
            pairs, [{lab: labels[i], pre: preds[i], w: weights[i]} for i in range(3)])
    np.testing.assert_array_equal(np.array(before), np.zeros([6, 5]))
    for i in range(3):
        c = _np_counts(labels[:i + 1].ravel(), preds[:i + 1].ravel(), THRESHOLDS,
                       weights[:i + 1].ravel())
        u = _np_counts(labels[:i + 1].ravel(), preds[:i + 1].ravel(), THRESHOLDS,
                       np.ones((i + 1) * 10))
        want = [c["tp"], c["fp"], c["tn"], c["fn"], c["tp"] / (c["tp"] + c["fp"] + 1e-7),
                u["tp"] / (u["tp"] + u["fn"] + 1e-7)]
        for got_u, got_v, expected in zip(updates[i], values[i], want):
            np.testing.assert_allclose(got_u, expected, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(got_v, expected, rtol=1e-5, atol=1e-6)


def test_threshold_weights_broadcast_and_squeeze():
    labels = RNG.rand(4, 3) > 0.5
    preds = RNG.rand(4, 3).astype(np.float32)
    row_w = RNG.rand(4, 1).astype(np.float32)
    with tf.Graph().as_default():
        pairs = [tf.metrics.true_positives_at_thresholds(labels, preds, [0.3, 0.7], row_w),
                 tf.metrics.false_negatives_at_thresholds(labels, preds[..., None], [0.3],
                                                          2.0)]
        with pytest.raises(ValueError, match="weights can not be broadcast"):
            tf.metrics.true_positives_at_thresholds(labels, preds, [0.5], np.ones([3, 4]))
        _, updates, _ = stream(pairs, [{}])
    w = np.broadcast_to(row_w, (4, 3)).ravel()
    c = _np_counts(labels.ravel(), preds.ravel(), [0.3, 0.7], w)
    np.testing.assert_allclose(updates[0][0], c["tp"], rtol=1e-5)
    c2 = _np_counts(labels.ravel(), preds.ravel(), [0.3], np.full(12, 2.0))
    np.testing.assert_allclose(updates[0][1], c2["fn"], rtol=1e-5)


def test_threshold_predictions_range_checked_unless_float32():
    with tf.Graph().as_default():
        p64 = tf.placeholder(tf.float64, [None])
        p32 = tf.placeholder(tf.float32, [None])
        labels = tf.constant([True, False])
        _, u64 = tf.metrics.precision_at_thresholds(labels, p64, [0.5])
        _, u32 = tf.metrics.precision_at_thresholds(labels, p32, [0.5])
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match="must be in \\[0, 1\\]"):
                sess.run(u64, {p64: [0.5, 1.5]})
            # TF1 gates the range checks on the float32 cast, which float32 input skips.
            np.testing.assert_allclose(sess.run(u32, {p32: [0.5, 1.5]}), [0.0])


def _np_thresholds(n, last):
    return np.array([-1e-7] + [(i + 1) / (n - 1) for i in range(n - 2)] + [last])


def _np_sensitivity_at_specificity(labels, preds, weights, target, n):
    c = _np_counts(labels, preds, _np_thresholds(n, 1 + 1e-7), weights)
    spec = c["tn"] / (c["tn"] + c["fp"] + np.float32(1e-7))
    i = int(np.argmin(np.abs(spec - np.float32(target))))
    return c["tp"][i] / (c["tp"][i] + c["fn"][i] + 1e-7)


def _np_specificity_at_sensitivity(labels, preds, weights, target, n):
    c = _np_counts(labels, preds, _np_thresholds(n, 1 - 1e-7), weights)
    dist = np.abs(c["tp"] / (c["tp"] + c["fn"] + np.float32(1e-7)) - np.float32(target))
    i = int(np.flatnonzero(dist == dist.min())[-1])
    return c["tn"][i] / (c["tn"][i] + c["fp"][i] + 1e-7)


@pytest.mark.parametrize("target", [0.0, 0.3, 0.5, 1.0])
def test_sensitivity_and_specificity_at_rate(target):
    labels = RNG.rand(2, 20) > 0.4
    preds = RNG.rand(2, 20).astype(np.float32)
    weights = RNG.rand(2, 20).astype(np.float32)
    m = tf.metrics
    with tf.Graph().as_default():
        lab = tf.placeholder(tf.bool, [None])
        pre = tf.placeholder(tf.float32, [None])
        w = tf.placeholder(tf.float32, [None])
        pairs = [m.sensitivity_at_specificity(lab, pre, target),
                 m.specificity_at_sensitivity(lab, pre, target, w),
                 m.sensitivity_at_specificity(lab, pre, target, w, num_thresholds=7),
                 m.specificity_at_sensitivity(lab, pre, target, num_thresholds=7)]
        names = [v.op.name for v in tf.local_variables()][:4]
        assert names == ["sensitivity_at_specificity/true_positives",
                         "sensitivity_at_specificity/false_negatives",
                         "sensitivity_at_specificity/true_negatives",
                         "sensitivity_at_specificity/false_positives"]
        assert tf.local_variables()[0].shape.as_list() == [200]
        assert pairs[0][0].op.name == "sensitivity_at_specificity/value"
        assert pairs[1][1].op.name == "specificity_at_sensitivity/update_op"
        _, updates, values = stream(
            pairs, [{lab: labels[i], pre: preds[i], w: weights[i]} for i in range(2)])
    for i in range(2):
        seen = (labels[:i + 1].ravel(), preds[:i + 1].ravel())
        ones, ws = np.ones(seen[0].size), weights[:i + 1].ravel()
        want = [_np_sensitivity_at_specificity(*seen, ones, target, 200),
                _np_specificity_at_sensitivity(*seen, ws, target, 200),
                _np_sensitivity_at_specificity(*seen, ws, target, 7),
                _np_specificity_at_sensitivity(*seen, ones, target, 7)]
        np.testing.assert_allclose(updates[i], want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(values[i], want, rtol=1e-5, atol=1e-6)


def test_rate_out_of_range_is_rejected():
    with pytest.raises(ValueError, match="`specificity` must be in the range"):
        tf.metrics.sensitivity_at_specificity([True], [0.5], 1.5)
    with pytest.raises(ValueError, match="`sensitivity` must be in the range"):
        tf.metrics.specificity_at_sensitivity([True], [0.5], -0.1)


def test_no_data_values():
    m = tf.metrics
    with tf.Graph().as_default():
        lab = tf.placeholder(tf.bool, [None])
        pre = tf.placeholder(tf.float32, [None])
        ids = tf.placeholder(tf.int64, [None])
        pairs = [m.mean_iou(ids, ids, 3), m.mean_per_class_accuracy(ids, ids, 3),
                 m.precision_at_thresholds(lab, pre, [0.5]),
                 m.recall_at_thresholds(lab, pre, [0.5]),
                 m.sensitivity_at_specificity(lab, pre, 0.5),
                 m.specificity_at_sensitivity(lab, pre, 0.5)]
        before, updates, _ = stream(pairs, [{lab: np.zeros([0], bool),
                                              pre: np.zeros([0], np.float32),
                                              ids: np.zeros([0], np.int64)}])
    assert before[0] == 0.0 and before[1] == 0.0
    np.testing.assert_array_equal(updates[0][1], np.zeros(3))
    assert [float(np.ravel(x)[0]) for x in before[2:]] == [0.0, 0.0, 0.0, 0.0]
