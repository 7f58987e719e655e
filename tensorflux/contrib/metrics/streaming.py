"""contrib.metrics streaming metrics: TF 1.15's `streaming_*` names over tf.metrics.

Contrib put predictions before labels (`streaming_accuracy(predictions, labels)`); each
wrapper keeps that order and returns tf.metrics' `(value, update_op)`. Pearson correlation and
covariance keep weighted running sums in local (metric) variables.
"""

from __future__ import annotations

from tensorflux import metrics as core
from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.metrics import confusion
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.ops.state import variable_scope as vs
from tensorflux.ops.state import variables as variables_mod

__all__ = ["streaming_accuracy", "streaming_mean", "streaming_mean_tensor",
           "streaming_precision", "streaming_recall", "streaming_auc",
           "streaming_true_positives", "streaming_false_positives",
           "streaming_true_negatives", "streaming_false_negatives",
           "streaming_mean_squared_error", "streaming_mean_absolute_error",
           "streaming_root_mean_squared_error", "streaming_mean_iou",
           "streaming_mean_cosine_distance", "streaming_mean_relative_error",
           "streaming_percentage_less", "streaming_precision_at_thresholds",
           "streaming_recall_at_thresholds", "streaming_sensitivity_at_specificity",
           "streaming_specificity_at_sensitivity", "streaming_recall_at_k",
           "streaming_sparse_precision_at_k", "streaming_sparse_recall_at_k",
           "streaming_covariance", "streaming_pearson_correlation", "streaming_concat",
           "aggregate_metrics", "aggregate_metric_map", "f1_score"]


def _swap(core_fn, doc):
    """contrib `fn(predictions, labels, *args, **kwargs)` -> core_fn(labels, predictions, ...)."""
    def metric(predictions, labels, *args, **kwargs):
        return core_fn(labels, predictions, *args, **kwargs)

    metric.__name__ = "streaming_" + core_fn.__name__
    metric.__doc__ = doc + "\n\n    Returns:\n        (value tensor, update op).\n"
    return metric


streaming_accuracy = _swap(core.accuracy, "Running fraction of predictions equal to labels.")
streaming_precision = _swap(core.precision, "Running precision tp / (tp + fp).")
streaming_recall = _swap(core.recall, "Running recall tp / (tp + fn).")
streaming_true_positives = _swap(core.true_positives, "Running weighted true positives.")
streaming_false_positives = _swap(core.false_positives, "Running weighted false positives.")
streaming_true_negatives = _swap(core.true_negatives, "Running weighted true negatives.")
streaming_false_negatives = _swap(core.false_negatives, "Running weighted false negatives.")
streaming_mean_squared_error = _swap(core.mean_squared_error, "Running mean squared error.")
streaming_mean_absolute_error = _swap(core.mean_absolute_error,
                                      "Running mean absolute error.")
streaming_root_mean_squared_error = _swap(core.root_mean_squared_error,
                                          "Running root mean squared error.")
streaming_mean_iou = _swap(core.mean_iou, "Running mean intersection-over-union per class.")
streaming_mean_cosine_distance = _swap(core.mean_cosine_distance,
                                       "Running mean cosine distance along `dim`.")
streaming_mean_relative_error = _swap(core.mean_relative_error,
                                      "Running mean |predictions - labels| / normalizer.")
streaming_precision_at_thresholds = _swap(core.precision_at_thresholds,
                                          "Running precision at each threshold.")
streaming_recall_at_thresholds = _swap(core.recall_at_thresholds,
                                       "Running recall at each threshold.")
streaming_sensitivity_at_specificity = _swap(core.sensitivity_at_specificity,
                                             "Running sensitivity at a given specificity.")
streaming_specificity_at_sensitivity = _swap(core.specificity_at_sensitivity,
                                             "Running specificity at a given sensitivity.")
streaming_recall_at_k = _swap(core.recall_at_k, "Running recall@k.")
streaming_sparse_precision_at_k = _swap(core.sparse_precision_at_k,
                                        "Running precision@k against sparse labels.")
streaming_sparse_recall_at_k = _swap(core.recall_at_k, "Running recall@k against sparse labels.")
streaming_mean = core.mean
streaming_mean_tensor = core.mean_tensor


def streaming_auc(predictions, labels, weights=None, num_thresholds=200,
                  metrics_collections=None, updates_collections=None, curve="ROC", name=None,
                  summation_method="trapezoidal"):
    """Running area under the ROC or PR curve (see tf.metrics.auc).

    Returns:
        (auc tensor, update op).
    """
    return core.auc(labels, predictions, weights=weights, num_thresholds=num_thresholds,
                    metrics_collections=metrics_collections,
                    updates_collections=updates_collections, curve=curve, name=name,
                    summation_method=summation_method)


def streaming_percentage_less(values, threshold, weights=None, metrics_collections=None,
                              updates_collections=None, name=None):
    """Running fraction of `values` below `threshold`.

    Returns:
        (value tensor, update op).
    """
    return core.percentage_below(values, threshold, weights=weights,
                                 metrics_collections=metrics_collections,
                                 updates_collections=updates_collections, name=name)


def f1_score(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None,
             updates_collections=None, name=None):
    """The best F1 score over `num_thresholds` decision thresholds, as a streaming metric.

    Predictions in [0, 1] are compared (>) with -1e-7, `num_thresholds - 2` evenly spaced
    inner points and 1 + 1e-7; the local tp/fp/fn counters at every threshold accumulate
    across update calls and the value is max over thresholds of 2PR / (P + R), with
    P = tp / (tp + fp + 1e-7) and R = tp / (tp + fn + 1e-7) (TF 1.x contrib.metrics).

    Args:
        labels: ground truth, cast to bool.
        predictions: floats in [0, 1] (an InvalidArgumentError at run time otherwise).
        weights: optional weights broadcastable to `predictions`.
        num_thresholds: number of thresholds (>= 2).
        metrics_collections, updates_collections: where to add the value / update op.
        name: variable scope name (default "f1").

    Returns:
        (f1, update_op): float32 scalars.

    Raises:
        ValueError: num_thresholds < 2.
    """
    if num_thresholds < 2:
        raise ValueError(f"f1_score: num_thresholds must be >= 2, got {num_thresholds}")
    epsilon = 1e-7
    thresholds = confusion.even_thresholds(num_thresholds, 1.0 + epsilon)
    with vs.variable_scope(name, default_name="f1"):
        values, updates = confusion._counts_at_thresholds(labels, predictions, thresholds,
                                                          weights, ("tp", "fp", "fn"))

        def best_f1(tp, fp, fn, suffix):
            precision = math_ops.truediv(tp, epsilon + tp + fp, name=f"precision_{suffix}")
            recall = math_ops.truediv(tp, epsilon + tp + fn, name=f"recall_{suffix}")
            f1 = 2.0 * precision * recall / (precision + recall + epsilon)
            return math_ops.reduce_max(f1, name=f"f1_{suffix}")

        return confusion.value_and_update(best_f1, values, updates, ("tp", "fp", "fn"),
                                          metrics_collections, updates_collections)


def _local(name):
    return variables_mod.Variable(array_ops.zeros([], dtype=dtypes.float64), trainable=False,
                                  name=name, collections=[GraphKeys.LOCAL_VARIABLES,
                                                          GraphKeys.METRIC_VARIABLES])


def _collect(collections_, value):
    for key in collections_ or ():
        graph_mod.add_to_collection(key, value)


def _moment_sums(predictions, labels, weights, names):
    """Local sums (n, sx, sy, sxy, sxx, syy) and the op adding this batch to them."""
    x = math_ops.cast(array_ops.reshape(predictions, [-1]), dtypes.float64)
    y = math_ops.cast(array_ops.reshape(labels, [-1]), dtypes.float64)
    if weights is None:
        w = array_ops.ones_like(x)
    else:
        w = math_ops.cast(array_ops.reshape(weights, [-1]), dtypes.float64) * \
            array_ops.ones_like(x)
    batch = [math_ops.reduce_sum(w), math_ops.reduce_sum(w * x), math_ops.reduce_sum(w * y),
             math_ops.reduce_sum(w * x * y), math_ops.reduce_sum(w * x * x),
             math_ops.reduce_sum(w * y * y)]
    sums = [_local(n) for n in names]
    update = control_flow_ops.group(*[state_ops.assign_add(s, b) for s, b in zip(sums, batch)])
    return sums, update


def _covariances(n, sx, sy, sxy, sxx, syy):
    """Unbiased (co)variances from weighted sums: (sxy - sx * sy / n) / (n - 1)."""
    denom = n - 1.0

    def cov(sab, sa, sb):
        return array_ops.where(math_ops.greater(n, 1.0),
                               (sab - sa * sb / math_ops.maximum(n, 1.0))
                               / math_ops.maximum(denom, 1e-300),
                               array_ops.zeros_like(n) + float("nan"))

    return cov(sxy, sx, sy), cov(sxx, sx, sx), cov(syy, sy, sy)


_NAMES = ("count", "sum_prediction", "sum_label", "sum_product", "sum_sq_prediction",
          "sum_sq_label")


def streaming_covariance(predictions, labels, weights=None, metrics_collections=None,
                         updates_collections=None, name=None):
    """Running unbiased covariance of `predictions` and `labels` (weights act as counts).

    Returns:
        (covariance tensor (float32; NaN before two samples), update op).
    """
    with vs.variable_scope(name, "covariance", [predictions, labels]):
        sums, update = _moment_sums(predictions, labels, weights, _NAMES)
        value = math_ops.cast(_covariances(*[s.value() for s in sums])[0], dtypes.float32)
        with graph_mod.get_default_graph().control_dependencies([update]):
            update_value = math_ops.cast(
                _covariances(*[array_ops.identity(s) for s in sums])[0], dtypes.float32)
        _collect(metrics_collections, value)
        _collect(updates_collections, update_value)
        return value, update_value


def streaming_pearson_correlation(predictions, labels, weights=None, metrics_collections=None,
                                  updates_collections=None, name=None):
    """Running Pearson correlation cov(p, l) / sqrt(var(p) * var(l)).

    Returns:
        (correlation tensor (float32), update op).
    """
    def pearson(sums):
        cxy, cxx, cyy = _covariances(*sums)
        return math_ops.cast(cxy / math_ops.sqrt(cxx * cyy), dtypes.float32)

    with vs.variable_scope(name, "pearson_r", [predictions, labels]):
        sums, update = _moment_sums(predictions, labels, weights, _NAMES)
        value = pearson([s.value() for s in sums])
        with graph_mod.get_default_graph().control_dependencies([update]):
            update_value = pearson([array_ops.identity(s) for s in sums])
        _collect(metrics_collections, value)
        _collect(updates_collections, update_value)
        return value, update_value


def streaming_concat(values, axis=0, max_size=None, metrics_collections=None,
                     updates_collections=None, name=None):
    """Concatenation along `axis` of every `values` batch seen (a growing local variable).

    Args:
        values: a tensor whose dimensions other than `axis` are statically known.
        axis: the axis to concatenate along.
        max_size: accepted for TF compatibility (storage grows as needed).

    Returns:
        (concatenated values, update op returning them).

    Raises:
        ValueError: unknown rank, `axis` out of range, or unknown non-axis dimensions.
    """

    with vs.variable_scope(name, "streaming_concat", [values]):
        values = convert_to_tensor(values)
        shape = values.get_shape()
        if shape.ndims is None:
            raise ValueError("streaming_concat: `values` must have known rank")
        if not -shape.ndims <= axis < shape.ndims:
            raise ValueError(f"streaming_concat: axis {axis} out of range for rank "
                             f"{shape.ndims}")
        axis %= shape.ndims
        dims = shape.as_list()
        if any(d is None for i, d in enumerate(dims) if i != axis):
            raise ValueError(f"streaming_concat: all dimensions of `values` except axis "
                             f"{axis} must be known, got {shape}")
        if max_size is not None and max_size <= 0:
            raise ValueError(f"streaming_concat: max_size must be positive, got {max_size}")
        empty = list(dims)
        empty[axis] = 0
        array = variables_mod.Variable(
            array_ops.zeros(empty, dtype=values.dtype.base_dtype), trainable=False,
            validate_shape=False, name="array",
            collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES])
        static = list(dims)
        static[axis] = None
        value = array_ops.identity(array.value())
        value.set_shape(TensorShape(static))
        update = state_ops.assign(array, array_ops.concat([array, values], axis),
                                  validate_shape=False)
        update = array_ops.identity(update)
        update.set_shape(TensorShape(static))
        _collect(metrics_collections, value)
        _collect(updates_collections, update)
        return value, update


def aggregate_metrics(*value_update_tuples):
    """([values], [update ops]) from (value, update_op) pairs.

    Raises:
        ValueError: no pairs.
    """
    if not value_update_tuples:
        raise ValueError("Expected at least one value_tensor/update_op pair")
    value_ops, update_ops = zip(*value_update_tuples)
    return list(value_ops), list(update_ops)


def aggregate_metric_map(names_to_tuples):
    """({name: value}, {name: update_op}) from {name: (value, update_op)}."""
    names = list(names_to_tuples)
    value_ops, update_ops = zip(*names_to_tuples.values())
    return dict(zip(names, value_ops)), dict(zip(names, update_ops))
