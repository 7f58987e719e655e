"""`tf.contrib.learn.models` (TF 0.12-1.x): logistic and linear regression heads of skflow-era
model_fns."""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import core as nn_ops
from tensorflux.ops.nn import functions as nn_impl
from tensorflux.ops.state import initializers as init_ops
from tensorflux.ops.state import variable_scope

__all__ = ["logistic_regression", "linear_regression"]


def _weights_and_bias(x, y, init_mean, init_stddev):
    initializer = None if init_mean is None else init_ops.random_normal_initializer(
        init_mean, init_stddev)
    width = x.shape[-1].value if hasattr(x.shape[-1], "value") else x.shape[-1]
    outputs = 1 if y.shape.ndims == 1 else y.shape[-1]
    outputs = outputs.value if hasattr(outputs, "value") else outputs
    if width is None or outputs is None:
        raise ValueError(f"x {x.shape} and y {y.shape} need static last dimensions.")
    weights = variable_scope.get_variable("weights", [width, outputs], initializer=initializer)
    bias = variable_scope.get_variable("bias", [outputs], initializer=initializer)
    return weights, bias


def logistic_regression(x, y, class_weight=None, init_mean=None, init_stddev=1.0):
    """Softmax regression of one-hot `y` on `x` (variables `logistic_regression/weights`,
    `.../bias`; Glorot uniform, or normal(init_mean, init_stddev) when init_mean is given).

    Returns:
        `(probabilities [batch, classes], mean softmax cross entropy)`.

    Raises:
        ValueError: x or y without a static last dimension.
    """
    with variable_scope.variable_scope("logistic_regression"):
        weights, bias = _weights_and_bias(x, y, init_mean, init_stddev)
        logits = math_ops.matmul(x, weights) + bias
        if class_weight is not None:
            logits = logits * class_weight
        labels = math_ops.cast(y, dtypes.float32)
        loss = math_ops.reduce_mean(nn_impl.softmax_cross_entropy_with_logits(
            labels=labels, logits=logits), name="loss")
        return nn_ops.softmax(logits, name="predictions"), loss


def linear_regression(x, y, init_mean=None, init_stddev=1.0):
    """Linear regression of `y` on `x` (variables `linear_regression/weights`, `.../bias`).

    Returns:
        `(predictions, mean squared error)`; predictions are `[batch]` for a `[batch]` y.

    Raises:
        ValueError: x or y without a static last dimension.
    """
    with variable_scope.variable_scope("linear_regression"):
        weights, bias = _weights_and_bias(x, y, init_mean, init_stddev)
        predictions = math_ops.matmul(x, weights) + bias
        target = math_ops.cast(y, dtypes.float32)
        if y.shape.ndims == 1:
            predictions = predictions[:, 0]
        loss = math_ops.reduce_mean(math_ops.square(predictions - target), name="loss")
        return predictions, loss
