"""The basic `tf.metrics`: streaming metrics as (value, update_op) pairs over local variables.

Each metric keeps its running sums in LOCAL_VARIABLES (and METRIC_VARIABLES), so
`tf.local_variables_initializer()` resets it; `update_op` adds a batch and returns the new
value; `value` reads the current one.
"""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.metrics.util import (
    add_to_collections,
    aggregate_across_replicas,
    metric_variable,
    remove_squeezable_dimensions,
)
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.ops.state import variable_scope

__all__ = ["accuracy", "mean", "mean_squared_error", "mean_absolute_error",
           "root_mean_squared_error", "true_positives", "false_positives", "true_negatives",
           "false_negatives", "precision", "recall", "mean_tensor"]


def _local(name, shape, dtype):
    return metric_variable(shape, dtype, name)


def _collect(metrics_collections, updates_collections, value_fn, update_fn):
    """(value, update): `value_fn()` built once across replicas, added to
    `metrics_collections`, then `update_fn()` (each replica's own) added to
    `updates_collections`."""
    value = aggregate_across_replicas(metrics_collections, value_fn)
    update = update_fn()
    add_to_collections(None, updates_collections, value, update)
    return value, update


def _safe_div(numerator, denominator, name):
    safe_denominator = math_ops.maximum(denominator, array_ops.ones_like(denominator) * 1e-30)
    return math_ops.where(math_ops.greater(denominator, 0),
                          math_ops.truediv(numerator, safe_denominator),
                          array_ops.zeros_like(numerator), name=name)


def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """Weighted running mean of `values`."""
    with variable_scope.variable_scope(name, default_name="mean"):
        return _mean(values, weights, metrics_collections, updates_collections)


def _mean(values, weights, metrics_collections, updates_collections):
    values = math_ops.cast(values, dtypes.float32)
    total = _local("total", [], dtypes.float32)
    count = _local("count", [], dtypes.float32)
    if weights is None:
        num = math_ops.cast(array_ops.size(values), dtypes.float32)
        batch_sum = math_ops.reduce_sum(values)
    else:
        values, _, weights = remove_squeezable_dimensions(values, None, weights)
        weights = math_ops.cast(weights, dtypes.float32) * array_ops.ones_like(values)
        num = math_ops.reduce_sum(weights)
        batch_sum = math_ops.reduce_sum(values * weights)
    update_total = state_ops.assign_add(total, batch_sum)
    update_count = state_ops.assign_add(count, num)
    return _collect(metrics_collections, updates_collections,
                    lambda: _safe_div(convert_to_tensor(total), convert_to_tensor(count),
                                      "value"),
                    lambda: _safe_div(update_total, update_count, "update_op"))


def mean_tensor(values, weights=None, metrics_collections=None, updates_collections=None,
                name=None):
    """Element-wise running mean of a tensor of fixed shape."""
    with variable_scope.variable_scope(name, default_name="mean"):
        values = math_ops.cast(values, dtypes.float32)
        shape = values.get_shape().as_list()
        total = _local("total_tensor", shape, dtypes.float32)
        count = _local("count_tensor", shape, dtypes.float32)
        ones = array_ops.ones_like(values)
        if weights is not None:
            ones = ones * math_ops.cast(weights, dtypes.float32)
            values = values * ones
        update_total = state_ops.assign_add(total, values)
        update_count = state_ops.assign_add(count, ones)
        return _collect(metrics_collections, updates_collections,
                        lambda: _safe_div(convert_to_tensor(total), convert_to_tensor(count),
                                          "value"),
                        lambda: _safe_div(update_total, update_count, "update_op"))


def accuracy(labels, predictions, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """Fraction of `predictions` equal to `labels`."""
    with variable_scope.variable_scope(name, default_name="accuracy"):
        predictions = convert_to_tensor(predictions)
        labels = math_ops.cast(labels, predictions.dtype.base_dtype)
        correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
        return _mean(correct, weights, metrics_collections, updates_collections)


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    with variable_scope.variable_scope(name, default_name="mean_squared_error"):
        predictions = math_ops.cast(predictions, dtypes.float32)
        errors = math_ops.squared_difference(predictions, math_ops.cast(labels, dtypes.float32))
        return _mean(errors, weights, metrics_collections, updates_collections)


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    with variable_scope.variable_scope(name, default_name="mean_absolute_error"):
        errors = math_ops.abs(math_ops.cast(predictions, dtypes.float32) - math_ops.cast(labels,
                                                                                         dtypes.float32))
        return _mean(errors, weights, metrics_collections, updates_collections)


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    with variable_scope.variable_scope(name, default_name="root_mean_squared_error"):
        errors = math_ops.squared_difference(math_ops.cast(predictions, dtypes.float32),
                                             math_ops.cast(labels, dtypes.float32))
        mse, update = _mean(errors, weights, None, None)
        return _collect(metrics_collections, updates_collections,
                        lambda: math_ops.sqrt(mse),
                        lambda: math_ops.sqrt(update))


def _count(condition, weights, name, metrics_collections, updates_collections):
    with variable_scope.variable_scope(name):
        condition = math_ops.cast(condition, dtypes.float32)
        if weights is not None:
            condition = condition * math_ops.cast(weights, dtypes.float32)
        total = _local("count", [], dtypes.float32)
        update = state_ops.assign_add(total, math_ops.reduce_sum(condition))
        value = aggregate_across_replicas(
            metrics_collections, lambda: array_ops.identity(convert_to_tensor(total)))
        add_to_collections(None, updates_collections, value, update)
        return value, update


def _bools(labels, predictions):
    return math_ops.cast(labels, dtypes.bool_), math_ops.cast(predictions, dtypes.bool_)


def true_positives(labels, predictions, weights=None, metrics_collections=None,
                   updates_collections=None, name=None):
    labels, predictions = _bools(labels, predictions)
    return _count(math_ops.logical_and(labels, predictions), weights, name or "true_positives",
                  metrics_collections, updates_collections)


def false_positives(labels, predictions, weights=None, metrics_collections=None,
                    updates_collections=None, name=None):
    labels, predictions = _bools(labels, predictions)
    return _count(math_ops.logical_and(math_ops.logical_not(labels), predictions), weights,
                  name or "false_positives", metrics_collections, updates_collections)


def true_negatives(labels, predictions, weights=None, metrics_collections=None,
                   updates_collections=None, name=None):
    labels, predictions = _bools(labels, predictions)
    return _count(math_ops.logical_and(math_ops.logical_not(labels),
                                       math_ops.logical_not(predictions)),
                  weights, name or "true_negatives", metrics_collections, updates_collections)


def false_negatives(labels, predictions, weights=None, metrics_collections=None,
                    updates_collections=None, name=None):
    labels, predictions = _bools(labels, predictions)
    return _count(math_ops.logical_and(labels, math_ops.logical_not(predictions)), weights,
                  name or "false_negatives", metrics_collections, updates_collections)


def precision(labels, predictions, weights=None, metrics_collections=None,
              updates_collections=None, name=None):
    """tp / (tp + fp)."""
    with variable_scope.variable_scope(name, default_name="precision"):
        tp, tp_update = true_positives(labels, predictions, weights)
        fp, fp_update = false_positives(labels, predictions, weights)
        return _collect(metrics_collections, updates_collections,
                        lambda: _safe_div(tp, tp + fp, "value"),
                        lambda: _safe_div(tp_update, tp_update + fp_update, "update_op"))


def recall(labels, predictions, weights=None, metrics_collections=None,
           updates_collections=None, name=None):
    """tp / (tp + fn)."""
    with variable_scope.variable_scope(name, default_name="recall"):
        tp, tp_update = true_positives(labels, predictions, weights)
        fn, fn_update = false_negatives(labels, predictions, weights)
        return _collect(metrics_collections, updates_collections,
                        lambda: _safe_div(tp, tp + fn, "value"),
                        lambda: _safe_div(tp_update, tp_update + fn_update, "update_op"))
