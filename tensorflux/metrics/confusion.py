"""`tf.metrics` built on confusion counts: per-class (mean_iou, mean_per_class_accuracy) and
per-threshold (true/false positives/negatives, precision, recall, sensitivity, specificity).

Threshold metrics count a prediction as positive when it is strictly greater than the
threshold; predictions must lie in [0, 1] (checked when the update runs).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, scopes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.metrics.util import (
    add_to_collections,
    aggregate_across_replicas,
    broadcast_weights,
    metric_variable,
    remove_squeezable_dimensions,
)
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.debug import checks as check_ops
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.ops.state import variable_scope

__all__ = ["mean_iou", "mean_per_class_accuracy", "true_positives_at_thresholds",
           "false_positives_at_thresholds", "true_negatives_at_thresholds",
           "false_negatives_at_thresholds", "precision_at_thresholds", "recall_at_thresholds",
           "sensitivity_at_specificity", "specificity_at_sensitivity"]

_KEYS = ("tp", "fn", "tn", "fp")
_VARIABLE_NAMES = {"tp": "true_positives", "fn": "false_negatives", "tn": "true_negatives",
                   "fp": "false_positives"}


def _flatten(tensor):
    return array_ops.reshape(tensor, [-1]) if tensor.shape.ndims != 1 else tensor


def _streaming_confusion_matrix(labels, predictions, num_classes, weights=None):
    """float64 [num_classes, num_classes] running matrix (rows: labels) and its update
    (TF's `metrics_impl._streaming_confusion_matrix`; third-party metric packages call it)."""
    total = metric_variable([num_classes, num_classes], dtypes.float64, "total_confusion_matrix")
    labels = _flatten(math_ops.cast(labels, dtypes.int64))
    predictions = _flatten(math_ops.cast(predictions, dtypes.int64))
    with scopes.name_scope("confusion_matrix"):
        checks = [
            check_ops.assert_non_negative(labels, message="`labels` contains negative values"),
            check_ops.assert_non_negative(predictions,
                                          message="`predictions` contains negative values"),
            check_ops.assert_less(labels, array_ops.constant(num_classes, dtypes.int64),
                                  message="`labels` out of bound"),
            check_ops.assert_less(predictions, array_ops.constant(num_classes, dtypes.int64),
                                  message="`predictions` out of bound"),
        ]
        with scopes.control_dependencies(checks):
            cells = array_ops.identity(labels * num_classes + predictions)
        if weights is None:
            counts = array_ops.ones_like(cells, dtype=dtypes.float64)
        else:
            counts = _flatten(math_ops.cast(weights, dtypes.float64)) * array_ops.ones_like(
                cells, dtype=dtypes.float64)
        batch = array_ops.reshape(math_ops.unsorted_segment_sum(counts, cells,
                                                                num_classes * num_classes),
                                  [num_classes, num_classes])
    return total, state_ops.assign_add(total, batch)


def mean_iou(labels, predictions, num_classes, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """Mean intersection-over-union over the classes that occur (in labels or predictions).

    `update_op` accumulates the float64 confusion matrix and returns it; `mean_iou` (float32)
    is 0 while no class occurred.
    """
    with variable_scope.variable_scope(name, default_name="mean_iou"):
        predictions = convert_to_tensor(predictions)
        labels = convert_to_tensor(labels)
        if not predictions.shape.is_compatible_with(labels.shape):
            raise ValueError(f"mean_iou: predictions shape {predictions.shape} is incompatible "
                             f"with labels shape {labels.shape}")
        total, update = _streaming_confusion_matrix(labels, predictions, num_classes,
                                                    weights)
        value = aggregate_across_replicas(metrics_collections, _mean_iou_value, total)
        add_to_collections(None, updates_collections, value, update)
        return value, update


def _mean_iou_value(total):
    cm = convert_to_tensor(total)
    sum_over_row = math_ops.cast(math_ops.reduce_sum(cm, 0), dtypes.float32)
    sum_over_col = math_ops.cast(math_ops.reduce_sum(cm, 1), dtypes.float32)
    diag = math_ops.cast(array_ops.diag_part(cm), dtypes.float32)
    denominator = sum_over_row + sum_over_col - diag
    num_valid = math_ops.reduce_sum(math_ops.cast(math_ops.not_equal(denominator, 0),
                                                  dtypes.float32))
    denominator = math_ops.where(math_ops.greater(denominator, 0), denominator,
                                 array_ops.ones_like(denominator))
    iou = math_ops.truediv(diag, denominator)
    return math_ops.where(math_ops.greater(num_valid, 0),
                          math_ops.reduce_sum(iou, name="mean_iou") / num_valid, 0.0)


def mean_per_class_accuracy(labels, predictions, num_classes, weights=None,
                            metrics_collections=None, updates_collections=None, name=None):
    """Mean over classes of the per-class accuracy (weighted correct / weighted count).

    `update_op` returns the float32 per-class accuracies [num_classes]; classes never seen
    contribute 0 to the mean.
    """
    with variable_scope.variable_scope(name, default_name="mean_accuracy"):
        labels = _flatten(math_ops.cast(labels, dtypes.int64))
        predictions = _flatten(convert_to_tensor(predictions))
        if not predictions.shape.is_compatible_with(labels.shape):
            raise ValueError(f"mean_per_class_accuracy: predictions shape {predictions.shape} "
                             f"is incompatible with labels shape {labels.shape}")
        total = metric_variable([num_classes], dtypes.float32, "total")
        count = metric_variable([num_classes], dtypes.float32, "count")
        ones = array_ops.ones(array_ops.reshape(array_ops.size(labels), [1]), dtypes.float32)
        if predictions.dtype.base_dtype != dtypes.int64:
            predictions = math_ops.cast(predictions, dtypes.int64)
        is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
        if weights is not None:
            weights = _flatten(math_ops.cast(weights, dtypes.float32))
            is_correct = is_correct * weights
            ones = ones * weights
        update_total = state_ops.scatter_add(total, labels, ones)
        update_count = state_ops.scatter_add(count, labels, is_correct)

        def compute_value():
            per_class = math_ops.div_no_nan(convert_to_tensor(count),
                                            math_ops.maximum(convert_to_tensor(total), 0.0))
            return math_ops.reduce_mean(per_class, name="mean_accuracy")

        value = aggregate_across_replicas(metrics_collections, compute_value)
        update = math_ops.div_no_nan(update_count, math_ops.maximum(update_total, 0.0),
                                     name="update_op")
        add_to_collections(None, updates_collections, value, update)
        return value, update


def _counts_at_thresholds(labels, predictions, thresholds, weights, includes=_KEYS):
    """Local float32 [len(thresholds)] counters for `includes` and their update ops."""
    predictions = convert_to_tensor(predictions)
    message = "predictions must be in [0, 1]"
    checks = [check_ops.assert_greater_equal(predictions, math_ops.cast(0.0, predictions.dtype),
                                             message=message),
              check_ops.assert_less_equal(predictions, math_ops.cast(1.0, predictions.dtype),
                                          message=message)]
    # As in TF1 the range checks gate only the cast: float32 predictions skip them.
    with scopes.control_dependencies(checks):
        predictions, labels, weights = remove_squeezable_dimensions(
            math_ops.cast(predictions, dtypes.float32), math_ops.cast(labels,
                                                                      dtypes.bool_), weights)
    n = len(thresholds)
    column = array_ops.reshape(predictions, [-1, 1])
    row = array_ops.constant(np.asarray(thresholds, np.float32).reshape(1, n))
    pred_pos = math_ops.cast(math_ops.greater(column, row), dtypes.float32)      # [N, n]
    label_pos = math_ops.cast(array_ops.reshape(labels, [-1, 1]), dtypes.float32)  # [N, 1]
    if weights is not None:
        weights = broadcast_weights(math_ops.cast(weights, dtypes.float32), predictions)
        w = array_ops.reshape(weights, [-1, 1])
        pos, neg = label_pos * w, (1.0 - label_pos) * w
    else:
        pos, neg = label_pos, 1.0 - label_pos
    batch = {
        "tp": lambda: math_ops.reduce_sum(pred_pos * pos, 0),
        "fn": lambda: math_ops.reduce_sum((1.0 - pred_pos) * pos, 0),
        "tn": lambda: math_ops.reduce_sum((1.0 - pred_pos) * neg, 0),
        "fp": lambda: math_ops.reduce_sum(pred_pos * neg, 0),
    }
    values, updates = {}, {}
    for key in _KEYS:
        if key in includes:
            values[key] = metric_variable([n], dtypes.float32, _VARIABLE_NAMES[key])
            updates[key] = state_ops.assign_add(values[key], batch[key]())
    return values, updates


def value_and_update(compute, values, updates, keys, metrics_collections,
                     updates_collections):
    """`(value, update_op)` of a metric computed from confusion counts: `compute(*counts,
    suffix)` on the `keys` count variables (suffix "value") and on their updates
    ("update_op"), added to the collections."""
    value = aggregate_across_replicas(
        metrics_collections,
        lambda: compute(*[convert_to_tensor(values[k]) for k in keys], "value"))
    update = compute(*[updates[k] for k in keys], "update_op")
    add_to_collections(None, updates_collections, value, update)
    return value, update


def _count_at_thresholds(key, labels, predictions, thresholds, weights, metrics_collections,
                         updates_collections, name):
    with variable_scope.variable_scope(name, default_name=_VARIABLE_NAMES[key]):
        values, updates = _counts_at_thresholds(labels, predictions, thresholds, weights,
                                                (key,))
        value = aggregate_across_replicas(metrics_collections,
                                          lambda: array_ops.identity(values[key]))
        add_to_collections(None, updates_collections, value, updates[key])
        return value, updates[key]


def true_positives_at_thresholds(labels, predictions, thresholds, weights=None,
                                 metrics_collections=None, updates_collections=None, name=None):
    """Weighted count of positive labels with prediction > each threshold (float32 [T])."""
    return _count_at_thresholds("tp", **locals())


def false_positives_at_thresholds(labels, predictions, thresholds, weights=None,
                                  metrics_collections=None, updates_collections=None,
                                  name=None):
    """Weighted count of negative labels with prediction > each threshold (float32 [T])."""
    return _count_at_thresholds("fp", **locals())


def true_negatives_at_thresholds(labels, predictions, thresholds, weights=None,
                                 metrics_collections=None, updates_collections=None, name=None):
    """Weighted count of negative labels with prediction <= each threshold (float32 [T])."""
    return _count_at_thresholds("tn", **locals())


def false_negatives_at_thresholds(labels, predictions, thresholds, weights=None,
                                  metrics_collections=None, updates_collections=None,
                                  name=None):
    """Weighted count of positive labels with prediction <= each threshold (float32 [T])."""
    return _count_at_thresholds("fn", **locals())


def _ratio_at_thresholds(prefix, other, labels, predictions, thresholds, weights,
                         metrics_collections, updates_collections, name):
    with variable_scope.variable_scope(name, default_name=f"{prefix}_at_thresholds"):
        values, updates = _counts_at_thresholds(labels, predictions, thresholds, weights,
                                                ("tp", other))

        def ratio(tp, x, suffix):
            return math_ops.truediv(tp, 1e-7 + tp + x, name=f"{prefix}_{suffix}")

        return value_and_update(ratio, values, updates, ("tp", other), metrics_collections,
                                updates_collections)


def precision_at_thresholds(labels, predictions, thresholds, weights=None,
                            metrics_collections=None, updates_collections=None, name=None):
    """tp / (tp + fp + 1e-7) at each threshold (float32 [T])."""
    return _ratio_at_thresholds("precision", "fp", **locals())


def recall_at_thresholds(labels, predictions, thresholds, weights=None,
                         metrics_collections=None, updates_collections=None, name=None):
    """tp / (tp + fn + 1e-7) at each threshold (float32 [T])."""
    return _ratio_at_thresholds("recall", "fn", **locals())


def even_thresholds(num_thresholds, last):
    """-1e-7, `num_thresholds - 2` evenly spaced inner points of (0, 1), then `last`."""
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - 1e-7] + inner + [last]


def _check_rate(argument, rate):
    if rate < 0 or rate > 1:
        raise ValueError(f"`{argument}` must be in the range [0, 1]. Currently, "
                         f"`{argument}` got {rate}.")


def sensitivity_at_specificity(labels, predictions, specificity, weights=None,
                               num_thresholds=200, metrics_collections=None,
                               updates_collections=None, name=None):
    """Sensitivity at the threshold whose specificity is closest to `specificity`.

    Of equally close thresholds the first (lowest) one is used.
    """
    _check_rate("specificity", specificity)
    with variable_scope.variable_scope(name, default_name="sensitivity_at_specificity"):
        values, updates = _counts_at_thresholds(
            labels, predictions, even_thresholds(num_thresholds, 1.0 + 1e-7), weights)

        def compute(tp, tn, fp, fn, suffix):
            specificities = math_ops.truediv(tn, tn + fp + 1e-7)
            index = math_ops.cast(math_ops.argmin(math_ops.abs(specificities - specificity), 0),
                                  dtypes.int32)
            return math_ops.truediv(tp[index], tp[index] + fn[index] + 1e-7, name=suffix)

        return value_and_update(compute, values, updates, ("tp", "tn", "fp", "fn"),
                                metrics_collections, updates_collections)


def specificity_at_sensitivity(labels, predictions, sensitivity, weights=None,
                               num_thresholds=200, metrics_collections=None,
                               updates_collections=None, name=None):
    """Specificity at the threshold whose sensitivity is closest to `sensitivity`.

    Of equally close thresholds the last (highest) one is used.
    """
    _check_rate("sensitivity", sensitivity)
    with variable_scope.variable_scope(name, default_name="specificity_at_sensitivity"):
        values, updates = _counts_at_thresholds(
            labels, predictions, even_thresholds(num_thresholds, 1.0 - 1e-7), weights)

        def compute(tp, tn, fp, fn, suffix):
            distance = math_ops.abs(math_ops.truediv(tp, tp + fn + 1e-7) - sensitivity)
            at_min = math_ops.cast(math_ops.equal(distance, math_ops.reduce_min(distance)),
                                   dtypes.int64)
            index = math_ops.cast(math_ops.argmax(math_ops.cumsum(at_min), 0), dtypes.int32)
            return math_ops.truediv(tn[index], tn[index] + fp[index] + 1e-7, name=suffix)

        return value_and_update(compute, values, updates, ("tp", "tn", "fp", "fn"),
                                metrics_collections, updates_collections)
