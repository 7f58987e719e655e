"""tf.metrics @k (precision, recall, average precision) against set-based Python references."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metrics_helpers import stream

import tensorflux as tf

RNG = np.random.RandomState(11)


def _top_k(logits, k):
    # Stable descending order: ties keep the lower index first, as tf.nn.top_k does.
    return np.argsort(-logits, axis=-1, kind="stable")[..., :k]


def _rows(labels):
    """Label rows as Python lists: a dense row is all its entries."""
    labels = np.asarray(labels)
    if labels.ndim == 1:
        labels = labels[:, None]
    return [list(row) for row in labels]


def _np_precision_recall(pred_rows, label_rows, class_id, weights):
    tp = fp = fn = 0.0
    for pred, labels, w in zip(pred_rows, label_rows, weights):
        p, lab = set(pred), set(labels)
        if class_id is not None:
            p, lab = p & {class_id}, lab & {class_id}
        tp += w * len(p & lab)
        fp += w * len(p - lab)
        fn += w * len(lab - p)
    with np.errstate(invalid="ignore"):
        return np.float64(tp) / (tp + fp), np.float64(tp) / (tp + fn)


def _np_average_precision(pred_rows, label_rows, num_classes, weights, sparse):
    total = 0.0
    for pred, labels, w in zip(pred_rows, label_rows, weights):
        labels = [x if x < num_classes else -1 for x in labels]
        hits, precision_sum = 0, 0.0
        for rank, cls in enumerate(pred, start=1):
            if cls in labels:
                hits += 1
                precision_sum += hits / rank
        relevant = len(set(labels)) if sparse else sum(x >= 0 for x in labels)
        with np.errstate(invalid="ignore", divide="ignore"):
            total += w * (np.float64(precision_sum) / min(relevant, len(pred)))
    weight = float(np.sum(weights))
    return total / weight if weight else 0.0


CLASS_IDS = [None, 0, 2, 9]


@pytest.mark.parametrize("k", [1, 2, 5])
def test_precision_recall_at_k_dense_labels_stream(k):
    logits = RNG.rand(2, 6, 5).astype(np.float32)
    labels = RNG.randint(-1, 7, size=(2, 6, 3))
    single = RNG.randint(0, 6, size=(2, 6))
    weights = RNG.rand(2, 6).astype(np.float32)
    weights[0, 1] = 0.0
    m = tf.metrics
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 5])
        lab = tf.placeholder(tf.int64, [None, 3])
        one = tf.placeholder(tf.int32, [None])
        w = tf.placeholder(tf.float32, [None])
        pairs = []
        for cid in CLASS_IDS:
            pairs += [m.precision_at_k(lab, x, k, cid), m.recall_at_k(lab, x, k, cid),
                      m.precision_at_k(one, x, k, cid, weights=w),
                      m.recall_at_k(one, x, k, cid, weights=w)]
        assert all(v.dtype == tf.float64 and u.dtype == tf.float64 for v, u in pairs)
        _, updates, values = stream(pairs, [{x: logits[i], lab: labels[i], one: single[i],
                                              w: weights[i]} for i in range(2)])
    for i in range(2):
        preds = _rows(_top_k(logits[:i + 1].reshape(-1, 5), k))
        dense_rows = _rows(labels[:i + 1].reshape(-1, 3))
        single_rows = _rows(single[:i + 1].ravel())
        ones, ws = np.ones(len(preds)), weights[:i + 1].ravel()
        want = []
        for cid in CLASS_IDS:
            want += list(_np_precision_recall(preds, dense_rows, cid, ones))
            want += list(_np_precision_recall(preds, single_rows, cid, ws))
        np.testing.assert_allclose(updates[i], want, rtol=1e-6)
        np.testing.assert_allclose(values[i], want, rtol=1e-6)


def test_at_k_names_variables_and_collections():
    m = tf.metrics
    with tf.Graph().as_default():
        x = tf.constant(RNG.rand(3, 4).astype(np.float32))
        lab = tf.constant([[1], [2], [3]], tf.int64)
        recall = m.recall_at_k(lab, x, 2, metrics_collections=["m"], updates_collections=["u"])
        prec = m.precision_at_k(lab, x, 2, class_id=1)
        _, idx = tf.nn.top_k(x, 2)
        top = m.precision_at_top_k(lab, idx)
        ap = m.average_precision_at_k(lab, x, 2)
        assert (recall[0].op.name, recall[1].op.name) == ("recall_at_2", "recall_at_2/update")
        assert prec[0].op.name == "precision_at_2_class1"
        assert top[0].op.name == "precision_at_k"
        assert (ap[0].op.name, ap[1].op.name) == ("average_precision_at_2/mean",
                                                   "average_precision_at_2")
        assert [v.op.name for v in tf.local_variables()] == [
            "recall_at_2/true_positive_at_2", "recall_at_2/false_negative_at_2",
            "precision_at_2_class1/true_positive_at_2_class1",
            "precision_at_2_class1/false_positive_at_2_class1",
            "precision_at_k/true_positive_at_k", "precision_at_k/false_positive_at_k",
            "average_precision_at_2/max_1", "average_precision_at_2/total"]
        assert tf.get_collection(tf.GraphKeys.METRIC_VARIABLES) == tf.local_variables()
        assert all(v.dtype.base_dtype == tf.float64 for v in tf.local_variables())
        assert tf.get_collection("m") == [recall[0]] and tf.get_collection("u") == [recall[1]]


def test_top_k_ids_with_duplicates_count_once():
    idx = np.array([[1, 1, 2], [0, 3, 0], [4, 4, 4]])
    labels = np.array([[1, 1, 5], [0, 0, 0], [2, -1, -1]])
    with tf.Graph().as_default():
        pairs = [tf.metrics.precision_at_top_k(labels, idx),
                 tf.metrics.recall_at_top_k(labels, idx),
                 tf.metrics.precision_at_top_k(labels, idx, class_id=1),
                 tf.metrics.recall_at_top_k(labels, idx, class_id=0)]
        _, updates, _ = stream(pairs, [{}])
    preds, rows = _rows(idx), _rows(labels)
    ones = np.ones(3)
    want = [_np_precision_recall(preds, rows, None, ones)[0],
            _np_precision_recall(preds, rows, None, ones)[1],
            _np_precision_recall(preds, rows, 1, ones)[0],
            _np_precision_recall(preds, rows, 0, ones)[1]]
    np.testing.assert_allclose(updates[0], want)
    # ids {1,2},{0,3},{4} vs labels {1,5},{0},{2,-1}: tp 2, fp 3, fn 3 (-1 is a missed label).
    np.testing.assert_allclose(updates[0][:2], [2 / 5, 2 / 5])


def _sparse_labels():
    # rows: {0,3}, {}, {1,7,9}, {2}, {4,4}, {5,-1}
    indices = [[0, 0], [0, 1], [2, 0], [2, 1], [2, 2], [3, 0], [4, 0], [4, 1], [5, 0], [5, 1]]
    values = np.array([0, 3, 1, 7, 9, 2, 4, 4, 5, -1], np.int64)
    rows = [[0, 3], [], [1, 7, 9], [2], [4, 4], [5, -1]]
    return indices, values, rows


@pytest.mark.parametrize("k", [1, 3])
def test_sparse_labels(k):
    logits = RNG.rand(6, 5).astype(np.float32)
    weights = RNG.rand(6).astype(np.float32)
    indices, values, rows = _sparse_labels()
    m = tf.metrics
    with tf.Graph().as_default():
        x = tf.constant(logits)
        st_labels = tf.SparseTensor(indices, values, [6, 3])
        single = tf.SparseTensor([[0], [2], [3], [5]], np.array([1, 2, 3, 4], np.int64), [6])
        fed = tf.sparse_placeholder(tf.int64)
        pairs = [m.recall_at_k(st_labels, x, k), m.precision_at_k(st_labels, x, k),
                 m.recall_at_k(st_labels, x, k, class_id=4),
                 m.precision_at_k(st_labels, x, k, class_id=2, weights=weights),
                 m.average_precision_at_k(st_labels, x, k),
                 m.average_precision_at_k(single, x, k, weights=weights),
                 m.recall_at_k(fed, x, k)]
        feed = {fed: tf.SparseTensorValue(np.array(indices, np.int64), values, [6, 3])}
        _, updates, _ = stream(pairs, [feed])
    preds = _rows(_top_k(logits, k))
    single_rows = [[1], [], [2], [3], [], [4]]
    ones = np.ones(6)
    want = [_np_precision_recall(preds, rows, None, ones)[1],
            _np_precision_recall(preds, rows, None, ones)[0],
            _np_precision_recall(preds, rows, 4, ones)[1],
            _np_precision_recall(preds, rows, 2, weights)[0],
            _np_average_precision(preds, rows, 5, ones, sparse=True),
            _np_average_precision(preds, single_rows, 5, weights, sparse=True),
            _np_precision_recall(preds, rows, None, ones)[1]]
    np.testing.assert_allclose(updates[0], want, rtol=1e-6)


@pytest.mark.parametrize("k", [1, 2, 4])
def test_average_precision_dense_stream(k):
    logits = RNG.rand(2, 5, 4).astype(np.float32)
    labels = RNG.randint(-1, 6, size=(2, 5, 2))
    weights = RNG.rand(2, 5).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        lab = tf.placeholder(tf.int64, [None, 2])
        w = tf.placeholder(tf.float32, [None])
        pairs = [tf.metrics.average_precision_at_k(lab, x, k),
                 tf.metrics.sparse_average_precision_at_k(lab, x, k, weights=w)]
        before, updates, values = stream(pairs, [{x: logits[i], lab: labels[i], w: weights[i]}
                                                  for i in range(2)])
    assert before == [0.0, 0.0]
    for i in range(2):
        preds = _rows(_top_k(logits[:i + 1].reshape(-1, 4), k))
        rows = _rows(labels[:i + 1].reshape(-1, 2))
        want = [_np_average_precision(preds, rows, 4, np.ones(len(rows)), sparse=False),
                _np_average_precision(preds, rows, 4, weights[:i + 1].ravel(), sparse=False)]
        np.testing.assert_allclose(updates[i], want, rtol=1e-6)
        np.testing.assert_allclose(values[i], want, rtol=1e-6)


def test_average_precision_known_values():
    logits = np.array([[0.1, 0.5, 0.3, 0.05], [0.6, 0.1, 0.2, 0.1]], np.float32)
    with tf.Graph().as_default():
        pairs = [tf.metrics.average_precision_at_k(np.array(lab), logits, 3)
                 for lab in ([[1, -1], [0, 0]], [[1, 7], [2, 2]], [[1, 1], [3, 0]])]
        _, updates, _ = stream(pairs, [{}])
    # Out-of-range ids (7) become -1 and are not relevant; dense duplicates are.
    np.testing.assert_allclose(updates[0], [0.75, 0.625, 0.5])


def test_no_data_gives_nan_precision_and_zero_average_precision():
    m = tf.metrics
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        lab = tf.placeholder(tf.int64, [None, 2])
        pairs = [m.recall_at_k(lab, x, 2), m.precision_at_k(lab, x, 2),
                 m.precision_at_k(lab, x, 2, class_id=7), m.average_precision_at_k(lab, x, 2)]
        before, updates, _ = stream(pairs, [{x: np.zeros([0, 4], np.float32),
                                              lab: np.zeros([0, 2], np.int64)}])
    assert np.isnan(before[:3]).all() and before[3] == 0.0
    assert np.isnan(updates[0][:3]).all() and updates[0][3] == 0.0


def test_at_k_errors():
    x = tf.constant(np.ones([1, 4], np.float32))
    with pytest.raises(ValueError, match="Invalid k=0"):
        tf.metrics.average_precision_at_k(tf.constant([[1]], tf.int64), x, 0)
    with pytest.raises(ValueError, match="last dimension >= k"):
        tf.metrics.recall_at_k(tf.constant([[1]], tf.int64), x, 5)
    with pytest.raises(ValueError, match="Unexpected labels shape"):
        tf.metrics.precision_at_k(tf.constant([[[1]]], tf.int64), x, 1)
    with pytest.raises(ValueError, match="weights can not be broadcast"):
        tf.metrics.precision_at_k(tf.constant([[1]], tf.int64), x, 1, weights=np.ones([2, 2]))


@settings(max_examples=12, deadline=None)
@given(st.integers(1, 4), st.sampled_from([None, 0, 3, 5]),
       st.lists(st.lists(st.integers(-1, 6), min_size=2, max_size=2), min_size=1, max_size=5),
       st.integers(0, 2 ** 16))
def test_precision_recall_at_k_match_sets(k, class_id, labels, seed):
    logits = np.random.RandomState(seed).rand(len(labels), 4).astype(np.float32)
    with tf.Graph().as_default():
        pairs = [tf.metrics.precision_at_k(np.array(labels), logits, k, class_id),
                 tf.metrics.recall_at_k(np.array(labels), logits, k, class_id)]
        _, updates, _ = stream(pairs, [{}])
    want = _np_precision_recall(_rows(_top_k(logits, k)), labels, class_id,
                                np.ones(len(labels)))
    np.testing.assert_allclose(updates[0], want, rtol=1e-6)
