"""The basic `tf.metrics`: streaming metrics as (value, update_op) pairs over local variables.

Each metric keeps its running sums in LOCAL_VARIABLES (and METRIC_VARIABLES), so
`tf.local_variables_initializer()` resets it; `update_op` adds a batch and returns the new
value; `value` reads the current one.
"""

from __future__ import annotations

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.metrics.util import remove_squeezable_dimensions

__all__ = ["accuracy", "mean", "mean_squared_error", "mean_absolute_error",
           "root_mean_squared_error", "true_positives", "false_positives", "true_negatives",
           "false_negatives", "precision", "recall", "mean_tensor"]


def _api():
    import tensorflux

    return tensorflux


def _local(tf, name, shape, dtype):
    return tf.Variable(tf.zeros(shape, dtype=dtype), trainable=False, name=name,
                       collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES])


def _collect(metrics_collections, updates_collections, value, update):
    graph = graph_mod.get_default_graph()
    for name in metrics_collections or ():
        graph.add_to_collection(name, value)
    for name in updates_collections or ():
        graph.add_to_collection(name, update)


def _safe_div(tf, numerator, denominator, name):
    return tf.where(tf.greater(denominator, 0), tf.truediv(numerator, tf.maximum(
        denominator, tf.ones_like(denominator) * 1e-30)), tf.zeros_like(numerator), name=name)


def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """Weighted running mean of `values`."""
    tf = _api()
    with tf.variable_scope(name, default_name="mean"):
        return _mean(tf, values, weights, metrics_collections, updates_collections)


def _mean(tf, values, weights, metrics_collections, updates_collections):
    values = tf.cast(values, tf.float32)
    total = _local(tf, "total", [], tf.float32)
    count = _local(tf, "count", [], tf.float32)
    if weights is None:
        num = tf.cast(tf.size(values), tf.float32)
        batch_sum = tf.reduce_sum(values)
    else:
        values, _, weights = remove_squeezable_dimensions(values, None, weights)
        weights = tf.cast(weights, tf.float32) * tf.ones_like(values)
        num = tf.reduce_sum(weights)
        batch_sum = tf.reduce_sum(values * weights)
    update_total = tf.assign_add(total, batch_sum)
    update_count = tf.assign_add(count, num)
    value = _safe_div(tf, tf.convert_to_tensor(total), tf.convert_to_tensor(count), "value")
    update = _safe_div(tf, update_total, update_count, "update_op")
    _collect(metrics_collections, updates_collections, value, update)
    return value, update


def mean_tensor(values, weights=None, metrics_collections=None, updates_collections=None,
                name=None):
    """Element-wise running mean of a tensor of fixed shape."""
    tf = _api()
    with tf.variable_scope(name, default_name="mean"):
        values = tf.cast(values, tf.float32)
        shape = values.get_shape().as_list()
        total = _local(tf, "total_tensor", shape, tf.float32)
        count = _local(tf, "count_tensor", shape, tf.float32)
        ones = tf.ones_like(values)
        if weights is not None:
            ones = ones * tf.cast(weights, tf.float32)
            values = values * ones
        update_total = tf.assign_add(total, values)
        update_count = tf.assign_add(count, ones)
        value = _safe_div(tf, tf.convert_to_tensor(total), tf.convert_to_tensor(count), "value")
        update = _safe_div(tf, update_total, update_count, "update_op")
        _collect(metrics_collections, updates_collections, value, update)
        return value, update


def accuracy(labels, predictions, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """Fraction of `predictions` equal to `labels`."""
    tf = _api()
    with tf.variable_scope(name, default_name="accuracy"):
        predictions = tf.convert_to_tensor(predictions)
        labels = tf.cast(labels, predictions.dtype.base_dtype)
        correct = tf.cast(tf.equal(predictions, labels), tf.float32)
        return _mean(tf, correct, weights, metrics_collections, updates_collections)


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    tf = _api()
    with tf.variable_scope(name, default_name="mean_squared_error"):
        predictions = tf.cast(predictions, tf.float32)
        errors = tf.squared_difference(predictions, tf.cast(labels, tf.float32))
        return _mean(tf, errors, weights, metrics_collections, updates_collections)


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    tf = _api()
    with tf.variable_scope(name, default_name="mean_absolute_error"):
        errors = tf.abs(tf.cast(predictions, tf.float32) - tf.cast(labels, tf.float32))
        return _mean(tf, errors, weights, metrics_collections, updates_collections)


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    tf = _api()
    with tf.variable_scope(name, default_name="root_mean_squared_error"):
        errors = tf.squared_difference(tf.cast(predictions, tf.float32),
                                       tf.cast(labels, tf.float32))
        mse, update = _mean(tf, errors, weights, None, None)
        value, update = tf.sqrt(mse), tf.sqrt(update)
        _collect(metrics_collections, updates_collections, value, update)
        return value, update


def _count(tf, condition, weights, name, metrics_collections, updates_collections):
    with tf.variable_scope(name):
        condition = tf.cast(condition, tf.float32)
        if weights is not None:
            condition = condition * tf.cast(weights, tf.float32)
        total = _local(tf, "count", [], tf.float32)
        update = tf.assign_add(total, tf.reduce_sum(condition))
        value = tf.identity(tf.convert_to_tensor(total))
        _collect(metrics_collections, updates_collections, value, update)
        return value, update


def _bools(tf, labels, predictions):
    return tf.cast(labels, tf.bool), tf.cast(predictions, tf.bool)


def true_positives(labels, predictions, weights=None, metrics_collections=None,
                   updates_collections=None, name=None):
    tf = _api()
    labels, predictions = _bools(tf, labels, predictions)
    return _count(tf, tf.logical_and(labels, predictions), weights, name or "true_positives",
                  metrics_collections, updates_collections)


def false_positives(labels, predictions, weights=None, metrics_collections=None,
                    updates_collections=None, name=None):
    tf = _api()
    labels, predictions = _bools(tf, labels, predictions)
    return _count(tf, tf.logical_and(tf.logical_not(labels), predictions), weights,
                  name or "false_positives", metrics_collections, updates_collections)


def true_negatives(labels, predictions, weights=None, metrics_collections=None,
                   updates_collections=None, name=None):
    tf = _api()
    labels, predictions = _bools(tf, labels, predictions)
    return _count(tf, tf.logical_and(tf.logical_not(labels), tf.logical_not(predictions)),
                  weights, name or "true_negatives", metrics_collections, updates_collections)


def false_negatives(labels, predictions, weights=None, metrics_collections=None,
                    updates_collections=None, name=None):
    tf = _api()
    labels, predictions = _bools(tf, labels, predictions)
    return _count(tf, tf.logical_and(labels, tf.logical_not(predictions)), weights,
                  name or "false_negatives", metrics_collections, updates_collections)


def precision(labels, predictions, weights=None, metrics_collections=None,
              updates_collections=None, name=None):
    """tp / (tp + fp)."""
    tf = _api()
    with tf.variable_scope(name, default_name="precision"):
        tp, tp_update = true_positives(labels, predictions, weights)
        fp, fp_update = false_positives(labels, predictions, weights)
        value = _safe_div(tf, tp, tp + fp, "value")
        update = _safe_div(tf, tp_update, tp_update + fp_update, "update_op")
        _collect(metrics_collections, updates_collections, value, update)
        return value, update


def recall(labels, predictions, weights=None, metrics_collections=None,
           updates_collections=None, name=None):
    """tp / (tp + fn)."""
    tf = _api()
    with tf.variable_scope(name, default_name="recall"):
        tp, tp_update = true_positives(labels, predictions, weights)
        fn, fn_update = false_negatives(labels, predictions, weights)
        value = _safe_div(tf, tp, tp + fn, "value")
        update = _safe_div(tf, tp_update, tp_update + fn_update, "update_op")
        _collect(metrics_collections, updates_collections, value, update)
        return value, update
