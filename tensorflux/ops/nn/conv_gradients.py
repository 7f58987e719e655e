"""Gradients of the convolution, pooling and normalization ops.

A convolution's input gradient is its BackpropInput op and its filter gradient its
BackpropFilter op; each backprop op is in turn differentiated into the other two, so
conv2d_transpose trains and second derivatives work. FusedBatchNormGrad is differentiated
through the equivalent composite graph, as TensorFlow does.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import conv as conv_ops
from tensorflux.ops.nn import normalization as nn_norm_ops
from tensorflux.ops.nn import pooling as pooling_ops
from tensorflux.ops.nn.gradients import is_zero

_WINDOW_ATTRS = ("strides", "padding", "explicit_paddings", "data_format", "dilations")


def _attrs(op, names=_WINDOW_ATTRS) -> dict:
    return {name: op.get_attr(name) for name in names}


def _conv_attrs(op) -> dict:
    return _attrs(op, _WINDOW_ATTRS + ("use_cudnn_on_gpu",))


def _shape(tensor):
    return array_ops.shape(tensor, out_type=dtypes.int32)


# -- Conv2D ---------------------------------------------------------------------------------


@conv_ops.Conv2D.gradient
def _conv2d_grad(op, grad):
    x, w = op.inputs
    attrs = _conv_attrs(op)
    return (conv_ops.Conv2DBackpropInput(_shape(x), w, grad, **attrs),
            conv_ops.Conv2DBackpropFilter(x, _shape(w), grad, **attrs))


@conv_ops.Conv2DBackpropInput.gradient
def _conv2d_backprop_input_grad(op, grad):
    _, w, out_backprop = op.inputs
    attrs = _conv_attrs(op)
    return (None, conv_ops.Conv2DBackpropFilter(grad, _shape(w), out_backprop, **attrs),
            conv_ops.Conv2D(grad, w, **attrs))


@conv_ops.Conv2DBackpropFilter.gradient
def _conv2d_backprop_filter_grad(op, grad):
    x, _, out_backprop = op.inputs
    attrs = _conv_attrs(op)
    return (conv_ops.Conv2DBackpropInput(_shape(x), grad, out_backprop, **attrs), None,
            conv_ops.Conv2D(x, grad, **attrs))


@conv_ops.DepthwiseConv2dNative.gradient
def _depthwise_grad(op, grad):
    x, w = op.inputs
    attrs = _attrs(op)
    return (conv_ops.DepthwiseConv2dNativeBackpropInput(_shape(x), w, grad, **attrs),
            conv_ops.DepthwiseConv2dNativeBackpropFilter(x, _shape(w), grad, **attrs))


@conv_ops.DepthwiseConv2dNativeBackpropInput.gradient
def _depthwise_backprop_input_grad(op, grad):
    _, w, out_backprop = op.inputs
    attrs = _attrs(op)
    return (None,
            conv_ops.DepthwiseConv2dNativeBackpropFilter(grad, _shape(w), out_backprop,
                                                         **attrs),
            conv_ops.DepthwiseConv2dNative(grad, w, **attrs))


@conv_ops.DepthwiseConv2dNativeBackpropFilter.gradient
def _depthwise_backprop_filter_grad(op, grad):
    x, _, out_backprop = op.inputs
    attrs = _attrs(op)
    return (conv_ops.DepthwiseConv2dNativeBackpropInput(_shape(x), grad, out_backprop,
                                                        **attrs),
            None, conv_ops.DepthwiseConv2dNative(x, grad, **attrs))


# -- pooling --------------------------------------------------------------------------------

_POOL_ATTRS = ("ksize", "strides", "padding", "data_format")


@pooling_ops.MaxPool.gradient
def _max_pool_grad(op, grad):
    attrs = _attrs(op, _POOL_ATTRS + ("explicit_paddings",))
    return pooling_ops.MaxPoolGrad(op.inputs[0], op.outputs[0], grad, **attrs)


def _lowest(dtype):
    np_dtype = np.dtype(dtype.as_numpy_dtype)
    return -np.inf if np.issubdtype(np_dtype, np.floating) else np.iinfo(np_dtype).min


@pooling_ops.MaxPoolGrad.gradient
def _max_pool_grad_grad(op, grad):
    x, y, _ = op.inputs
    attrs = _attrs(op, _POOL_ATTRS)
    if attrs["padding"] == "EXPLICIT":
        # MaxPoolGradGrad has no explicit padding: pad both operands and pool VALID instead.
        flat = list(op.get_attr("explicit_paddings"))
        pairs = [flat[i:i + 2] for i in range(0, 8, 2)]
        x = array_ops.pad(x, pairs, constant_values=_lowest(x.dtype.base_dtype))
        grad = array_ops.pad(grad, pairs)
        attrs["padding"] = "VALID"
    return (array_ops.zeros_like(op.inputs[0]), array_ops.zeros_like(y),
            pooling_ops.MaxPoolGradGrad(x, y, grad, **attrs))


@pooling_ops.MaxPoolGradGrad.gradient
def _max_pool_grad_grad_grad(op, grad):
    x, y, _ = op.inputs
    return (array_ops.zeros_like(x), array_ops.zeros_like(y),
            pooling_ops.MaxPoolGrad(x, y, grad, **_attrs(op, _POOL_ATTRS)))


@pooling_ops.AvgPool.gradient
def _avg_pool_grad(op, grad):
    return pooling_ops.AvgPoolGrad(_shape(op.inputs[0]), grad, **_attrs(op, _POOL_ATTRS))


@pooling_ops.AvgPoolGrad.gradient
def _avg_pool_grad_grad(op, grad):
    return None, pooling_ops.AvgPool(grad, **_attrs(op, _POOL_ATTRS))


# -- normalization --------------------------------------------------------------------------


@nn_norm_ops.LRN.gradient
def _lrn_grad(op, grad):
    attrs = _attrs(op, ("depth_radius", "bias", "alpha", "beta"))
    return nn_norm_ops.LRNGrad(grad, op.inputs[0], op.outputs[0], **attrs)


_BN_GRAD_OPS = {
    "FusedBatchNorm": nn_norm_ops.FusedBatchNormGrad,
    "FusedBatchNormV2": nn_norm_ops.FusedBatchNormGradV2,
    "FusedBatchNormV3": nn_norm_ops.FusedBatchNormGradV3,
}


def _fused_batch_norm_grad(op, grad_y, *unused_stat_grads):
    x, scale = op.inputs[0], op.inputs[1]
    attrs = _attrs(op, ("epsilon", "data_format", "is_training"))
    if attrs["is_training"]:
        saved = [op.outputs[3], op.outputs[4]]
    else:
        saved = [op.inputs[3], op.inputs[4]]
    if op.type == "FusedBatchNormV3":
        saved.append(op.outputs[5])
    grads = _BN_GRAD_OPS[op.type](grad_y, x, scale, *saved, **attrs)
    return grads[0], grads[1], grads[2], None, None


for _op in (nn_norm_ops.FusedBatchNorm, nn_norm_ops.FusedBatchNormV2,
            nn_norm_ops.FusedBatchNormV3):
    _op.gradient(_fused_batch_norm_grad)


def batch_norm_grad_composite(grad_y, x, scale, mean, variance, epsilon, data_format,
                              is_training):
    """(dx, dscale, doffset) of batch normalization as a differentiable graph of math ops.

    In training mode the statistics are recomputed from `x` (so they depend on it); otherwise
    `mean` and `variance` are the given population statistics.
    """
    if data_format == "NCHW":
        grad_y = array_ops.transpose(grad_y, [0, 2, 3, 1])
        x = array_ops.transpose(x, [0, 2, 3, 1])
    axes = [0, 1, 2]
    if is_training:
        mean = math_ops.reduce_mean(x, axes)
        centered = x - mean
        variance = math_ops.reduce_mean(centered * centered, axes)
    else:
        centered = x - mean
    rstd = math_ops.rsqrt(variance + epsilon)
    x_hat = centered * rstd
    d_offset = math_ops.reduce_sum(grad_y, axes)
    d_scale = math_ops.reduce_sum(grad_y * x_hat, axes)
    if is_training:
        mean_dy = math_ops.reduce_mean(grad_y, axes)
        mean_dy_xhat = math_ops.reduce_mean(grad_y * x_hat, axes)
        dx = scale * rstd * (grad_y - mean_dy - x_hat * mean_dy_xhat)
    else:
        dx = grad_y * (scale * rstd)
    if data_format == "NCHW":
        dx = array_ops.transpose(dx, [0, 3, 1, 2])
    return dx, d_scale, d_offset


def _fused_batch_norm_grad_grad(op, grad_dx, grad_dscale, grad_doffset, *unused):
    from tensorflux.ops.autodiff.gradients import gradients

    grad_y, x, scale, mean, variance = op.inputs[:5]
    outs = batch_norm_grad_composite(grad_y, x, scale, mean, variance, op.get_attr("epsilon"),
                                     op.get_attr("data_format"), op.get_attr("is_training"))
    pairs = [(o, g) for o, g in zip(outs, (grad_dx, grad_dscale, grad_doffset))
             if not is_zero(g)]
    if not pairs:
        return [None] * len(op.inputs)
    ys, grad_ys = zip(*pairs)
    d_grad_y, d_x, d_scale = gradients(list(ys), [grad_y, x, scale], grad_ys=list(grad_ys))
    return [d_grad_y, d_x, d_scale] + [None] * (len(op.inputs) - 3)


for _op in (nn_norm_ops.FusedBatchNormGrad, nn_norm_ops.FusedBatchNormGradV2,
            nn_norm_ops.FusedBatchNormGradV3):
    _op.gradient(_fused_batch_norm_grad_grad)
