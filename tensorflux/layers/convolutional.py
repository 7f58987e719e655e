"""`tf.layers`: Conv1D, Conv2DTranspose, SeparableConv1D/2D, 1-D pooling (TF1 classes and
functions).

Variables are named and shaped as in TF1 so checkpoints move between the systems:
Conv1D `kernel [k, in, filters]`; Conv2DTranspose `kernel [kh, kw, filters, in]`;
SeparableConv2D `depthwise_kernel [kh, kw, in, depth_multiplier]` and `pointwise_kernel
[1, 1, in * depth_multiplier, filters]`; SeparableConv1D the same without the first unit
dimension; every layer with `use_bias` a `bias [filters]`. 1-D layers run the 2-D ops on an
input with a unit dimension added (`ExpandDims` ... `Squeeze`), as TensorFlow does.
"""

from __future__ import annotations

from tensorflux.layers.core import (
    _Conv,
    _ConvTranspose,
    _full,
    _layer_call,
    _Pooling,
)
from tensorflux.ops import array as array_ops
from tensorflux.ops.nn import conv as nn_conv
from tensorflux.ops.nn import conv1d as nn_conv1d
from tensorflux.ops.nn import pooling as nn_pooling

__all__ = ["Conv1D", "conv1d", "Conv2DTranspose", "conv2d_transpose", "SeparableConv1D",
           "separable_conv1d", "SeparableConv2D", "separable_conv2d", "MaxPooling1D",
           "max_pooling1d", "AveragePooling1D", "average_pooling1d"]


class Conv1D(_Conv):
    """1-D convolution layer (temporal convolution); `padding="causal"` pads on the left."""

    _default_name = "conv1d"
    _rank = 1
    _lowercase_padding = True
    _allow_causal = True

    def call(self, inputs):
        padding = self.padding
        if padding == "causal":
            left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            pads = [[0, 0], [left, 0], [0, 0]] if self.data_format == "NHWC" else \
                [[0, 0], [0, 0], [left, 0]]
            inputs = array_ops.pad(inputs, pads)
            padding = "valid"
        outputs = nn_conv1d.conv1d(inputs, self.kernel, stride=self.strides[0],
                                   padding=padding.upper(),
                                   data_format="NWC" if self.data_format == "NHWC" else "NCW",
                                   dilations=self.dilation_rate[0])
        return self._bias_and_activation(outputs)


class Conv2DTranspose(_ConvTranspose):
    """Transposed 2-D convolution ("deconvolution"): output size `in * stride` for "same",
    `in * stride + max(kernel - stride, 0)` for "valid"."""

    _default_name = "conv2d_transpose"
    _op = staticmethod(nn_conv.conv2d_transpose)
    _lowercase_padding = True


class SeparableConv2D(_Conv):
    """Depthwise 2-D convolution (`depth_multiplier` filters per input channel) followed by a
    1x1 convolution to `filters` channels."""

    _default_name = "separable_conv2d"
    _lowercase_padding = True

    def __init__(self, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, depth_multiplier=1,
                 activation=None, use_bias=True, depthwise_initializer=None,
                 pointwise_initializer=None, bias_initializer=None, depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                 trainable=True, name=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         activation, use_bias, bias_initializer=bias_initializer,
                         bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer, trainable=trainable,
                         name=name, **kwargs)
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer = depthwise_initializer
        self.pointwise_initializer = pointwise_initializer
        self.depthwise_regularizer = depthwise_regularizer
        self.pointwise_regularizer = pointwise_regularizer

    def build(self, input_shape):
        channels = self._channels(input_shape)
        self.depthwise_kernel = self.add_variable(
            "depthwise_kernel", [*self.kernel_size, channels, self.depth_multiplier],
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer)
        self.pointwise_kernel = self.add_variable(
            "pointwise_kernel", [1] * self._rank + [channels * self.depth_multiplier,
                                                    self.filters],
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer)
        self._add_bias()
        self.built = True

    def call(self, inputs):
        outputs = nn_conv.separable_conv2d(inputs, self.depthwise_kernel, self.pointwise_kernel,
                                           strides=_full(self.strides, self.data_format),
                                           padding=self.padding.upper(),
                                           rate=list(self.dilation_rate),
                                           data_format=self.data_format)
        return self._bias_and_activation(outputs)


class SeparableConv1D(SeparableConv2D):
    """Depthwise 1-D convolution followed by a pointwise (size 1) convolution."""

    _default_name = "separable_conv1d"
    _rank = 1

    def call(self, inputs):
        axis = 1 if self.data_format == "NHWC" else 2
        inputs = array_ops.expand_dims(inputs, axis)
        depthwise = array_ops.expand_dims(self.depthwise_kernel, 0)
        pointwise = array_ops.expand_dims(self.pointwise_kernel, 0)
        outputs = nn_conv.separable_conv2d(inputs, depthwise, pointwise,
                                           strides=_full((1, *self.strides), self.data_format),
                                           padding=self.padding.upper(),
                                           rate=[1, *self.dilation_rate],
                                           data_format=self.data_format)
        outputs = self._bias_and_activation(outputs)
        return array_ops.squeeze(outputs, [axis])


class _Pooling1D(_Pooling):
    _rank = 1
    _lowercase_padding = True

    def call(self, inputs):
        axis = 2 if self.data_format == "NHWC" else 3
        outputs = self._run(array_ops.expand_dims(inputs, axis), (*self.pool_size, 1),
                            (*self.strides, 1))
        return array_ops.squeeze(outputs, [axis])


class MaxPooling1D(_Pooling1D):
    """Max pooling over the width of a 3-D input."""

    _default_name = "max_pooling1d"
    _pool = staticmethod(nn_pooling.max_pool)


class AveragePooling1D(_Pooling1D):
    """Average pooling over the width of a 3-D input."""

    _default_name = "average_pooling1d"
    _pool = staticmethod(nn_pooling.avg_pool)


def conv1d(inputs, filters, kernel_size, strides=1, padding="valid",
           data_format="channels_last", dilation_rate=1, activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
           bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional form of `Conv1D`."""
    return _layer_call(Conv1D, locals())


def conv2d_transpose(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", activation=None, use_bias=True,
                     kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                     bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional form of `Conv2DTranspose`."""
    return _layer_call(Conv2DTranspose, locals())


def separable_conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", dilation_rate=(1, 1), depth_multiplier=1,
                     activation=None, use_bias=True, depthwise_initializer=None,
                     pointwise_initializer=None, bias_initializer=None,
                     depthwise_regularizer=None, pointwise_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None,
                     depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                     trainable=True, name=None, reuse=None):
    """Functional form of `SeparableConv2D`."""
    return _layer_call(SeparableConv2D, locals())


def separable_conv1d(inputs, filters, kernel_size, strides=1, padding="valid",
                     data_format="channels_last", dilation_rate=1, depth_multiplier=1,
                     activation=None, use_bias=True, depthwise_initializer=None,
                     pointwise_initializer=None, bias_initializer=None,
                     depthwise_regularizer=None, pointwise_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None,
                     depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                     trainable=True, name=None, reuse=None):
    """Functional form of `SeparableConv1D`."""
    return _layer_call(SeparableConv1D, locals())


def max_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """Functional form of `MaxPooling1D`."""
    return MaxPooling1D(pool_size, strides, padding, data_format, name=name).apply(inputs)


def average_pooling1d(inputs, pool_size, strides, padding="valid",
                      data_format="channels_last", name=None):
    """Functional form of `AveragePooling1D`."""
    return AveragePooling1D(pool_size, strides, padding, data_format, name=name).apply(inputs)

