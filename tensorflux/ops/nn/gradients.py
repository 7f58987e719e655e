"""Gradients of the activation, softmax, cross-entropy, BiasAdd, L2Loss and TopK ops.

Each function receives the forward op and one gradient per output and returns one gradient
(or None) per input, building graph with the public wrappers. Convolution, pooling and
normalization gradients are in `conv_grad.py`.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.tensor_conversion import constant_value
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.math.broadcast_gradient import unbroadcast
from tensorflux.ops.nn import core as nn_ops


def is_zero(tensor) -> bool:
    """True when `tensor` is None or known to be all zeros (e.g. a filled-in output grad)."""
    if tensor is None:
        return True
    if tensor.op.type in ("ZerosLike", "Zeros"):
        return True
    if tensor.op.type == "Fill":
        # NOTE: large `tf.zeros` are Fill ops, too big for constant_value to evaluate.
        fill_value = constant_value(tensor.op.inputs[1])
        return fill_value is not None and not np.any(fill_value)
    value = constant_value(tensor)
    return value is not None and not np.any(value)


# -- activations ----------------------------------------------------------------------------


@nn_ops.Relu.gradient
def _relu_grad(op, grad):
    return nn_ops.ReluGrad(grad, op.outputs[0])


@nn_ops.Relu6.gradient
def _relu6_grad(op, grad):
    return nn_ops.Relu6Grad(grad, op.inputs[0])


@nn_ops.Elu.gradient
def _elu_grad(op, grad):
    return nn_ops.EluGrad(grad, op.outputs[0])


@nn_ops.Selu.gradient
def _selu_grad(op, grad):
    return nn_ops.SeluGrad(grad, op.outputs[0])


@nn_ops.LeakyRelu.gradient
def _leaky_relu_grad(op, grad):
    return nn_ops.LeakyReluGrad(grad, op.inputs[0], alpha=op.get_attr("alpha"))


@nn_ops.Softplus.gradient
def _softplus_grad(op, grad):
    return nn_ops.SoftplusGrad(grad, op.inputs[0])


@nn_ops.Softsign.gradient
def _softsign_grad(op, grad):
    return nn_ops.SoftsignGrad(grad, op.inputs[0])


# The gradient ops are linear in `gradients`; their second input only gates or scales it.


@nn_ops.ReluGrad.gradient
def _relu_grad_grad(op, grad):
    features = op.inputs[1]
    return nn_ops.ReluGrad(grad, features), array_ops.zeros_like(features)


@nn_ops.Relu6Grad.gradient
def _relu6_grad_grad(op, grad):
    features = op.inputs[1]
    return nn_ops.Relu6Grad(grad, features), array_ops.zeros_like(features)


@nn_ops.LeakyReluGrad.gradient
def _leaky_relu_grad_grad(op, grad):
    features = op.inputs[1]
    return (nn_ops.LeakyReluGrad(grad, features, alpha=op.get_attr("alpha")),
            array_ops.zeros_like(features))


def _negative_part_grad(op, grad):
    g, y = op.inputs
    return math_ops.where(math_ops.less(y, array_ops.zeros_like(y)), grad * g,
                           array_ops.zeros_like(y))


@nn_ops.EluGrad.gradient
def _elu_grad_grad(op, grad):
    return nn_ops.EluGrad(grad, op.inputs[1]), _negative_part_grad(op, grad)


@nn_ops.SeluGrad.gradient
def _selu_grad_grad(op, grad):
    return nn_ops.SeluGrad(grad, op.inputs[1]), _negative_part_grad(op, grad)


@nn_ops.SoftplusGrad.gradient
def _softplus_grad_grad(op, grad):
    g, x = op.inputs
    s = math_ops.sigmoid(x)
    return nn_ops.SoftplusGrad(grad, x), grad * g * s * (1 - s)


@nn_ops.SoftsignGrad.gradient
def _softsign_grad_grad(op, grad):
    g, x = op.inputs
    denom = 1 + math_ops.abs(x)
    return nn_ops.SoftsignGrad(grad, x), grad * g * -2 * math_ops.sign(x) / (denom * denom * denom)


# -- softmax and cross entropy --------------------------------------------------------------


@nn_ops.Softmax.gradient
def _softmax_grad(op, grad):
    y = op.outputs[0]
    return (grad - math_ops.reduce_sum(grad * y, -1, keepdims=True)) * y


@nn_ops.LogSoftmax.gradient
def _log_softmax_grad(op, grad):
    y = op.outputs[0]
    return grad - math_ops.reduce_sum(grad, -1, keepdims=True) * math_ops.exp(y)


def _softmax_second_order(logits, grad_grad):
    """The logits gradient coming from the `backprop` (= softmax - labels) output."""
    probs = nn_ops.Softmax(logits)
    return (grad_grad - math_ops.reduce_sum(grad_grad * probs, -1, keepdims=True)) * probs


@nn_ops.SoftmaxCrossEntropyWithLogits.gradient
def _softmax_xent_grad(op, grad_loss, grad_backprop):
    logits, labels = op.inputs
    scale = array_ops.expand_dims(grad_loss, -1)
    d_logits = scale * op.outputs[1]
    d_labels = scale * -nn_ops.LogSoftmax(logits)
    if not is_zero(grad_backprop):
        d_logits += _softmax_second_order(logits, grad_backprop)
        d_labels -= grad_backprop
    return unbroadcast(d_logits, logits), unbroadcast(d_labels, labels)


@nn_ops.SparseSoftmaxCrossEntropyWithLogits.gradient
def _sparse_softmax_xent_grad(op, grad_loss, grad_backprop):
    logits = op.inputs[0]
    d_logits = array_ops.expand_dims(grad_loss, -1) * op.outputs[1]
    if not is_zero(grad_backprop):
        d_logits += _softmax_second_order(logits, grad_backprop)
    return d_logits, None


# -- BiasAdd, L2Loss, TopK ------------------------------------------------------------------


@nn_ops.BiasAdd.gradient
def _bias_add_grad(op, grad):
    return grad, nn_ops.BiasAddGrad(grad, data_format=op.get_attr("data_format"))


@nn_ops.BiasAddGrad.gradient
def _bias_add_grad_grad(op, grad):
    out_backprop = op.inputs[0]
    return nn_ops.BiasAdd(array_ops.zeros_like(out_backprop), grad,
                          data_format=op.get_attr("data_format"))


@nn_ops.L2Loss.gradient
def _l2_loss_grad(op, grad):
    return op.inputs[0] * grad


@nn_ops.TopKV2.gradient
def _top_k_grad(op, grad_values, grad_indices):
    """Scatters the values' gradient back to the positions the indices came from."""
    x = op.inputs[0]
    indices = math_ops.cast(op.outputs[1], dtypes.int64)
    in_shape = array_ops.shape(x, out_type=dtypes.int64)
    in_last = in_shape[-1]
    k = array_ops.shape(indices, out_type=dtypes.int64)[-1]
    rows = math_ops.reduce_prod(in_shape[:-1])
    offsets = math_ops.range(rows, dtype=dtypes.int64) * in_last
    flat = array_ops.reshape(array_ops.reshape(indices, array_ops.stack([rows, k]))
                             + array_ops.expand_dims(offsets, -1), [-1, 1])
    total = array_ops.reshape(rows * in_last, [1])
    scattered = array_ops.scatter_nd(flat, array_ops.reshape(grad_values, [-1]), total)
    return array_ops.reshape(scattered, in_shape), None
