"""`tf.metrics` that are running means of a per-element quantity: cosine distance, relative
error, fraction below a threshold. Each keeps `total` and `count` local variables under its
scope (see `tf.metrics.mean`) and is 0-based while no weight has been seen.
"""

from __future__ import annotations

from tensorflux import metrics
from tensorflux.framework import dtypes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.metrics.util import (
    add_to_collections,
    aggregate_across_replicas,
    remove_squeezable_dimensions,
    squeeze_last_if_one_extra,
)
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops

__all__ = ["mean_cosine_distance", "mean_relative_error", "percentage_below"]


def _mean(values, weights, metrics_collections, updates_collections, name):
    if weights is not None:
        values, _, weights = remove_squeezable_dimensions(values, None, weights)
    return metrics.mean(values, weights, metrics_collections, updates_collections, name)


def mean_cosine_distance(labels, predictions, dim, weights=None, metrics_collections=None,
                         updates_collections=None, name=None):
    """1 - mean over rows of sum(labels * predictions) along `dim` (inputs unit-normalised)."""
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels, weights)
    radial = math_ops.reduce_sum(math_ops.multiply(predictions,
                                                   math_ops.cast(labels, predictions.dtype)),
                                 axis=[dim], keepdims=True)
    mean_similarity, update = _mean(radial, weights, None, None,
                                    name or "mean_cosine_distance")
    value = aggregate_across_replicas(metrics_collections,
                                      lambda: math_ops.subtract(1.0, mean_similarity))
    update = math_ops.subtract(1.0, update)
    add_to_collections(None, updates_collections, value, update)
    return value, update


def mean_relative_error(labels, predictions, normalizer, weights=None,
                        metrics_collections=None, updates_collections=None, name=None):
    """Running mean of |labels - predictions| / normalizer (0 where normalizer is 0)."""
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels, weights)
    normalizer = convert_to_tensor(normalizer, dtype=predictions.dtype.base_dtype)
    predictions, normalizer = squeeze_last_if_one_extra(predictions, normalizer)
    if not predictions.shape.is_compatible_with(normalizer.shape):
        raise ValueError(f"mean_relative_error: predictions shape {predictions.shape} is "
                         f"incompatible with normalizer shape {normalizer.shape}")
    labels = math_ops.cast(labels, predictions.dtype.base_dtype)
    relative = math_ops.where(math_ops.equal(normalizer, 0.0), array_ops.zeros_like(labels),
                              math_ops.truediv(math_ops.abs(labels - predictions), normalizer))
    return _mean(relative, weights, metrics_collections, updates_collections,
                 name or "mean_relative_error")


def percentage_below(values, threshold, weights=None, metrics_collections=None,
                     updates_collections=None, name=None):
    """Weighted fraction of `values` strictly less than `threshold`."""
    values = convert_to_tensor(values)
    below = math_ops.cast(math_ops.less(values, math_ops.cast(threshold, values.dtype.base_dtype)),
                          dtypes.float32)
    return _mean(below, weights, metrics_collections, updates_collections,
                 name or "percentage_below_threshold")
