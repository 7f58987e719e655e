"""`tf.estimator.DNNLinearCombinedClassifier` / `Regressor` ("wide & deep").

The logits are the sum of a linear model (`linear` scope, FTRL by default) and a network
(`dnn` scope, Adagrad by default); each optimizer updates its own part's variables and the
global step is incremented once per step.
"""

from __future__ import annotations

from tensorflux import losses as losses_lib
from tensorflux.estimator.canned import head as head_lib
from tensorflux.estimator.canned.dnn import dnn_logits
from tensorflux.estimator.canned.linear import linear_learning_rate, linear_logits
from tensorflux.estimator.canned.optimizers import get_optimizer_instance
from tensorflux.estimator.estimator import Estimator
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.scopes import control_dependencies
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.nn import activations as nn_activations
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.ops.state import variables
from tensorflux.train import training_util

__all__ = ["DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor",
           "DNNLinearCombinedEstimator"]

_DNN_LEARNING_RATE = 0.05


def _check_columns(linear_feature_columns, dnn_feature_columns, dnn_hidden_units):
    linear = tuple(linear_feature_columns or ())
    dnn = tuple(dnn_feature_columns or ())
    if not linear and not dnn:
        raise ValueError("Either linear_feature_columns or dnn_feature_columns must be "
                         "defined.")
    if dnn and not dnn_hidden_units:
        raise ValueError(f"dnn_hidden_units must be defined when dnn_feature_columns is "
                         f"specified. Given: {dnn_hidden_units}")
    return linear, dnn


def _combined_model_fn(features, labels, mode, head, linear_columns, linear_optimizer,
                       dnn_columns, dnn_optimizer, hidden_units, activation_fn, dropout,
                       input_layer_partitioner, batch_norm, sparse_combiner):
    parts = []
    if dnn_columns:
        dnn_opt = get_optimizer_instance(dnn_optimizer, _DNN_LEARNING_RATE)
        parts.append(("dnn", dnn_opt, dnn_logits(
            features, mode, dnn_columns, hidden_units, head.logits_dimension, activation_fn,
            dropout, batch_norm, input_layer_partitioner)))
    if linear_columns:
        linear_opt = get_optimizer_instance(linear_optimizer,
                                            linear_learning_rate(len(linear_columns)))
        parts.append(("linear", linear_opt, linear_logits(
            features, linear_columns, head.logits_dimension, sparse_combiner)))
    logits = parts[0][2] if len(parts) == 1 else parts[0][2] + parts[1][2]

    def train_op_fn(loss):
        graph = graph_mod.get_default_graph()
        train_ops = []
        with control_dependencies(graph.get_collection(GraphKeys.UPDATE_OPS)):
            for scope, optimizer, _ in parts:
                train_ops.append(optimizer.minimize(
                    loss, var_list=variables.trainable_variables(scope=scope + "/")))
        with control_dependencies([control_flow_ops.group(*train_ops)]):
            return state_ops.assign_add(training_util.get_global_step(), 1).op

    return head.create_estimator_spec(features, mode, logits, labels, train_op_fn=train_op_fn)


class _Combined(Estimator):
    def __init__(self, head, model_dir, linear_feature_columns, linear_optimizer,
                 dnn_feature_columns, dnn_optimizer, dnn_hidden_units, dnn_activation_fn,
                 dnn_dropout, input_layer_partitioner, config, warm_start_from, batch_norm,
                 linear_sparse_combiner):
        linear, dnn = _check_columns(linear_feature_columns, dnn_feature_columns,
                                     dnn_hidden_units)
        hidden = tuple(int(u) for u in dnn_hidden_units or ())

        def _model_fn(features, labels, mode, config):
            return _combined_model_fn(features, labels, mode, head, linear, linear_optimizer,
                                      dnn, dnn_optimizer, hidden, dnn_activation_fn,
                                      dnn_dropout, input_layer_partitioner, batch_norm,
                                      linear_sparse_combiner)

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)


class DNNLinearCombinedClassifier(_Combined):
    """A wide & deep classifier.

    Raises:
        ValueError: neither part has feature columns, or the deep part has no hidden units.
    """

    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl",
                 dnn_feature_columns=None, dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=nn_activations.relu, dnn_dropout=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, input_layer_partitioner=None,
                 config=None, warm_start_from=None, loss_reduction=losses_lib.Reduction.SUM,
                 batch_norm=False, linear_sparse_combiner="sum"):
        head = head_lib.ClassificationHead(n_classes, weight_column, label_vocabulary,
                                           loss_reduction)
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer,
                         dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                         dnn_activation_fn, dnn_dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm, linear_sparse_combiner)


class DNNLinearCombinedRegressor(_Combined):
    """A wide & deep regressor.

    Raises:
        ValueError: neither part has feature columns, or the deep part has no hidden units.
    """

    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl",
                 dnn_feature_columns=None, dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=nn_activations.relu, dnn_dropout=None, label_dimension=1,
                 weight_column=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None, loss_reduction=losses_lib.Reduction.SUM,
                 batch_norm=False, linear_sparse_combiner="sum"):
        head = head_lib.RegressionHead(label_dimension, weight_column, loss_reduction)
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer,
                         dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                         dnn_activation_fn, dnn_dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm, linear_sparse_combiner)


class DNNLinearCombinedEstimator(_Combined):
    """Wide & deep with a user-given head.

    Raises:
        ValueError: neither part has feature columns, or the deep part has no hidden units.
    """

    def __init__(self, head, model_dir=None, linear_feature_columns=None,
                 linear_optimizer="Ftrl", dnn_feature_columns=None, dnn_optimizer="Adagrad",
                 dnn_hidden_units=None, dnn_activation_fn=nn_activations.relu, dnn_dropout=None,
                 input_layer_partitioner=None, config=None, warm_start_from=None,
                 batch_norm=False, linear_sparse_combiner="sum"):
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer,
                         dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                         dnn_activation_fn, dnn_dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm, linear_sparse_combiner)
