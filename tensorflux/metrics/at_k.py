"""`tf.metrics` @k: precision, recall and average precision of top-k class ids against labels.

Each row of `labels` (a dense int `[D1, ... DN, num_labels]` tensor, a `[D1, ... DN]` tensor
meaning one label per row, or a SparseTensor) is a set of class ids; each row of the top-k
prediction ids is another set. Per row, true positives are |predicted & labels|, false
positives |predicted - labels| and false negatives |labels - predicted| (duplicates count
once). With `class_id`, both sets are first restricted to that id. Every entry of a dense
labels row is a member (-1 padding included); a sparse row holds its stored values.

Counts accumulate in float64 local variables; precision and recall are 0/0 = NaN until a
row contributes.
"""

from __future__ import annotations

from tensorflux.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorflux.metrics.util import (
    add_to_collections,
    api,
    at_k_name,
    broadcast_weights,
    metric_variable,
)

__all__ = ["recall_at_k", "recall_at_top_k", "precision_at_k", "sparse_precision_at_k",
           "precision_at_top_k", "average_precision_at_k", "sparse_average_precision_at_k"]


def _label_set(tf, labels, predictions_idx):
    """Labels as `(ids, valid)`: int64 `[D1, ... DN, m]` and bool mask (None: all valid).

    Labels of rank one less than `predictions_idx` gain a trailing dimension of 1.
    """
    rank = predictions_idx.shape.ndims
    if isinstance(labels, (SparseTensor, SparseTensorValue)):
        labels = SparseTensor.from_value(labels)
        ids = tf.sparse_tensor_to_dense(
            SparseTensor(labels.indices, tf.cast(labels.values, tf.int64), labels.dense_shape),
            validate_indices=False)
        valid = tf.cast(tf.sparse_tensor_to_dense(
            SparseTensor(labels.indices, tf.ones_like(labels.values, dtype=tf.int32),
                         labels.dense_shape), validate_indices=False), tf.bool)
        labels_rank = labels.indices.shape.as_list()[1]
        if rank is not None and labels_rank is not None and rank == labels_rank + 1:
            ids, valid = tf.expand_dims(ids, -1), tf.expand_dims(valid, -1)
        return ids, valid
    ids = tf.cast(tf.convert_to_tensor(labels), tf.int64)
    labels_rank = ids.shape.ndims
    if rank is not None and labels_rank is not None:
        if rank == labels_rank + 1:
            ids = tf.expand_dims(ids, -1)
        elif rank != labels_rank:
            raise ValueError(f"Unexpected labels shape {ids.shape} for predictions shape "
                             f"{predictions_idx.shape}. Predictions rank should be the "
                             "same rank as labels rank or labels rank plus one .")
    return ids, None


def _and(tf, a, b):
    return a if b is None else tf.logical_and(a, b)


def _first_occurrences(tf, ids, valid):
    """True at the first valid occurrence of each id along the last axis."""
    n = tf.shape(ids)[-1]
    same = tf.equal(tf.expand_dims(ids, -1), tf.expand_dims(ids, -2))  # [..., i, j]
    if valid is not None:
        same = tf.logical_and(same, tf.expand_dims(valid, -2))
    positions = tf.range(n)
    earlier = tf.less(tf.expand_dims(positions, 0), tf.expand_dims(positions, 1))  # j < i
    repeated = tf.reduce_any(tf.logical_and(same, earlier), -1)
    return _and(tf, tf.logical_not(repeated), valid)


def _set_counts(tf, predictions_idx, labels, class_id, wanted):
    """Per-row float64 counts {'tp', 'fp', 'fn'} (those in `wanted`) of the two id sets."""
    pred = tf.cast(predictions_idx, tf.int64)
    ids, label_valid = labels
    pred_valid = None
    if class_id is not None:
        selected = tf.constant(class_id, tf.int64)
        pred_valid = tf.equal(pred, selected)
        label_valid = _and(tf, tf.equal(ids, selected), label_valid)
    match = tf.equal(tf.expand_dims(pred, -1), tf.expand_dims(ids, -2))  # [..., k, m]
    if label_valid is not None:
        match = tf.logical_and(match, tf.expand_dims(label_valid, -2))
    if pred_valid is not None:
        match = tf.logical_and(match, tf.expand_dims(pred_valid, -1))

    def count(mask):
        return tf.reduce_sum(tf.cast(mask, tf.float64), -1)

    counts = {}
    if "tp" in wanted or "fp" in wanted:
        first_pred = _first_occurrences(tf, pred, pred_valid)
        in_labels = tf.reduce_any(match, -1)
        if "tp" in wanted:
            counts["tp"] = count(tf.logical_and(first_pred, in_labels))
        if "fp" in wanted:
            counts["fp"] = count(tf.logical_and(first_pred, tf.logical_not(in_labels)))
    if "fn" in wanted:
        first_label = _first_occurrences(tf, ids, label_valid)
        in_pred = tf.reduce_any(match, -2)
        counts["fn"] = count(tf.logical_and(first_label, tf.logical_not(in_pred)))
    return counts


def _streaming_sum(tf, per_row, weights, scope_name):
    """A float64 local variable named `scope_name` accumulating the weighted sum of rows."""
    with tf.name_scope(None, scope_name) as scope:
        if weights is not None:
            per_row = per_row * broadcast_weights(tf.cast(weights, tf.float64), per_row)
        batch = tf.reduce_sum(per_row)
        variable = metric_variable([], tf.float64, scope)
        return tf.convert_to_tensor(variable), tf.assign_add(variable, batch, name="update")


def _ratio_at_top_k(prefix, other, labels, predictions_idx, k, class_id, weights,
                    metrics_collections, updates_collections, name):
    tf = api()
    with tf.name_scope(name, at_k_name(prefix, k, class_id)) as scope:
        predictions_idx = tf.convert_to_tensor(predictions_idx)
        label_set = _label_set(tf, labels, predictions_idx)
        counts = _set_counts(tf, predictions_idx, label_set, class_id, ("tp", other))
        other_name = {"fp": "false_positive", "fn": "false_negative"}[other]
        tp, tp_update = _streaming_sum(tf, counts["tp"], weights,
                                       at_k_name("true_positive", k, class_id))
        x, x_update = _streaming_sum(tf, counts[other], weights,
                                     at_k_name(other_name, k, class_id))
        value = tf.truediv(tp, tp + x, name=scope)
        update = tf.truediv(tp_update, tp_update + x_update, name="update")
        add_to_collections(metrics_collections, updates_collections, value, update)
        return value, update


def recall_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                    metrics_collections=None, updates_collections=None, name=None):
    """Recall of the given top-k ids `predictions_idx` [D1, ... DN, k]: tp / (tp + fn).

    Label ids never predicted (also ids outside [0, num_classes)) count as false negatives;
    `k` only names the metric.
    """
    return _ratio_at_top_k("recall", "fn", labels, predictions_idx, k, class_id, weights,
                           metrics_collections, updates_collections, name)


def precision_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                       metrics_collections=None, updates_collections=None, name=None):
    """Precision of the given top-k ids `predictions_idx` [D1, ... DN, k]: tp / (tp + fp)."""
    return _ratio_at_top_k("precision", "fp", labels, predictions_idx, k, class_id, weights,
                           metrics_collections, updates_collections, name)


def recall_at_k(labels, predictions, k, class_id=None, weights=None, metrics_collections=None,
                updates_collections=None, name=None):
    """Recall of the `k` highest of `predictions` [D1, ... DN, num_classes] against `labels`."""
    tf = api()
    with tf.name_scope(name, at_k_name("recall", k, class_id)) as scope:
        _, top_k_idx = tf.nn.top_k(predictions, k)
        return recall_at_top_k(labels, top_k_idx, k, class_id, weights, metrics_collections,
                               updates_collections, scope)


def precision_at_k(labels, predictions, k, class_id=None, weights=None,
                   metrics_collections=None, updates_collections=None, name=None):
    """Precision of the `k` highest of `predictions` [D1, ... DN, num_classes]."""
    tf = api()
    with tf.name_scope(name, at_k_name("precision", k, class_id)) as scope:
        _, top_k_idx = tf.nn.top_k(predictions, k)
        return precision_at_top_k(labels, top_k_idx, k, class_id, weights,
                                  metrics_collections, updates_collections, scope)


def sparse_precision_at_k(labels, predictions, k, class_id=None, weights=None,
                          metrics_collections=None, updates_collections=None, name=None):
    """The former name of `precision_at_k`."""
    return precision_at_k(labels, predictions, k, class_id, weights, metrics_collections,
                          updates_collections, name)


def _clean_out_of_range(tf, labels, num_classes):
    """Labels with every id >= num_classes replaced by -1 (only when there is such an id)."""
    sparse = isinstance(labels, (SparseTensor, SparseTensorValue))
    if sparse:
        labels = SparseTensor.from_value(labels)
    values = tf.cast(labels.values if sparse else tf.convert_to_tensor(labels), tf.int64)
    cleaned = tf.cond(tf.greater_equal(tf.reduce_max(values), num_classes),
                      lambda: tf.where(tf.greater_equal(values, num_classes),
                                       -tf.ones_like(values), values),
                      lambda: values)
    cleaned.set_shape(values.shape)
    if not sparse:
        return cleaned
    return SparseTensor(labels.indices, cleaned, labels.dense_shape)


def _average_precision_rows(tf, labels, predictions_idx, k):
    """Per-row float64 average precision of the ranked ids against the label set."""
    pred = tf.cast(predictions_idx, tf.int64)
    sparse = isinstance(labels, SparseTensor)
    ids, valid = _label_set(tf, labels, pred)
    match = tf.equal(tf.expand_dims(pred, -1), tf.expand_dims(ids, -2))
    if valid is not None:
        match = tf.logical_and(match, tf.expand_dims(valid, -2))
    relevant = tf.cast(tf.reduce_any(match, -1), tf.float64)            # [..., k]
    ranks = tf.cast(tf.range(1, k + 1), tf.float64)
    precision_sum = tf.reduce_sum(tf.cumsum(relevant, axis=-1) / ranks * relevant, -1)
    if sparse:
        members = _first_occurrences(tf, ids, valid)
    else:
        members = tf.greater_equal(ids, 0)
    num_relevant = tf.minimum(tf.reduce_sum(tf.cast(members, tf.float64), -1), float(k))
    return tf.truediv(precision_sum, num_relevant)


def average_precision_at_k(labels, predictions, k, weights=None, metrics_collections=None,
                           updates_collections=None, name=None):
    """Mean over rows of the average precision of the top `k` of `predictions` (float64).

    A row's AP sums precision@i over the ranks i holding a label, divided by
    min(k, number of labels); label ids >= num_classes are ignored. Rows weigh `weights`;
    the value is 0 while the total weight is 0.
    """
    if k < 1:
        raise ValueError(f"Invalid k={k}. `k` should be >= 1.")
    tf = api()
    with tf.name_scope(name, at_k_name("average_precision", k)) as scope:
        predictions = tf.convert_to_tensor(predictions)
        _, predictions_idx = tf.nn.top_k(predictions, k)
        num_classes = tf.cast(tf.shape(predictions)[-1], tf.int64)
        labels = _clean_out_of_range(tf, labels, num_classes)
        average_precision = _average_precision_rows(tf, labels, predictions_idx, k)
        if weights is not None:
            weights = broadcast_weights(tf.cast(weights, tf.float64), average_precision)
            average_precision = average_precision * weights
        with tf.name_scope(None, "max") as max_scope:
            max_var = metric_variable([], tf.float64, max_scope)
            if weights is None:
                batch_max = tf.cast(tf.size(average_precision), tf.float64)
            else:
                batch_max = tf.reduce_sum(weights)
            max_update = tf.assign_add(max_var, batch_max, name="update")
        with tf.name_scope(None, "total") as total_scope:
            total_var = metric_variable([], tf.float64, total_scope)
            total_update = tf.assign_add(total_var, tf.reduce_sum(average_precision),
                                         name="update")
        value = tf.div_no_nan(tf.convert_to_tensor(total_var), tf.convert_to_tensor(max_var),
                              name="mean")
        update = tf.div_no_nan(total_update, max_update, name=scope)
        add_to_collections(metrics_collections, updates_collections, value, update)
        return value, update


def sparse_average_precision_at_k(labels, predictions, k, weights=None,
                                  metrics_collections=None, updates_collections=None, name=None):
    """The former name of `average_precision_at_k`."""
    return average_precision_at_k(labels, predictions, k, weights, metrics_collections,
                                  updates_collections, name)
