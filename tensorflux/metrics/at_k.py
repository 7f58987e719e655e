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

from tensorflux.framework import dtypes, scopes
from tensorflux.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.metrics.util import (
    add_to_collections,
    aggregate_across_replicas,
    at_k_name,
    broadcast_weights,
    metric_variable,
)
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.nn import core as nn_core
from tensorflux.ops.sparse import core as sparse_core
from tensorflux.ops.state import variable_ops as state_ops

__all__ = ["recall_at_k", "recall_at_top_k", "precision_at_k", "sparse_precision_at_k",
           "precision_at_top_k", "average_precision_at_k", "sparse_average_precision_at_k"]


def _label_set(labels, predictions_idx):
    """Labels as `(ids, valid)`: int64 `[D1, ... DN, m]` and bool mask (None: all valid).

    Labels of rank one less than `predictions_idx` gain a trailing dimension of 1.
    """
    rank = predictions_idx.shape.ndims
    if isinstance(labels, (SparseTensor, SparseTensorValue)):
        labels = SparseTensor.from_value(labels)
        ids = sparse_core.sparse_tensor_to_dense(
            SparseTensor(labels.indices, math_ops.cast(labels.values, dtypes.int64),
                         labels.dense_shape),
            validate_indices=False)
        valid = math_ops.cast(sparse_core.sparse_tensor_to_dense(
            SparseTensor(labels.indices, array_ops.ones_like(labels.values, dtype=dtypes.int32),
                         labels.dense_shape), validate_indices=False), dtypes.bool_)
        labels_rank = labels.indices.shape.as_list()[1]
        if rank is not None and labels_rank is not None and rank == labels_rank + 1:
            ids, valid = array_ops.expand_dims(ids, -1), array_ops.expand_dims(valid, -1)
        return ids, valid
    ids = math_ops.cast(convert_to_tensor(labels), dtypes.int64)
    labels_rank = ids.shape.ndims
    if rank is not None and labels_rank is not None:
        if rank == labels_rank + 1:
            ids = array_ops.expand_dims(ids, -1)
        elif rank != labels_rank:
            raise ValueError(f"Unexpected labels shape {ids.shape} for predictions shape "
                             f"{predictions_idx.shape}. Predictions rank should be the "
                             "same rank as labels rank or labels rank plus one .")
    return ids, None


def _and(a, b):
    return a if b is None else math_ops.logical_and(a, b)


def _first_occurrences(ids, valid):
    """True at the first valid occurrence of each id along the last axis."""
    n = array_ops.shape(ids)[-1]
    same = math_ops.equal(array_ops.expand_dims(ids, -1),
                          array_ops.expand_dims(ids, -2))  # [..., i, j]
    if valid is not None:
        same = math_ops.logical_and(same, array_ops.expand_dims(valid, -2))
    positions = math_ops.range(n)
    earlier = math_ops.less(array_ops.expand_dims(positions, 0),
                            array_ops.expand_dims(positions, 1))  # j < i
    repeated = math_ops.reduce_any(math_ops.logical_and(same, earlier), -1)
    return _and(math_ops.logical_not(repeated), valid)


def _set_counts(predictions_idx, labels, class_id, wanted):
    """Per-row float64 counts {'tp', 'fp', 'fn'} (those in `wanted`) of the two id sets."""
    pred = math_ops.cast(predictions_idx, dtypes.int64)
    ids, label_valid = labels
    pred_valid = None
    if class_id is not None:
        selected = array_ops.constant(class_id, dtypes.int64)
        pred_valid = math_ops.equal(pred, selected)
        label_valid = _and(math_ops.equal(ids, selected), label_valid)
    match = math_ops.equal(array_ops.expand_dims(pred, -1),
                           array_ops.expand_dims(ids, -2))  # [..., k, m]
    if label_valid is not None:
        match = math_ops.logical_and(match, array_ops.expand_dims(label_valid, -2))
    if pred_valid is not None:
        match = math_ops.logical_and(match, array_ops.expand_dims(pred_valid, -1))

    def count(mask):
        return math_ops.reduce_sum(math_ops.cast(mask, dtypes.float64), -1)

    counts = {}
    if "tp" in wanted or "fp" in wanted:
        first_pred = _first_occurrences(pred, pred_valid)
        in_labels = math_ops.reduce_any(match, -1)
        if "tp" in wanted:
            counts["tp"] = count(math_ops.logical_and(first_pred, in_labels))
        if "fp" in wanted:
            counts["fp"] = count(math_ops.logical_and(first_pred, math_ops.logical_not(in_labels)))
    if "fn" in wanted:
        first_label = _first_occurrences(ids, label_valid)
        in_pred = math_ops.reduce_any(match, -2)
        counts["fn"] = count(math_ops.logical_and(first_label, math_ops.logical_not(in_pred)))
    return counts


def _streaming_sum(per_row, weights, scope_name):
    """A float64 local variable named `scope_name` accumulating the weighted sum of rows."""
    with scopes.name_scope(None, scope_name) as scope:
        if weights is not None:
            per_row = per_row * broadcast_weights(math_ops.cast(weights, dtypes.float64), per_row)
        batch = math_ops.reduce_sum(per_row)
        variable = metric_variable([], dtypes.float64, scope)
        return variable, state_ops.assign_add(variable, batch, name="update")


def _ratio_at_top_k(prefix, other, labels, predictions_idx, k, class_id, weights,
                    metrics_collections, updates_collections, name):
    with scopes.name_scope(name, at_k_name(prefix, k, class_id)) as scope:
        predictions_idx = convert_to_tensor(predictions_idx)
        label_set = _label_set(labels, predictions_idx)
        counts = _set_counts(predictions_idx, label_set, class_id, ("tp", other))
        other_name = {"fp": "false_positive", "fn": "false_negative"}[other]
        tp, tp_update = _streaming_sum(counts["tp"], weights,
                                       at_k_name("true_positive", k, class_id))
        x, x_update = _streaming_sum(counts[other], weights,
                                     at_k_name(other_name, k, class_id))

        def compute_value():
            tp_sum, x_sum = convert_to_tensor(tp), convert_to_tensor(x)
            return math_ops.truediv(tp_sum, tp_sum + x_sum, name=scope)

        value = aggregate_across_replicas(metrics_collections, compute_value)
        update = math_ops.truediv(tp_update, tp_update + x_update, name="update")
        add_to_collections(None, updates_collections, value, update)
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
    with scopes.name_scope(name, at_k_name("recall", k, class_id)) as scope:
        _, top_k_idx = nn_core.top_k(predictions, k)
        return recall_at_top_k(labels, top_k_idx, k, class_id, weights, metrics_collections,
                               updates_collections, scope)


def precision_at_k(labels, predictions, k, class_id=None, weights=None,
                   metrics_collections=None, updates_collections=None, name=None):
    """Precision of the `k` highest of `predictions` [D1, ... DN, num_classes]."""
    with scopes.name_scope(name, at_k_name("precision", k, class_id)) as scope:
        _, top_k_idx = nn_core.top_k(predictions, k)
        return precision_at_top_k(labels, top_k_idx, k, class_id, weights,
                                  metrics_collections, updates_collections, scope)


def sparse_precision_at_k(labels, predictions, k, class_id=None, weights=None,
                          metrics_collections=None, updates_collections=None, name=None):
    """The former name of `precision_at_k`."""
    return precision_at_k(labels, predictions, k, class_id, weights, metrics_collections,
                          updates_collections, name)


def _clean_out_of_range(labels, num_classes):
    """Labels with every id >= num_classes replaced by -1 (only when there is such an id)."""
    sparse = isinstance(labels, (SparseTensor, SparseTensorValue))
    if sparse:
        labels = SparseTensor.from_value(labels)
    values = math_ops.cast(labels.values if sparse else convert_to_tensor(labels), dtypes.int64)
    cleaned = control_flow_ops.cond(math_ops.greater_equal(math_ops.reduce_max(values),
                                                           num_classes),
                                    lambda: math_ops.where(math_ops.greater_equal(values,
                                                                                  num_classes),
                                                           -array_ops.ones_like(values), values),
                                    lambda: values)
    cleaned.set_shape(values.shape)
    if not sparse:
        return cleaned
    return SparseTensor(labels.indices, cleaned, labels.dense_shape)


def _average_precision_rows(labels, predictions_idx, k):
    """Per-row float64 average precision of the ranked ids against the label set."""
    pred = math_ops.cast(predictions_idx, dtypes.int64)
    sparse = isinstance(labels, SparseTensor)
    ids, valid = _label_set(labels, pred)
    match = math_ops.equal(array_ops.expand_dims(pred, -1), array_ops.expand_dims(ids, -2))
    if valid is not None:
        match = math_ops.logical_and(match, array_ops.expand_dims(valid, -2))
    relevant = math_ops.cast(math_ops.reduce_any(match, -1), dtypes.float64)            # [..., k]
    ranks = math_ops.cast(math_ops.range(1, k + 1), dtypes.float64)
    precision_sum = math_ops.reduce_sum(math_ops.cumsum(relevant, axis=-1) / ranks * relevant, -1)
    if sparse:
        members = _first_occurrences(ids, valid)
    else:
        members = math_ops.greater_equal(ids, 0)
    num_relevant = math_ops.minimum(math_ops.reduce_sum(math_ops.cast(members, dtypes.float64), -1),
                                    float(k))
    return math_ops.truediv(precision_sum, num_relevant)


def average_precision_at_k(labels, predictions, k, weights=None, metrics_collections=None,
                           updates_collections=None, name=None):
    """Mean over rows of the average precision of the top `k` of `predictions` (float64).

    A row's AP sums precision@i over the ranks i holding a label, divided by
    min(k, number of labels); label ids >= num_classes are ignored. Rows weigh `weights`;
    the value is 0 while the total weight is 0.
    """
    if k < 1:
        raise ValueError(f"Invalid k={k}. `k` should be >= 1.")
    with scopes.name_scope(name, at_k_name("average_precision", k)) as scope:
        predictions = convert_to_tensor(predictions)
        _, predictions_idx = nn_core.top_k(predictions, k)
        num_classes = math_ops.cast(array_ops.shape(predictions)[-1], dtypes.int64)
        labels = _clean_out_of_range(labels, num_classes)
        average_precision = _average_precision_rows(labels, predictions_idx, k)
        if weights is not None:
            weights = broadcast_weights(math_ops.cast(weights, dtypes.float64), average_precision)
            average_precision = average_precision * weights
        with scopes.name_scope(None, "max") as max_scope:
            max_var = metric_variable([], dtypes.float64, max_scope)
            if weights is None:
                batch_max = math_ops.cast(array_ops.size(average_precision), dtypes.float64)
            else:
                batch_max = math_ops.reduce_sum(weights)
            max_update = state_ops.assign_add(max_var, batch_max, name="update")
        with scopes.name_scope(None, "total") as total_scope:
            total_var = metric_variable([], dtypes.float64, total_scope)
            total_update = state_ops.assign_add(total_var, math_ops.reduce_sum(average_precision),
                                                name="update")
        value = aggregate_across_replicas(
            metrics_collections,
            lambda: math_ops.div_no_nan(convert_to_tensor(total_var), convert_to_tensor(max_var),
                                        name="mean"))
        update = math_ops.div_no_nan(total_update, max_update, name=scope)
        add_to_collections(None, updates_collections, value, update)
        return value, update


def sparse_average_precision_at_k(labels, predictions, k, weights=None,
                                  metrics_collections=None, updates_collections=None, name=None):
    """The former name of `average_precision_at_k`."""
    return average_precision_at_k(labels, predictions, k, weights, metrics_collections,
                                  updates_collections, name)
