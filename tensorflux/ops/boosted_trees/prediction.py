"""Evaluating a boosted-trees ensemble (tensorflux's own ops; TF's BoostedTrees* ops keep
their state in a serialized resource, ours in plain variables).

The ensemble is dense arrays over trees `t` and heap-indexed nodes `n` (children `2n+1`,
`2n+2`): `split_feature[t, n]` (-1 at a leaf), `split_threshold[t, n]` (an example whose
bucket of that feature is <= the threshold goes left), `node_value[t, n, :]` (the logits the
node gives while it is a leaf; a child's value is its parent's plus its own learned step), and
the `bias` (the centered bias). An example's logits are the bias plus its leaf's value in each
tree; its directional feature contributions (DFCs) are, along each path, the change of node
value at a split credited to the split's feature.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape

__all__: list = []

_ENSEMBLE_INPUTS = ["bucketized: int32", "split_feature: int32", "split_threshold: int32",
                    "node_value: float", "bias: float"]

TfxBoostedTreesPredict = define_op(
    "TfxBoostedTreesPredict", inputs=_ENSEMBLE_INPUTS, outputs=["logits: float"],
    differentiable=False)

TfxBoostedTreesContributions = define_op(
    "TfxBoostedTreesContributions", inputs=_ENSEMBLE_INPUTS,
    outputs=["bias_output: float", "contributions: float"],
    attrs=["link: {'identity', 'sigmoid'} = 'identity'"], differentiable=False)


@TfxBoostedTreesPredict.shape_fn
def _predict_shape(bucketized, split_feature, split_threshold, node_value, bias):
    return TensorShape([bucketized[0] if bucketized.ndims else None,
                        bias[0] if bias.ndims else None])


@TfxBoostedTreesContributions.shape_fn
def _contributions_shape(bucketized, split_feature, split_threshold, node_value, bias):
    batch = bucketized[0] if bucketized.ndims else None
    features = bucketized[1] if bucketized.ndims else None
    dim = bias[0] if bias.ndims else None
    return [TensorShape([batch, dim]), TensorShape([batch, features, dim])]


def _check(bucketized, split_feature, split_threshold, node_value, bias):
    if bucketized.ndim != 2:
        raise errors.InvalidArgumentError(None, None, f"bucketized must be [batch, features]; "
                                          f"got shape {list(bucketized.shape)}")
    if split_feature.ndim != 2 or split_feature.shape != split_threshold.shape or \
            node_value.shape[:2] != split_feature.shape or node_value.ndim != 3:
        raise errors.InvalidArgumentError(None, None, f"inconsistent ensemble shapes: "
                                          f"split_feature {list(split_feature.shape)}, "
                                          f"split_threshold {list(split_threshold.shape)}, "
                                          f"node_value {list(node_value.shape)}")
    if node_value.shape[2] != bias.shape[0]:
        raise errors.InvalidArgumentError(None, None, f"node_value has logits dimension "
                                          f"{node_value.shape[2]}, bias {bias.shape[0]}")
    used = split_feature[split_feature >= 0]
    if used.size and used.max() >= bucketized.shape[1]:
        raise errors.InvalidArgumentError(None, None, f"the ensemble splits on feature "
                                          f"{used.max()}; the input has "
                                          f"{bucketized.shape[1]} features")


def walk(bucketized, split_feature, split_threshold):
    """Yields (depth, parent [trees, batch], child [trees, batch], moved [trees, batch]) for
    every level of the trees, the examples descending together from the roots."""
    trees, _ = split_feature.shape
    batch = bucketized.shape[0]
    tree_index = np.arange(trees)[:, None]
    nodes = np.zeros((trees, batch), np.int64)
    rows = np.arange(batch)[None, :]
    depth = 0
    while True:
        feature = split_feature[tree_index, nodes]
        moved = feature >= 0
        if not moved.any():
            return
        buckets = bucketized[rows, np.maximum(feature, 0)]
        left = buckets <= split_threshold[tree_index, nodes]
        child = np.where(moved, np.where(left, 2 * nodes + 1, 2 * nodes + 2), nodes)
        yield depth, nodes, child, moved
        nodes = child
        depth += 1


def leaves(bucketized, split_feature, split_threshold):
    """The leaf `[trees, batch]` each example reaches in each tree."""
    trees = split_feature.shape[0]
    nodes = np.zeros((trees, bucketized.shape[0]), np.int64)
    for _, _, child, _ in walk(bucketized, split_feature, split_threshold):
        nodes = child
    return nodes


@TfxBoostedTreesPredict.kernel
def _predict_kernel(bucketized, split_feature, split_threshold, node_value, bias):
    _check(bucketized, split_feature, split_threshold, node_value, bias)
    nodes = leaves(bucketized, split_feature, split_threshold)
    tree_index = np.arange(split_feature.shape[0])[:, None]
    values = node_value[tree_index, nodes]  # [trees, batch, dim]
    return (bias[None, :] + values.sum(axis=0)).astype(np.float32)


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


@TfxBoostedTreesContributions.kernel
def _contributions_kernel(bucketized, split_feature, split_threshold, node_value, bias, *,
                          link):
    """Tree by tree, along each example's path, every split's change of the running output
    (logits, or their sigmoid with link "sigmoid") is credited to the split's feature; the
    bias output plus the contributions is the prediction."""
    _check(bucketized, split_feature, split_threshold, node_value, bias)
    link = link.decode() if isinstance(link, bytes) else link
    out = _sigmoid if link == "sigmoid" else (lambda x: x)
    batch, features = bucketized.shape
    dim = bias.shape[0]
    contributions = np.zeros((batch, features, dim), np.float64)
    running = np.broadcast_to(bias.astype(np.float64) + node_value[:, 0, :].sum(axis=0),
                              (batch, dim)).copy()
    bias_output = out(running)
    rows = np.arange(batch)
    for tree in range(split_feature.shape[0]):
        one = slice(tree, tree + 1)
        for _, parent, child, moved in walk(bucketized, split_feature[one],
                                            split_threshold[one]):
            parent, child, moved = parent[0], child[0], moved[0]
            delta = node_value[tree, child] - node_value[tree, parent]
            before = out(running)
            running = running + np.where(moved[:, None], delta, 0.0)
            feature = split_feature[tree, parent]
            np.add.at(contributions, (rows[moved], feature[moved]),
                      (out(running) - before)[moved])
    return bias_output.astype(np.float32), contributions.astype(np.float32)
