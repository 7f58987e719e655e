"""`tf.estimator.LinearClassifier` and `LinearRegressor`: a linear model of feature columns.

The logits are `tf.feature_column.linear_model` under variable scope `linear` (variables
`linear/linear_model/<column>/weights` and `linear/linear_model/bias_weights`), trained by
FTRL with learning rate `min(0.2, 1/sqrt(number of columns))` unless `optimizer` says
otherwise.
"""

from __future__ import annotations

import math

from tensorflux import losses as losses_lib
from tensorflux.estimator.canned import head as head_lib
from tensorflux.estimator.canned.optimizers import get_optimizer_instance
from tensorflux.estimator.estimator import Estimator
from tensorflux.feature_column.linear import linear_model
from tensorflux.ops.state import variable_scope
from tensorflux.train import training_util

__all__ = ["LinearClassifier", "LinearRegressor", "LinearEstimator"]


def _check_columns(feature_columns):
    columns = tuple(feature_columns or ())
    if not columns:
        raise ValueError("feature_columns must not be empty.")
    return columns


def linear_learning_rate(num_columns: int) -> float:
    """TF's default FTRL learning rate for a linear model of `num_columns` columns."""
    return min(0.2, 1.0 / math.sqrt(num_columns))


def linear_logits(features, feature_columns, units, sparse_combiner="sum", partitioner=None):
    """The `[batch, units]` logits of the linear part (scope `linear`)."""
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: "
                         f"{type(features)}")
    with variable_scope.variable_scope("linear", partitioner=partitioner):
        return linear_model(features, feature_columns, units=units,
                            sparse_combiner=sparse_combiner)


def _linear_model_fn(features, labels, mode, head, feature_columns, optimizer, partitioner,
                     sparse_combiner):
    optimizer = get_optimizer_instance(optimizer, linear_learning_rate(len(feature_columns)))
    logits = linear_logits(features, feature_columns, head.logits_dimension, sparse_combiner,
                           partitioner)

    def train_op_fn(loss):
        return optimizer.minimize(loss, global_step=training_util.get_global_step())

    return head.create_estimator_spec(features, mode, logits, labels, train_op_fn=train_op_fn)


class LinearClassifier(Estimator):
    """A linear classifier (logistic regression for n_classes=2, softmax otherwise).

    Raises:
        ValueError: empty feature_columns, n_classes < 2, a bad label_vocabulary or optimizer.
    """

    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, optimizer="Ftrl", config=None, partitioner=None,
                 warm_start_from=None, loss_reduction=losses_lib.Reduction.SUM,
                 sparse_combiner="sum"):
        columns = _check_columns(feature_columns)
        head = head_lib.ClassificationHead(n_classes, weight_column, label_vocabulary,
                                           loss_reduction)

        def _model_fn(features, labels, mode, config):
            return _linear_model_fn(features, labels, mode, head, columns, optimizer,
                                    partitioner, sparse_combiner)

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)


class LinearRegressor(Estimator):
    """A linear regressor of `label_dimension` targets (mean squared error).

    Raises:
        ValueError: empty feature_columns, label_dimension < 1, a bad optimizer.
    """

    def __init__(self, feature_columns, model_dir=None, label_dimension=1, weight_column=None,
                 optimizer="Ftrl", config=None, partitioner=None, warm_start_from=None,
                 loss_reduction=losses_lib.Reduction.SUM, sparse_combiner="sum"):
        columns = _check_columns(feature_columns)
        head = head_lib.RegressionHead(label_dimension, weight_column, loss_reduction)

        def _model_fn(features, labels, mode, config):
            return _linear_model_fn(features, labels, mode, head, columns, optimizer,
                                    partitioner, sparse_combiner)

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)


class LinearEstimator(Estimator):
    """A linear model of feature columns with a user-given head (e.g. a
    `tf.estimator.MultiClassHead`).

    Raises:
        ValueError: empty feature_columns or a bad optimizer.
    """

    def __init__(self, head, feature_columns, model_dir=None, optimizer="Ftrl", config=None,
                 partitioner=None, sparse_combiner="sum", warm_start_from=None):
        columns = _check_columns(feature_columns)

        def _model_fn(features, labels, mode, config):
            return _linear_model_fn(features, labels, mode, head, columns, optimizer,
                                    partitioner, sparse_combiner)

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)
