"""Bucket boundaries of numeric features for boosted trees, from weighted quantiles of the
first `n_batches_per_layer` training batches (TF 1.15's boosted trees bucketize numeric
columns this way, with `num_quantiles = 1 / quantile_sketch_epsilon`).

State, in plain variables: a weighted summary per feature `[features, size, 2]` (value,
weight; weight 0 marks an unused slot) merged with every batch and pruned back to `size`
points at evenly spaced cumulative weights (the error of a rank stays within a few
`total / size`); the boundaries `[features, num_quantiles + 1]` (the distinct quantiles at
ranks k / num_quantiles, min and max included, padded with +inf); and `[batches seen, ready]`.
An example's bucket of a feature is the index of the first boundary >= its value.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape

__all__: list = []

BATCHES, READY = range(2)

TfxBoostedTreesQuantileStep = define_op(
    "TfxBoostedTreesQuantileStep",
    inputs=["summary: Ref(float)", "boundaries: Ref(float)", "state: Ref(int64)",
            "values: float", "weights: float"],
    outputs=["ready: bool"],
    attrs=["n_batches_per_layer: int >= 1", "num_quantiles: int >= 1"],
    stateful=True, differentiable=False)

TfxBoostedTreesBucketize = define_op(
    "TfxBoostedTreesBucketize", inputs=["values: float", "boundaries: float"],
    outputs=["buckets: int32"], differentiable=False)


@TfxBoostedTreesQuantileStep.shape_fn
def _step_shape(*inputs):
    return TensorShape([])


@TfxBoostedTreesBucketize.shape_fn
def _bucketize_shape(values, boundaries):
    return values


def merge(summary: np.ndarray, values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """One feature's summary `[size, 2]` with the weighted `values` merged in and pruned back
    to `size` points (total weight kept; equal values combined)."""
    size = summary.shape[0]
    used = summary[:, 1] > 0
    keep = weights > 0
    points = np.concatenate([summary[used, 0], values[keep]]).astype(np.float64)
    masses = np.concatenate([summary[used, 1], weights[keep]]).astype(np.float64)
    finite = np.isfinite(points)
    points, masses = points[finite], masses[finite]
    out = np.zeros_like(summary)
    if points.size == 0:
        return out
    distinct, inverse = np.unique(points, return_inverse=True)
    totals = np.bincount(inverse, weights=masses)
    if distinct.size > size:
        cumulative = np.cumsum(totals)
        targets = np.linspace(0.0, cumulative[-1], size)
        chosen = np.unique(np.clip(np.searchsorted(cumulative, targets, side="left"), 0,
                                   distinct.size - 1))
        chosen[-1] = distinct.size - 1  # the maximum always stays
        kept_cumulative = cumulative[chosen]
        totals = np.diff(np.concatenate([[0.0], kept_cumulative]))
        distinct = distinct[chosen]
    out[:distinct.size, 0] = distinct
    out[:distinct.size, 1] = totals
    return out


def boundaries_of(summary: np.ndarray, num_quantiles: int) -> np.ndarray:
    """The distinct values at cumulative weight ranks k / num_quantiles (k = 0..Q), padded
    with +inf to Q + 1 entries."""
    out = np.full(num_quantiles + 1, np.inf, np.float32)
    used = summary[:, 1] > 0
    if not used.any():
        return out
    points, masses = summary[used, 0], summary[used, 1]
    cumulative = np.cumsum(masses)
    ranks = np.linspace(0.0, cumulative[-1], num_quantiles + 1)
    picked = points[np.clip(np.searchsorted(cumulative, ranks, side="left"), 0,
                            points.size - 1)]
    picked = np.unique(np.concatenate([[points[0]], picked, [points[-1]]]))
    out[:picked.size] = picked[:num_quantiles + 1]
    return out


@TfxBoostedTreesQuantileStep.kernel
def _quantile_step_kernel(summary, boundaries, state, values, weights, *, n_batches_per_layer,
                          num_quantiles):
    summary_array = summary.read()
    state_array = state.read()
    if state_array[READY]:
        return np.bool_(True)
    if values.ndim != 2 or values.shape[1] != summary_array.shape[0]:
        raise errors.InvalidArgumentError(None, None, f"values must be [batch, "
                                          f"{summary_array.shape[0]}]; got shape "
                                          f"{list(values.shape)}")
    if weights.shape != (values.shape[0],):
        raise errors.InvalidArgumentError(None, None, f"weights must be [{values.shape[0]}]; "
                                          f"got shape {list(weights.shape)}")
    merged = np.stack([merge(summary_array[j], values[:, j], weights)
                       for j in range(values.shape[1])]) if values.shape[1] else summary_array
    summary_array[...] = merged  # the variables' buffers are updated in place
    state_array[BATCHES] += 1
    if state_array[BATCHES] >= n_batches_per_layer:
        bounds = boundaries.read()
        for j in range(merged.shape[0]):
            bounds[j] = boundaries_of(merged[j], num_quantiles)
        state_array[READY] = 1
    return np.bool_(bool(state_array[READY]))


@TfxBoostedTreesBucketize.kernel
def _bucketize_kernel(values, boundaries):
    if values.ndim != 2 or boundaries.ndim != 2 or values.shape[1] != boundaries.shape[0]:
        raise errors.InvalidArgumentError(None, None, f"values [batch, features] and "
                                          f"boundaries [features, n] disagree: "
                                          f"{list(values.shape)} vs {list(boundaries.shape)}")
    out = np.empty(values.shape, np.int32)
    for j in range(values.shape[1]):
        out[:, j] = np.searchsorted(boundaries[j], values[:, j], side="left")
    return out
