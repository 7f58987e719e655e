"""`tf.estimator.DNNClassifier` and `DNNRegressor`: a feed-forward network of feature columns.

The input is `input_layer` of the feature columns (scope `dnn/input_from_feature_columns`),
then one dense layer per `hidden_units` entry (`dnn/hiddenlayer_<i>`, ReLU by default, Glorot
uniform kernels, optional dropout and batch normalization while training) and the logits layer
`dnn/logits`. Trained by Adagrad with learning rate 0.05 unless `optimizer` says otherwise.
"""

from __future__ import annotations

from tensorflux import losses as losses_lib
from tensorflux.estimator.canned import head as head_lib
from tensorflux.estimator.canned.optimizers import get_optimizer_instance
from tensorflux.estimator.estimator import Estimator
from tensorflux.estimator.model_fn import ModeKeys
from tensorflux.feature_column.dense import input_layer
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.scopes import control_dependencies
from tensorflux.layers import core as core_layers
from tensorflux.layers import normalization
from tensorflux.ops.nn import activations
from tensorflux.ops.state import initializers as init_ops
from tensorflux.ops.state import variable_scope
from tensorflux.train import training_util

__all__ = ["DNNClassifier", "DNNRegressor", "DNNEstimator"]

_LEARNING_RATE = 0.05


def _check_args(hidden_units, feature_columns):
    if not hidden_units:
        raise ValueError("hidden_units must be a non-empty list of layer sizes.")
    if any(int(units) < 1 for units in hidden_units):
        raise ValueError(f"hidden_units must be positive; got {list(hidden_units)}.")
    columns = tuple(feature_columns or ())
    if not columns:
        raise ValueError("feature_columns must not be empty.")
    return tuple(int(u) for u in hidden_units), columns


def dnn_logits(features, mode, feature_columns, hidden_units, units, activation_fn=activations.relu,
               dropout=None, batch_norm=False, input_layer_partitioner=None):
    """The `[batch, units]` logits of the network (scope `dnn`)."""
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: "
                         f"{type(features)}")
    training = mode == ModeKeys.TRAIN
    with variable_scope.variable_scope("dnn"):
        with variable_scope.variable_scope("input_from_feature_columns",
                                           partitioner=input_layer_partitioner):
            net = input_layer(features, feature_columns)
        for index, width in enumerate(hidden_units):
            net = core_layers.dense(net, width, activation=activation_fn,
                                    kernel_initializer=init_ops.glorot_uniform_initializer(),
                                    name=f"hiddenlayer_{index}")
            if dropout is not None and training:
                net = core_layers.dropout(net, rate=dropout, training=True)
            if batch_norm:
                net = normalization.batch_normalization(net, momentum=0.999, training=training,
                                                        name=f"batchnorm_{index}")
        return core_layers.dense(net, units, activation=None,
                                 kernel_initializer=init_ops.glorot_uniform_initializer(),
                                 name="logits")


def _dnn_model_fn(features, labels, mode, head, hidden_units, feature_columns, optimizer,
                  activation_fn, dropout, input_layer_partitioner, batch_norm):
    optimizer = get_optimizer_instance(optimizer, _LEARNING_RATE)
    logits = dnn_logits(features, mode, feature_columns, hidden_units, head.logits_dimension,
                        activation_fn, dropout, batch_norm, input_layer_partitioner)

    def train_op_fn(loss):
        update_ops = graph_mod.get_default_graph().get_collection(GraphKeys.UPDATE_OPS)
        with control_dependencies(update_ops):
            return optimizer.minimize(loss, global_step=training_util.get_global_step())

    return head.create_estimator_spec(features, mode, logits, labels, train_op_fn=train_op_fn)


class DNNClassifier(Estimator):
    """A feed-forward classifier.

    Raises:
        ValueError: empty hidden_units or feature_columns, n_classes < 2, a bad
            label_vocabulary or optimizer.
    """

    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, optimizer="Adagrad",
                 activation_fn=activations.relu, dropout=None, input_layer_partitioner=None,
                 config=None, warm_start_from=None, loss_reduction=losses_lib.Reduction.SUM,
                 batch_norm=False):
        hidden_units, columns = _check_args(hidden_units, feature_columns)
        head = head_lib.ClassificationHead(n_classes, weight_column, label_vocabulary,
                                           loss_reduction)

        def _model_fn(features, labels, mode, config):
            return _dnn_model_fn(features, labels, mode, head, hidden_units, columns,
                                 optimizer, activation_fn, dropout, input_layer_partitioner,
                                 batch_norm)

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)


class DNNRegressor(Estimator):
    """A feed-forward regressor of `label_dimension` targets.

    Raises:
        ValueError: empty hidden_units or feature_columns, label_dimension < 1, a bad
            optimizer.
    """

    def __init__(self, hidden_units, feature_columns, model_dir=None, label_dimension=1,
                 weight_column=None, optimizer="Adagrad", activation_fn=activations.relu,
                 dropout=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None, loss_reduction=losses_lib.Reduction.SUM,
                 batch_norm=False):
        hidden_units, columns = _check_args(hidden_units, feature_columns)
        head = head_lib.RegressionHead(label_dimension, weight_column, loss_reduction)

        def _model_fn(features, labels, mode, config):
            return _dnn_model_fn(features, labels, mode, head, hidden_units, columns,
                                 optimizer, activation_fn, dropout, input_layer_partitioner,
                                 batch_norm)

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)


class DNNEstimator(Estimator):
    """A feed-forward network with a user-given head.

    Raises:
        ValueError: empty hidden_units or feature_columns, or a bad optimizer.
    """

    def __init__(self, head, hidden_units, feature_columns, model_dir=None,
                 optimizer="Adagrad", activation_fn=activations.relu, dropout=None,
                 input_layer_partitioner=None, config=None, warm_start_from=None,
                 batch_norm=False):
        hidden_units, columns = _check_args(hidden_units, feature_columns)

        def _model_fn(features, labels, mode, config):
            return _dnn_model_fn(features, labels, mode, head, hidden_units, columns,
                                 optimizer, activation_fn, dropout, input_layer_partitioner,
                                 batch_norm)

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)
