"""Keras depthwise and separable 2-D convolutions (channels_last)."""

from __future__ import annotations

from tensorflux.keras import constraints, initializers, regularizers
from tensorflux.keras.engine.base_layer import InputSpec
from tensorflux.keras.layers.conv import _Conv
from tensorflux.ops import array as array_ops
from tensorflux.ops.nn import conv as nn_conv

__all__ = ["DepthwiseConv2D", "SeparableConv2D", "SeparableConvolution2D", "SeparableConv1D",
           "SeparableConvolution1D"]


class DepthwiseConv2D(_Conv):
    """One filter per input channel (times `depth_multiplier`); depthwise_kernel
    [kh, kw, in, depth_multiplier]."""

    rank = 2

    def __init__(
        self,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        depth_multiplier=1,
        data_format=None,
        dilation_rate=(1, 1),
        activation=None,
        use_bias=True,
        depthwise_initializer="glorot_uniform",
        bias_initializer="zeros",
        depthwise_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        depthwise_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(
            1,
            kernel_size,
            strides=strides,
            padding=padding,
            data_format=data_format,
            dilation_rate=dilation_rate,
            activation=activation,
            use_bias=use_bias,
            bias_initializer=bias_initializer,
            bias_regularizer=bias_regularizer,
            activity_regularizer=activity_regularizer,
            bias_constraint=bias_constraint,
            **kwargs,
        )
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)

    def build(self, input_shape):
        channels = self._defined_channels(input_shape)
        self.depthwise_kernel = self._add_configured_weight(
            "depthwise_kernel", (*self.kernel_size, channels, self.depth_multiplier), "depthwise")
        self.bias = self._add_bias(channels * self.depth_multiplier)
        self.input_spec = InputSpec(ndim=4, axes={-1: channels})
        self.built = True

    def _convolve(self, inputs):
        return nn_conv.depthwise_conv2d(
            inputs,
            self.depthwise_kernel,
            [1, *self.strides, 1],
            self.padding.upper(),
            dilations=self.dilation_rate,
        )


class SeparableConv2D(_Conv):
    """Depthwise then 1x1 pointwise convolution; depthwise_kernel [kh, kw, in, multiplier],
    pointwise_kernel [1, 1, in * multiplier, filters]."""

    rank = 2

    def __init__(
        self,
        filters,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        data_format=None,
        dilation_rate=(1, 1),
        depth_multiplier=1,
        activation=None,
        use_bias=True,
        depthwise_initializer="glorot_uniform",
        pointwise_initializer="glorot_uniform",
        bias_initializer="zeros",
        depthwise_regularizer=None,
        pointwise_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        depthwise_constraint=None,
        pointwise_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(
            filters,
            kernel_size,
            strides=strides,
            padding=padding,
            data_format=data_format,
            dilation_rate=dilation_rate,
            activation=activation,
            use_bias=use_bias,
            bias_initializer=bias_initializer,
            bias_regularizer=bias_regularizer,
            activity_regularizer=activity_regularizer,
            bias_constraint=bias_constraint,
            **kwargs,
        )
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.pointwise_regularizer = regularizers.get(pointwise_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)
        self.pointwise_constraint = constraints.get(pointwise_constraint)

    def build(self, input_shape):
        channels = self._defined_channels(input_shape)
        self.depthwise_kernel = self._add_configured_weight(
            "depthwise_kernel", (*self.kernel_size, channels, self.depth_multiplier), "depthwise")
        self.pointwise_kernel = self._add_configured_weight(
            "pointwise_kernel", (1, 1, channels * self.depth_multiplier, self.filters),
            "pointwise")
        self.bias = self._add_bias(self.filters)
        self.input_spec = InputSpec(ndim=4, axes={-1: channels})
        self.built = True

    def _convolve(self, inputs):
        return nn_conv.separable_conv2d(
            inputs,
            self.depthwise_kernel,
            self.pointwise_kernel,
            [1, *self.strides, 1],
            self.padding.upper(),
            dilations=self.dilation_rate,
        )


SeparableConvolution2D = SeparableConv2D


class SeparableConv1D(SeparableConv2D):
    """Depthwise then pointwise 1-D convolution over [batch, steps, channels];
    depthwise_kernel [k, in, multiplier], pointwise_kernel [1, in * multiplier, filters]."""

    rank = 1

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate, **kwargs)

    def build(self, input_shape):
        channels = self._defined_channels(input_shape)
        self.depthwise_kernel = self._add_configured_weight(
            "depthwise_kernel", (*self.kernel_size, channels, self.depth_multiplier), "depthwise")
        self.pointwise_kernel = self._add_configured_weight(
            "pointwise_kernel", (1, channels * self.depth_multiplier, self.filters),
            "pointwise")
        self.bias = self._add_bias(self.filters)
        self.input_spec = InputSpec(ndim=3, axes={-1: channels})
        self.built = True

    def _convolve(self, inputs):
        padding = self.padding
        if padding == "causal":
            left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            inputs = array_ops.pad(inputs, [[0, 0], [left, 0], [0, 0]])
            padding = "valid"
        outputs = nn_conv.separable_conv2d(
            array_ops.expand_dims(inputs, 1),
            array_ops.expand_dims(self.depthwise_kernel, 0),
            array_ops.expand_dims(self.pointwise_kernel, 0),
            [1, 1, self.strides[0], 1],
            padding.upper(),
            dilations=(1, self.dilation_rate[0]),
        )
        return array_ops.squeeze(outputs, [1])


SeparableConvolution1D = SeparableConv1D
