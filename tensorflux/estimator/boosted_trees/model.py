"""The boosted-trees model_fn: the ensemble variables, its logits, and the train op that grows
it layer by layer (`ops/boosted_trees`).

Variables (scope "boosted_trees", not trainable, all saved in checkpoints):
    tree_split_feature / tree_split_threshold [n_trees, nodes] int32, tree_node_value
    [n_trees, nodes, logits_dim], tree_gains [n_trees, nodes], bias [logits_dim],
    state int64 [4] (finished trees, layer, batches, centered), and the TRAIN graph's
    statistics accumulators.
Gradients and hessians of the loss are taken analytically per example: sigmoid / softmax
cross entropy give `p - y` and `p (1 - p)`, squared error `2 (f - y)` and 2 (times the
example weight).
"""

from __future__ import annotations

import collections

import numpy as np

from tensorflux.estimator.boosted_trees import features as features_lib
from tensorflux.estimator.canned import head as head_lib
from tensorflux.estimator.model_fn import ModeKeys
from tensorflux.framework import dtypes
from tensorflux.framework.scopes import control_dependencies
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.boosted_trees import growing, prediction, quantiles
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.nn import core as nn_ops
from tensorflux.ops.state import initializers as init_ops
from tensorflux.ops.state import variable_scope
from tensorflux.train import training_util
from tensorflux.train.session_run_hook import SessionRunArgs, SessionRunHook

__all__ = ["TreeHParams", "boosted_trees_model_fn"]

TreeHParams = collections.namedtuple("TreeHParams", [
    "n_trees", "max_depth", "learning_rate", "l1", "l2", "tree_complexity",
    "min_node_weight", "center_bias", "pruning_mode", "quantile_sketch_epsilon"],
    defaults=(0.01,))


def num_quantiles(hparams: TreeHParams) -> int:
    """The quantiles numeric features are bucketized by: 1 / quantile_sketch_epsilon."""
    return max(1, int(1.0 / hparams.quantile_sketch_epsilon))


_SUMMARY_PER_QUANTILE = 4  # summary points kept per quantile (rank error ~ 1 / (4 Q))


def check_hparams(n_batches_per_layer, hparams: TreeHParams) -> None:
    """Raises ValueError naming the first argument out of its range (as TF 1.15)."""
    if not isinstance(n_batches_per_layer, int) or n_batches_per_layer < 1:
        raise ValueError(f"n_batches_per_layer must be a positive integer; got "
                         f"{n_batches_per_layer}.")
    if hparams.n_trees < 1:
        raise ValueError(f"n_trees must be positive; got {hparams.n_trees}.")
    if hparams.max_depth < 1:
        raise ValueError(f"max_depth must be positive; got {hparams.max_depth}.")
    if hparams.learning_rate <= 0:
        raise ValueError(f"learning_rate must be positive; got {hparams.learning_rate}.")
    for name in ("l1", "l2", "tree_complexity", "min_node_weight"):
        if getattr(hparams, name) < 0:
            label = {"l1": "l1_regularization", "l2": "l2_regularization"}.get(name, name)
            raise ValueError(f"{label} must be non-negative; got {getattr(hparams, name)}.")
    if hparams.pruning_mode not in growing.PRUNING_MODES:
        raise ValueError(f"pruning_mode must be one of {list(growing.PRUNING_MODES)}; got "
                         f"{hparams.pruning_mode!r}.")
    if hparams.pruning_mode != "none" and hparams.tree_complexity <= 0:
        raise ValueError("Tree complexity have to be positive to enable pruning.")
    if not 0 < hparams.quantile_sketch_epsilon < 1:
        raise ValueError(f"quantile_sketch_epsilon must be in (0, 1); got "
                         f"{hparams.quantile_sketch_epsilon}.")


def _variable(name, shape, dtype, value):
    return variable_scope.get_variable(
        name, shape=shape, dtype=dtype, initializer=init_ops.constant_initializer(value),
        trainable=False)


class Ensemble(collections.namedtuple("Ensemble", ["split_feature", "split_threshold",
                                                   "node_value", "gains", "bias", "state"])):
    """The ensemble's variables."""

    def logits(self, bucketized):
        return prediction.TfxBoostedTreesPredict(
            bucketized, self.split_feature, self.split_threshold, self.node_value, self.bias)


def ensemble_variables(hparams: TreeHParams, logits_dim: int) -> Ensemble:
    nodes = 2 ** (hparams.max_depth + 1) - 1
    trees = hparams.n_trees
    return Ensemble(
        _variable("tree_split_feature", [trees, nodes], dtypes.int32, -1),
        _variable("tree_split_threshold", [trees, nodes], dtypes.int32, 0),
        _variable("tree_node_value", [trees, nodes, logits_dim], dtypes.float32, 0.0),
        _variable("tree_gains", [trees, nodes], dtypes.float32, 0.0),
        _variable("bias", [logits_dim], dtypes.float32, 0.0),
        _variable("state", [growing.STATE_SIZE], dtypes.int64, 0))


Quantiles = collections.namedtuple("Quantiles", ["summary", "boundaries", "state"])


def quantile_variables(width: int, quantile_count: int) -> Quantiles:
    """The numeric features' quantile summary, bucket boundaries and [batches, ready]."""
    return Quantiles(
        _variable("quantile_summary", [width, _SUMMARY_PER_QUANTILE * quantile_count, 2],
                  dtypes.float32, 0.0),
        _variable("quantile_boundaries", [width, quantile_count + 1], dtypes.float32,
                  np.inf),
        _variable("quantile_state", [2], dtypes.int64, 0))


def _gradients_and_hessians(head, logits, labels, features):
    """Per-example gradients and diagonal hessians `[batch, logits_dim]` of the head's loss."""
    weights = head_lib._weights(features, head._weight_column)
    if isinstance(head, head_lib.RegressionHead):
        targets = math_ops.cast(head_lib._labels_2d(labels, head.logits_dimension),
                                dtypes.float32)
        grads = 2.0 * (logits - targets)
        hessians = 2.0 * array_ops.ones_like(logits)
    elif head.logits_dimension == 1:
        ids = math_ops.cast(head._label_ids(labels), dtypes.float32)
        probs = math_ops.sigmoid(logits)
        grads = probs - ids
        hessians = probs * (1.0 - probs)
    else:
        ids = array_ops.reshape(head._label_ids(labels), [-1])
        probs = nn_ops.softmax(logits)
        grads = probs - array_ops.one_hot(ids, head.logits_dimension, dtype=dtypes.float32)
        hessians = probs * (1.0 - probs)
    return grads * weights, hessians * weights


class _StopAtTreesHook(SessionRunHook):
    """Requests a stop once the ensemble has all its trees (before the first step when it had
    them before training)."""

    def __init__(self, state, n_trees):
        self._state = state
        self._n_trees = n_trees

    def after_create_session(self, session, coord):
        if session.run(self._state)[growing.FINISHED_TREES] >= self._n_trees:
            coord.request_stop()

    def before_run(self, run_context):
        return SessionRunArgs(self._state)

    def after_run(self, run_context, run_values):
        if run_values.results[growing.FINISHED_TREES] >= self._n_trees:
            run_context.request_stop()


def _train_op(ensemble, hparams, n_batches_per_layer, layout, bucketized, grads, hessians,
              quantile_state=None):
    """The train op; with numeric columns (`quantile_state`: (variables, values, weights)),
    the first `n_batches_per_layer` steps learn the bucket boundaries, then trees grow."""
    features = len(layout.bucket_sizes)
    buckets = int(layout.bucket_sizes.max())
    dim = int(ensemble.bias.shape[0])
    layer_nodes = 2 ** (hparams.max_depth - 1)
    grad_acc = _variable("grad_accumulator", [layer_nodes, features, buckets, dim],
                         dtypes.float32, 0.0)
    hess_acc = _variable("hess_accumulator", [layer_nodes, features, buckets, dim],
                         dtypes.float32, 0.0)
    count_acc = _variable("count_accumulator", [layer_nodes, features, buckets],
                          dtypes.float32, 0.0)
    bias_acc = _variable("bias_accumulator", [3, dim], dtypes.float32, 0.0)
    variables = (ensemble.split_feature, ensemble.split_threshold, ensemble.node_value,
                 ensemble.gains, ensemble.bias, ensemble.state, grad_acc, hess_acc, count_acc,
                 bias_acc)

    def grow():
        step = growing.TfxBoostedTreesTrainStep(
            *[v._ref() for v in variables], bucketized, grads, hessians,
            array_ops.constant(layout.bucket_sizes, dtypes.int32),
            n_batches_per_layer=n_batches_per_layer, max_depth=hparams.max_depth,
            n_trees=hparams.n_trees, learning_rate=float(hparams.learning_rate),
            l1=float(hparams.l1), l2=float(hparams.l2),
            tree_complexity=float(hparams.tree_complexity),
            min_node_weight=float(hparams.min_node_weight),
            center_bias=bool(hparams.center_bias), pruning_mode=hparams.pruning_mode)
        return step.finished

    if quantile_state is None:
        finished = grow()
    else:
        qvars, values, weights = quantile_state

        def learn_boundaries():
            ready = quantiles.TfxBoostedTreesQuantileStep(
                qvars.summary._ref(), qvars.boundaries._ref(), qvars.state._ref(), values,
                weights, n_batches_per_layer=n_batches_per_layer,
                num_quantiles=num_quantiles(hparams))
            return math_ops.logical_and(ready, False)  # no tree is finished by this step

        ready = math_ops.greater(qvars.state[quantiles.READY], 0)
        finished = control_flow_ops.cond(ready, grow, learn_boundaries)
    with control_dependencies([finished]):
        increment = training_util.get_global_step().assign_add(1)
    return control_flow_ops.group(increment, name="boosted_trees_train_op")


def boosted_trees_model_fn(features, labels, mode, head, columns, hparams, n_batches_per_layer,
                           explain=None):
    """The EstimatorSpec of a boosted-trees model (see the module doc).

    `explain` ("identity" / "sigmoid"), in PREDICT, adds the predictions "bias" and "dfc"
    (`[batch, num_features]` directional feature contributions).
    """
    layout = features_lib.layout(columns, num_quantiles(hparams))
    numeric = features_lib.numeric_width(columns)
    with variable_scope.variable_scope("boosted_trees"):
        qvars = quantile_variables(numeric, num_quantiles(hparams)) if numeric else None
        bucketized = features_lib.bucketize(features, columns,
                                            qvars.boundaries if qvars else None)
        ensemble = ensemble_variables(hparams, head.logits_dimension)
        logits = ensemble.logits(bucketized)
        if mode == ModeKeys.PREDICT and explain:
            bias, dfc = prediction.TfxBoostedTreesContributions(
                bucketized, ensemble.split_feature, ensemble.split_threshold,
                ensemble.node_value, ensemble.bias, link=explain)

    def train_op_fn(loss):
        del loss
        with variable_scope.variable_scope("boosted_trees"):
            grads, hessians = _gradients_and_hessians(head, logits, labels, features)
            quantile_state = None
            if qvars is not None:
                weights = array_ops.reshape(
                    head_lib._weights(features, head._weight_column), [-1]) * \
                    array_ops.ones_like(logits[:, 0])
                quantile_state = (qvars, features_lib.numeric_values(features, columns),
                                  math_ops.cast(weights, dtypes.float32))
            return _train_op(ensemble, hparams, n_batches_per_layer, layout, bucketized,
                             grads, hessians, quantile_state)

    spec = head.create_estimator_spec(features, mode, logits, labels, train_op_fn=train_op_fn)
    if mode == ModeKeys.TRAIN:
        spec = spec._replace(training_hooks=tuple(spec.training_hooks) + (
            _StopAtTreesHook(ensemble.state, hparams.n_trees),))
    if mode == ModeKeys.PREDICT and explain:
        predictions = dict(spec.predictions)
        predictions["bias"] = array_ops.reshape(bias, [-1])
        predictions["dfc"] = array_ops.reshape(dfc, [-1, len(layout.bucket_sizes)])
        spec = spec._replace(predictions=predictions)
    return spec


def feature_importances(split_feature, gains, layout, normalize=False):
    """{column name: the summed split gains of its features}, largest first.

    Raises:
        ValueError: normalize with no split in the ensemble (nothing to normalize).
    """
    totals = collections.defaultdict(float)
    for name in layout.column_names:
        totals[name] += 0.0
    used = split_feature >= 0
    for feature, gain in zip(split_feature[used], gains[used]):
        totals[layout.column_names[int(feature)]] += float(gain)
    if normalize:
        total = sum(totals.values())
        if total <= 0:
            raise ValueError("Cannot normalize feature importances: the ensemble has no "
                             "split with positive gain.")
        totals = {name: value / total for name, value in totals.items()}
    return collections.OrderedDict(sorted(totals.items(), key=lambda kv: (-kv[1], kv[0])))


def contributions_by_column(dfc: np.ndarray, layout) -> collections.OrderedDict:
    """One example's contributions summed per column, largest magnitude first."""
    totals = collections.defaultdict(float)
    for name, value in zip(layout.column_names, dfc):
        totals[name] += float(value)
    return collections.OrderedDict(sorted(totals.items(), key=lambda kv: (-abs(kv[1]), kv[0])))
