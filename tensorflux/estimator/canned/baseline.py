"""`tf.estimator.BaselineClassifier` and `BaselineRegressor`: predict from the labels alone.

The logits are one learned bias per class (or target), `baseline/bias`, the same for every
example: a classifier learns the log-odds of the class prior, a regressor the label mean.
Trained by FTRL with learning rate 0.3 unless `optimizer` says otherwise.
"""

from __future__ import annotations

from tensorflux import losses as losses_lib
from tensorflux.estimator.canned import head as head_lib
from tensorflux.estimator.canned.optimizers import get_optimizer_instance
from tensorflux.estimator.estimator import Estimator
from tensorflux.framework import dtypes
from tensorflux.framework.graph import Tensor
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.ops.array import padding as pad_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.array.concat_split import stack
from tensorflux.ops.math import casting as cast_ops
from tensorflux.ops.state import initializers as init_ops
from tensorflux.ops.state import variable_scope
from tensorflux.train import training_util

__all__ = ["BaselineClassifier", "BaselineRegressor", "BaselineEstimator"]

_LEARNING_RATE = 0.3


def _batch_size(features, weight_column):
    if isinstance(features, Tensor):
        return shape_ops.shape(features)[0]
    if not isinstance(features, dict) or not features:
        raise ValueError(f"features should be a Tensor or a non-empty dict of Tensors; got "
                         f"{features}")
    key = weight_column if isinstance(weight_column, str) else getattr(weight_column, "key",
                                                                        None)
    value = features[key] if key in features else features[sorted(features)[0]]
    if isinstance(value, SparseTensor):
        return value.dense_shape[0]
    return shape_ops.shape(value)[0]


def _baseline_model_fn(features, labels, mode, head, optimizer, weight_column):
    optimizer = get_optimizer_instance(optimizer, _LEARNING_RATE)
    with variable_scope.variable_scope("baseline"):
        bias = variable_scope.get_variable("bias", shape=[head.logits_dimension],
                                           dtype=dtypes.float32,
                                           initializer=init_ops.zeros_initializer())
        batch = _batch_size(features, weight_column)
        batch = cast_ops.cast(batch, dtypes.int32)
        logits = pad_ops.tile(shape_ops.expand_dims(bias, 0), stack([batch, 1]))

    def train_op_fn(loss):
        return optimizer.minimize(loss, global_step=training_util.get_global_step())

    return head.create_estimator_spec(features, mode, logits, labels, train_op_fn=train_op_fn)


class BaselineClassifier(Estimator):
    """A classifier predicting the class prior learned from the labels.

    Raises:
        ValueError: n_classes < 2 or a bad label_vocabulary.
    """

    def __init__(self, model_dir=None, n_classes=2, weight_column=None, label_vocabulary=None,
                 optimizer="Ftrl", config=None, loss_reduction=losses_lib.Reduction.SUM):
        head = head_lib.ClassificationHead(n_classes, weight_column, label_vocabulary,
                                           loss_reduction)

        def _model_fn(features, labels, mode, config):
            return _baseline_model_fn(features, labels, mode, head, optimizer, weight_column)

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config)


class BaselineRegressor(Estimator):
    """A regressor predicting the (weighted) mean label.

    Raises:
        ValueError: label_dimension < 1.
    """

    def __init__(self, model_dir=None, label_dimension=1, weight_column=None,
                 optimizer="Ftrl", config=None, loss_reduction=losses_lib.Reduction.SUM):
        head = head_lib.RegressionHead(label_dimension, weight_column, loss_reduction)

        def _model_fn(features, labels, mode, config):
            return _baseline_model_fn(features, labels, mode, head, optimizer, weight_column)

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config)


class BaselineEstimator(Estimator):
    """Learned per-logit biases with a user-given head."""

    def __init__(self, head, model_dir=None, optimizer="Ftrl", config=None):
        def _model_fn(features, labels, mode, config):
            return _baseline_model_fn(features, labels, mode, head, optimizer,
                                      getattr(head, "_weight_column", None))

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config)
