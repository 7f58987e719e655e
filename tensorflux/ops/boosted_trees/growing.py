"""Growing a boosted-trees ensemble layer by layer (tensorflux's own training op).

`TfxBoostedTreesTrainStep` is run once per batch with the batch's bucketized features and the
per-example gradients and (diagonal) hessians of the loss at the current logits. It
accumulates, for every node of the layer being grown, the gradient / hessian / example sums of
each (feature, bucket). After `n_batches_per_layer` batches it divides them by the number of
examples seen (TF averages its per-batch means the same way) and splits every node of the
layer where a split gains:

    score(G, H) = sum_d shrink(G_d)^2 / (H_d + l2),   shrink(g) = sign(g) max(|g| - l1, 0)
    gain = score(left) + score(right) - score(node)   (minus tree_complexity when pruning)
    child value = node value + learning_rate * (-shrink(G) / (H + l2))

over thresholds "bucket <= t goes left" with at least one example and `min_node_weight`
hessian on each side. A tree is finished at `max_depth` or when no node of a layer splits
("post" pruning then removes, bottom up, the splits whose gain minus tree_complexity is
negative); training is finished after `n_trees` trees. With `center_bias`, the batches first
go to Newton steps on the bias until a step moves it by less than 0.01 (per-example mean
statistics, as above).

State (int64 [4]): finished trees, layer being grown, batches accumulated, bias centered.
Outputs: whether the ensemble is finished after the step, and whether the step used its
batch (False once finished, or for an empty batch).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.boosted_trees import prediction

__all__: list = []

FINISHED_TREES, LAYER, BATCHES, CENTERED = range(4)
STATE_SIZE = 4
_CENTERING_EPSILON = 0.01
_MIN_GAIN = 1e-12
PRUNING_MODES = ("none", "pre", "post")

TfxBoostedTreesTrainStep = define_op(
    "TfxBoostedTreesTrainStep",
    inputs=["split_feature: Ref(int32)", "split_threshold: Ref(int32)",
            "node_value: Ref(float)", "gains: Ref(float)", "bias: Ref(float)",
            "state: Ref(int64)", "grad_acc: Ref(float)", "hess_acc: Ref(float)",
            "count_acc: Ref(float)", "bias_acc: Ref(float)", "bucketized: int32",
            "gradients: float", "hessians: float", "bucket_sizes: int32"],
    outputs=["finished: bool", "trained: bool"],
    attrs=["n_batches_per_layer: int >= 1", "max_depth: int >= 1", "n_trees: int >= 1",
           "learning_rate: float", "l1: float = 0.0", "l2: float = 0.0",
           "tree_complexity: float = 0.0", "min_node_weight: float = 0.0",
           "center_bias: bool = False", "pruning_mode: string = 'none'"],
    stateful=True, differentiable=False)


@TfxBoostedTreesTrainStep.shape_fn
def _train_step_shape(*inputs):
    return [TensorShape([]), TensorShape([])]


def shrink(g, l1):
    """The l1-shrunk gradient sums."""
    return np.sign(g) * np.maximum(np.abs(g) - l1, 0.0)


def _safe_divide(num, den):
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


def score(g, h, l1, l2):
    """sum over the last axis of shrink(g)^2 / (h + l2) (0 where h + l2 is 0)."""
    s = shrink(g, l1)
    return _safe_divide(s * s, h + l2).sum(axis=-1)


def leaf_weight(g, h, l1, l2):
    """The Newton step -shrink(g) / (h + l2) of a leaf (0 where h + l2 is 0)."""
    return -_safe_divide(shrink(g, l1), h + l2)


def best_split(grad, hess, count, bucket_sizes, l1, l2, min_node_weight):
    """(gain, feature, threshold, left (G, H), right (G, H)) of the best split of one node
    from its [features, buckets, dim] statistics, or None when no split is valid."""
    total_g = grad[0].sum(axis=0)
    total_h = hess[0].sum(axis=0)
    total_c = count[0].sum()
    left_g = np.cumsum(grad, axis=1)[:, :-1]
    left_h = np.cumsum(hess, axis=1)[:, :-1]
    left_c = np.cumsum(count, axis=1)[:, :-1]
    right_g, right_h, right_c = total_g - left_g, total_h - left_h, total_c - left_c
    thresholds = np.arange(grad.shape[1] - 1)[None, :]
    valid = (thresholds < (bucket_sizes[:, None] - 1)) & (left_c > 0) & (right_c > 0) & \
        (left_h.sum(axis=-1) >= min_node_weight) & (right_h.sum(axis=-1) >= min_node_weight)
    if not valid.any():
        return None
    gains = score(left_g, left_h, l1, l2) + score(right_g, right_h, l1, l2) - \
        score(total_g, total_h, l1, l2)
    gains = np.where(valid, gains, -np.inf)
    feature, threshold = np.unravel_index(int(np.argmax(gains)), gains.shape)
    return (float(gains[feature, threshold]), int(feature), int(threshold),
            (left_g[feature, threshold], left_h[feature, threshold]),
            (right_g[feature, threshold], right_h[feature, threshold]))


def prune(split_feature, node_value, gains):
    """Post-pruning of one tree (in place): bottom up, a split of two leaves whose gain is
    negative is removed."""
    for node in range(len(split_feature) - 1, -1, -1):
        left, right = 2 * node + 1, 2 * node + 2
        if split_feature[node] < 0 or right >= len(split_feature):
            continue
        if split_feature[left] < 0 and split_feature[right] < 0 and gains[node] < 0:
            split_feature[node] = -1
            gains[node] = 0.0
            node_value[left] = 0.0
            node_value[right] = 0.0


def _check_inputs(bucketized, gradients, hessians, bucket_sizes, grad_acc, dim):
    if bucketized.ndim != 2 or bucketized.shape[1] != bucket_sizes.shape[0]:
        raise errors.InvalidArgumentError(None, None, f"bucketized must be [batch, "
                                          f"{bucket_sizes.shape[0]}]; got "
                                          f"{list(bucketized.shape)}")
    want = (bucketized.shape[0], dim)
    if gradients.shape != want or hessians.shape != want:
        raise errors.InvalidArgumentError(None, None, f"gradients and hessians must be "
                                          f"{list(want)}; got {list(gradients.shape)} and "
                                          f"{list(hessians.shape)}")
    if bucketized.size and (bucketized.min() < 0 or
                            (bucketized >= bucket_sizes[None, :]).any()):
        raise errors.InvalidArgumentError(None, None, "bucketized holds a bucket id outside "
                                          "[0, bucket_size) of its feature")
    if bucket_sizes.max(initial=0) > grad_acc.shape[2]:
        raise errors.InvalidArgumentError(None, None, "a bucket size exceeds the "
                                          "accumulators' bucket capacity")


class _Trainer:
    """The arrays of one train step (views of the variables' buffers) and its attrs."""

    def __init__(self, refs, attrs):
        (self.split_feature, self.split_threshold, self.node_value, self.gains, self.bias,
         self.state, self.grad_acc, self.hess_acc, self.count_acc, self.bias_acc) = \
            [ref.read() for ref in refs]
        self.__dict__.update(attrs)

    def reset(self):
        for acc in (self.grad_acc, self.hess_acc, self.count_acc, self.bias_acc):
            acc[...] = 0.0
        self.state[BATCHES] = 0

    def center(self):
        examples = self.bias_acc[2, 0]
        g = self.bias_acc[0].astype(np.float64) / examples
        h = self.bias_acc[1].astype(np.float64) / examples
        step = leaf_weight(g, h, self.l1, self.l2)
        self.bias += step.astype(np.float32)
        if np.max(np.abs(step), initial=0.0) < _CENTERING_EPSILON:
            self.state[CENTERED] = 1

    def accumulate(self, bucketized, gradients, hessians):
        tree, layer = int(self.state[FINISHED_TREES]), int(self.state[LAYER])
        nodes = prediction.leaves(bucketized, self.split_feature[tree:tree + 1],
                                  self.split_threshold[tree:tree + 1])[0]
        first = 2 ** layer - 1
        active = (nodes >= first) & (nodes < 2 * first + 1)
        local = nodes[active] - first
        buckets = bucketized[active]
        features = buckets.shape[1]
        rows = np.repeat(local, features)
        cols = np.tile(np.arange(features), len(local))
        flat = buckets.reshape(-1)
        np.add.at(self.grad_acc, (rows, cols, flat), np.repeat(gradients[active], features, 0))
        np.add.at(self.hess_acc, (rows, cols, flat), np.repeat(hessians[active], features, 0))
        np.add.at(self.count_acc, (rows, cols, flat), 1.0)

    def grow_layer(self, bucket_sizes):
        tree, layer = int(self.state[FINISHED_TREES]), int(self.state[LAYER])
        examples = float(self.bias_acc[2, 0])
        first = 2 ** layer - 1
        split_any = False
        for local in range(2 ** layer):
            node = first + local
            count = self.count_acc[local].astype(np.float64)
            if self.split_feature[tree, node] >= 0 or count[0].sum() == 0:
                continue
            if node != 0 and not self._is_live(tree, node):
                continue
            found = best_split(self.grad_acc[local].astype(np.float64) / examples,
                               self.hess_acc[local].astype(np.float64) / examples,
                               count, bucket_sizes, self.l1, self.l2, self.min_node_weight)
            if found is None:
                continue
            gain, feature, threshold, left, right = found
            net = gain - self.tree_complexity
            if gain <= _MIN_GAIN or (self.pruning_mode == "pre" and net <= 0):
                continue
            split_any = True
            self.split_feature[tree, node] = feature
            self.split_threshold[tree, node] = threshold
            self.gains[tree, node] = net if self.pruning_mode != "none" else gain
            parent = self.node_value[tree, node].astype(np.float64)
            for child, (g, h) in ((2 * node + 1, left), (2 * node + 2, right)):
                step = self.learning_rate * leaf_weight(g, h, self.l1, self.l2)
                self.node_value[tree, child] = (parent + step).astype(np.float32)
        if split_any and layer + 1 < self.max_depth:
            self.state[LAYER] = layer + 1
            return
        if self.pruning_mode == "post":
            prune(self.split_feature[tree], self.node_value[tree], self.gains[tree])
        self.state[FINISHED_TREES] = tree + 1
        self.state[LAYER] = 0

    def _is_live(self, tree, node):
        parent = (node - 1) // 2
        return self.split_feature[tree, parent] >= 0


@TfxBoostedTreesTrainStep.kernel
def _train_step_kernel(split_feature, split_threshold, node_value, gains, bias, state,
                       grad_acc, hess_acc, count_acc, bias_acc, bucketized, gradients,
                       hessians, bucket_sizes, *, n_batches_per_layer, max_depth, n_trees,
                       learning_rate, l1, l2, tree_complexity, min_node_weight, center_bias,
                       pruning_mode):
    mode = pruning_mode.decode() if isinstance(pruning_mode, bytes) else pruning_mode
    if mode not in PRUNING_MODES:
        raise errors.InvalidArgumentError(None, None, f"pruning_mode must be one of "
                                          f"{PRUNING_MODES}; got {mode!r}")
    refs = (split_feature, split_threshold, node_value, gains, bias, state, grad_acc,
            hess_acc, count_acc, bias_acc)
    trainer = _Trainer(refs, dict(
        max_depth=max_depth, learning_rate=learning_rate, l1=l1, l2=l2,
        tree_complexity=tree_complexity, min_node_weight=min_node_weight, pruning_mode=mode))
    if trainer.split_feature.shape[1] != 2 ** (max_depth + 1) - 1:
        raise errors.InvalidArgumentError(None, None, f"the ensemble holds "
                                          f"{trainer.split_feature.shape[1]} nodes per tree; "
                                          f"max_depth {max_depth} needs "
                                          f"{2 ** (max_depth + 1) - 1}")
    if trainer.state[FINISHED_TREES] >= n_trees:
        return np.bool_(True), np.bool_(False)
    _check_inputs(bucketized, gradients, hessians, bucket_sizes, trainer.grad_acc,
                  trainer.bias.shape[0])
    if bucketized.shape[0] == 0:
        return np.bool_(False), np.bool_(False)
    centering = center_bias and not trainer.state[CENTERED]
    trainer.bias_acc[0] += gradients.sum(axis=0)
    trainer.bias_acc[1] += hessians.sum(axis=0)
    trainer.bias_acc[2] += bucketized.shape[0]
    if not centering:
        trainer.accumulate(bucketized, gradients, hessians)
    trainer.state[BATCHES] += 1
    if trainer.state[BATCHES] >= n_batches_per_layer:
        if centering:
            trainer.center()
        else:
            trainer.grow_layer(bucket_sizes)
        trainer.reset()
    return np.bool_(trainer.state[FINISHED_TREES] >= n_trees), np.bool_(True)
