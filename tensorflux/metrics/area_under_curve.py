"""`tf.metrics.auc`: area under the ROC or PR curve from confusion counts at thresholds.

The thresholds are `num_thresholds` evenly spaced points of [0, 1] (or the sorted given ones)
bracketed by -1e-7 and 1 + 1e-7, so the curve always reaches both ends. Summation is a
Riemann sum over consecutive thresholds: trapezoids, the lower (`minoring`) or upper
(`majoring`) of the two heights, or for PR curves `careful_interpolation`, which integrates
precision exactly under linear interpolation of the confusion counts (Davis & Goadrich 2006).
"""

from __future__ import annotations

from tensorflux.metrics.confusion import (
    _counts_at_thresholds,
    even_thresholds,
    value_and_update,
)
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.state import variable_scope
from tensorflux.platform import tf_logging

__all__ = ["auc"]

_METHODS = ("trapezoidal", "careful_interpolation", "minoring", "majoring")


def _interpolated_pr_auc(tp, fp, fn, n):
    dtp = tp[:n - 1] - tp[1:]
    p = tp + fp
    slope = math_ops.div_no_nan(dtp, math_ops.maximum(p[:n - 1] - p[1:], 0.0), name="prec_slope")
    intercept = tp[1:] - slope * p[1:]
    ratio = math_ops.where(math_ops.logical_and(p[:n - 1] > 0, p[1:] > 0),
                           math_ops.div_no_nan(p[:n - 1], math_ops.maximum(p[1:], 0.0),
                                               name="recall_relative_ratio"),
                           array_ops.ones_like(p[1:]))
    increments = math_ops.div_no_nan(slope * (dtp + intercept * math_ops.log(ratio)),
                                     math_ops.maximum(tp[1:] + fn[1:],
                                                      0.0), name="pr_auc_increment")
    return math_ops.reduce_sum(increments, name="interpolate_pr_auc")


def _area(tp, fn, tn, fp, n, curve, summation_method, name):
    if curve == "PR" and summation_method == "careful_interpolation":
        return _interpolated_pr_auc(tp, fp, fn, n)
    eps = 1.0e-6
    recall = math_ops.truediv(tp + eps, tp + fn + eps)
    if curve == "ROC":
        x, y = math_ops.truediv(fp, fp + tn + eps), recall
    else:
        x, y = recall, math_ops.truediv(tp + eps, tp + fp + eps)
    if summation_method == "minoring":
        heights = math_ops.minimum(y[:n - 1], y[1:])
    elif summation_method == "majoring":
        heights = math_ops.maximum(y[:n - 1], y[1:])
    else:
        heights = (y[:n - 1] + y[1:]) / 2.0
    return math_ops.reduce_sum((x[:n - 1] - x[1:]) * heights, name=name)


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None,
        updates_collections=None, curve="ROC", name=None, summation_method="trapezoidal",
        thresholds=None):
    """Approximate AUC of the ROC (`curve="ROC"`) or precision-recall (`"PR"`) curve.

    `predictions` must lie in [0, 1]; `labels` are cast to bool. Keeps float32 local
    counters `true_positives`, `false_negatives`, `true_negatives`, `false_positives` of
    shape [num_thresholds] under the `auc` scope.

    Raises:
        ValueError: `curve` or `summation_method` is not one of the known names.
    """
    with variable_scope.variable_scope(name, default_name="auc"):
        if curve not in ("ROC", "PR"):
            raise ValueError(f"Curve must be either ROC or PR. Curve {curve} is unknown.")
        if summation_method not in _METHODS:
            raise ValueError(f"Invalid summation_method: {summation_method} summation_method "
                             "should be 'trapezoidal', 'careful_interpolation', 'minoring', "
                             "or 'majoring'.")
        if curve == "PR" and summation_method == "trapezoidal":
            tf_logging.warning("Trapezoidal rule is known to produce incorrect PR-AUCs; please "
                               'switch to "careful_interpolation" instead.')
        if thresholds is not None:
            num_thresholds = len(thresholds) + 2
            points = [0.0 - 1e-7] + sorted(thresholds) + [1.0 + 1e-7]
        else:
            points = even_thresholds(num_thresholds, 1.0 + 1e-7)
        values, updates = _counts_at_thresholds(labels, predictions, points, weights)

        def area(tp, fn, tn, fp, suffix):
            return _area(tp, fn, tn, fp, num_thresholds, curve, summation_method, suffix)

        return value_and_update(area, values, updates, ("tp", "fn", "tn", "fp"),
                                metrics_collections, updates_collections)
