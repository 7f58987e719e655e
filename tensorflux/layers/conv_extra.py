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

from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.layers.core import Layer, _activate, _api, _data_format, _pair

__all__ = ["Conv1D", "conv1d", "Conv2DTranspose", "conv2d_transpose", "SeparableConv1D",
           "separable_conv1d", "SeparableConv2D", "separable_conv2d", "MaxPooling1D",
           "max_pooling1d", "AveragePooling1D", "average_pooling1d"]


def _single(value, what):
    if isinstance(value, int):
        return (value,)
    value = tuple(int(v) for v in value)
    if len(value) != 1:
        raise ValueError(f"The `{what}` argument must be a tuple of 1 integers. Received: "
                         f"{value}")
    return value


def _padding(value, allow_causal=False):
    padding = value.lower()
    allowed = ("valid", "same", "causal") if allow_causal else ("valid", "same")
    if padding not in allowed:
        raise ValueError(f"The `padding` argument must be one of {', '.join(map(repr, allowed))}"
                         f". Received: {value}")
    return padding


def _channels(input_shape, data_format, rank):
    input_shape = TensorShape(input_shape).with_rank(rank)
    axis = -1 if data_format == "NHWC" else 1
    channels = input_shape[axis].value
    if channels is None:
        raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
    return channels


class _ConvBase(Layer):
    """Shared arguments and `bias` handling of the convolution layers."""

    def __init__(self, filters, padding, data_format, activation, use_bias, bias_initializer,
                 bias_regularizer, trainable, name, activity_regularizer, allow_causal=False,
                 **kwargs):
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.filters = int(filters)
        self.padding = _padding(padding, allow_causal)
        self.data_format = _data_format(data_format)
        self.activation = activation
        self.use_bias = use_bias
        self.bias_initializer = bias_initializer
        self.bias_regularizer = bias_regularizer

    def _add_bias(self):
        tf = _api()

        self.bias = None
        if self.use_bias:
            self.bias = self.add_variable(
                "bias", [self.filters],
                initializer=self.bias_initializer or tf.zeros_initializer(),
                regularizer=self.bias_regularizer)

    def _bias_and_activation(self, outputs):
        tf = _api()

        if self.bias is not None:
            outputs = tf.nn.bias_add(outputs, self.bias, data_format=self.data_format)
        return _activate(outputs, self.activation)


class Conv1D(_ConvBase):
    """1-D convolution layer (temporal convolution); `padding="causal"` pads on the left."""

    _default_name = "conv1d"

    def __init__(self, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(filters, padding, data_format, activation, use_bias, bias_initializer,
                         bias_regularizer, trainable, name, activity_regularizer,
                         allow_causal=True, **kwargs)
        self.kernel_size = _single(kernel_size, "kernel_size")
        self.strides = _single(strides, "strides")
        self.dilation_rate = _single(dilation_rate, "dilation_rate")
        self.kernel_initializer = kernel_initializer
        self.kernel_regularizer = kernel_regularizer

    def build(self, input_shape):
        channels = _channels(input_shape, self.data_format, 3)
        self.kernel = self.add_variable("kernel", [*self.kernel_size, channels, self.filters],
                                        initializer=self.kernel_initializer,
                                        regularizer=self.kernel_regularizer)
        self._add_bias()
        self.built = True

    def call(self, inputs):
        tf = _api()

        padding = self.padding
        if padding == "causal":
            left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            pads = [[0, 0], [left, 0], [0, 0]] if self.data_format == "NHWC" else \
                [[0, 0], [0, 0], [left, 0]]
            inputs = tf.pad(inputs, pads)
            padding = "valid"
        outputs = tf.nn.conv1d(inputs, self.kernel, stride=self.strides[0],
                               padding=padding.upper(),
                               data_format="NWC" if self.data_format == "NHWC" else "NCW",
                               dilations=self.dilation_rate[0])
        return self._bias_and_activation(outputs)


class Conv2DTranspose(_ConvBase):
    """Transposed 2-D convolution ("deconvolution"): output size `in * stride` for "same",
    `in * stride + max(kernel - stride, 0)` for "valid"."""

    _default_name = "conv2d_transpose"

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", activation=None, use_bias=True,
                 kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(filters, padding, data_format, activation, use_bias, bias_initializer,
                         bias_regularizer, trainable, name, activity_regularizer, **kwargs)
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self.kernel_initializer = kernel_initializer
        self.kernel_regularizer = kernel_regularizer

    def build(self, input_shape):
        channels = _channels(input_shape, self.data_format, 4)
        self.kernel = self.add_variable("kernel", [*self.kernel_size, self.filters, channels],
                                        initializer=self.kernel_initializer,
                                        regularizer=self.kernel_regularizer)
        self._add_bias()
        self.built = True

    def _output_length(self, length, kernel, stride):
        if length is None:
            return None
        if self.padding == "same":
            return length * stride
        return length * stride + max(kernel - stride, 0)

    def call(self, inputs):
        tf = _api()

        axes = (1, 2) if self.data_format == "NHWC" else (2, 3)
        static = inputs.get_shape()
        dynamic = tf.shape(inputs)
        sizes = []
        static_sizes = []
        for axis, kernel, stride in zip(axes, self.kernel_size, self.strides):
            known = self._output_length(static[axis].value, kernel, stride)
            static_sizes.append(known)
            if known is not None:
                sizes.append(known)
            elif self.padding == "same":
                sizes.append(dynamic[axis] * stride)
            else:
                sizes.append(dynamic[axis] * stride + max(kernel - stride, 0))
        batch = static[0].value if static[0].value is not None else dynamic[0]
        if self.data_format == "NHWC":
            shape, static_shape = [batch, *sizes, self.filters], [static[0].value,
                                                                  *static_sizes, self.filters]
            strides = [1, *self.strides, 1]
        else:
            shape, static_shape = [batch, self.filters, *sizes], [static[0].value,
                                                                  self.filters, *static_sizes]
            strides = [1, 1, *self.strides]
        output_shape = tf.stack(shape) if any(isinstance(s, tf.Tensor) for s in shape) \
            else shape
        outputs = tf.nn.conv2d_transpose(inputs, self.kernel, output_shape, strides=strides,
                                         padding=self.padding.upper(),
                                         data_format=self.data_format)
        outputs.set_shape(static_shape)
        return self._bias_and_activation(outputs)


class SeparableConv2D(_ConvBase):
    """Depthwise 2-D convolution (`depth_multiplier` filters per input channel) followed by a
    1x1 convolution to `filters` channels."""

    _default_name = "separable_conv2d"
    _rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1), depth_multiplier=1,
                 activation=None, use_bias=True, depthwise_initializer=None,
                 pointwise_initializer=None, bias_initializer=None, depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                 trainable=True, name=None, **kwargs):
        super().__init__(filters, padding, data_format, activation, use_bias, bias_initializer,
                         bias_regularizer, trainable, name, activity_regularizer, **kwargs)
        tuple_of = _pair if self._rank == 2 else _single
        self.kernel_size = tuple_of(kernel_size, "kernel_size")
        self.strides = tuple_of(strides, "strides")
        self.dilation_rate = tuple_of(dilation_rate, "dilation_rate")
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer = depthwise_initializer
        self.pointwise_initializer = pointwise_initializer
        self.depthwise_regularizer = depthwise_regularizer
        self.pointwise_regularizer = pointwise_regularizer

    def build(self, input_shape):
        channels = _channels(input_shape, self.data_format, self._rank + 2)
        self.depthwise_kernel = self.add_variable(
            "depthwise_kernel", [*self.kernel_size, channels, self.depth_multiplier],
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer)
        self.pointwise_kernel = self.add_variable(
            "pointwise_kernel", [1] * self._rank + [channels * self.depth_multiplier,
                                                    self.filters],
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer)
        self._add_bias()
        self.built = True

    def _strides_4d(self, strides):
        return [1, *strides, 1] if self.data_format == "NHWC" else [1, 1, *strides]

    def call(self, inputs):
        tf = _api()

        outputs = tf.nn.separable_conv2d(inputs, self.depthwise_kernel, self.pointwise_kernel,
                                         strides=self._strides_4d(self.strides),
                                         padding=self.padding.upper(),
                                         rate=list(self.dilation_rate),
                                         data_format=self.data_format)
        return self._bias_and_activation(outputs)


class SeparableConv1D(SeparableConv2D):
    """Depthwise 1-D convolution followed by a pointwise (size 1) convolution."""

    _default_name = "separable_conv1d"
    _rank = 1

    def __init__(self, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, depth_multiplier=1,
                 activation=None, use_bias=True, depthwise_initializer=None,
                 pointwise_initializer=None, bias_initializer=None, depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                 trainable=True, name=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         depth_multiplier, activation, use_bias, depthwise_initializer,
                         pointwise_initializer, bias_initializer, depthwise_regularizer,
                         pointwise_regularizer, bias_regularizer, activity_regularizer,
                         trainable=trainable, name=name, **kwargs)

    def call(self, inputs):
        tf = _api()

        axis = 1 if self.data_format == "NHWC" else 2
        inputs = tf.expand_dims(inputs, axis)
        depthwise = tf.expand_dims(self.depthwise_kernel, 0)
        pointwise = tf.expand_dims(self.pointwise_kernel, 0)
        outputs = tf.nn.separable_conv2d(inputs, depthwise, pointwise,
                                         strides=self._strides_4d((1, *self.strides)),
                                         padding=self.padding.upper(),
                                         rate=[1, *self.dilation_rate],
                                         data_format=self.data_format)
        outputs = self._bias_and_activation(outputs)
        return tf.squeeze(outputs, [axis])


class _Pooling1D(Layer):
    _pool = "max_pool"

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_size = _single(pool_size, "pool_size")
        self.strides = _single(strides, "strides")
        self.padding = _padding(padding)
        self.data_format = _data_format(data_format)

    def call(self, inputs):
        tf = _api()

        axis = 2 if self.data_format == "NHWC" else 3
        inputs = tf.expand_dims(inputs, axis)
        if self.data_format == "NHWC":
            ksize, strides = [1, *self.pool_size, 1, 1], [1, *self.strides, 1, 1]
        else:
            ksize, strides = [1, 1, *self.pool_size, 1], [1, 1, *self.strides, 1]
        outputs = getattr(tf.nn, self._pool)(inputs, ksize=ksize, strides=strides,
                                             padding=self.padding.upper(),
                                             data_format=self.data_format)
        return tf.squeeze(outputs, [axis])


class MaxPooling1D(_Pooling1D):
    """Max pooling over the width of a 3-D input."""

    _default_name = "max_pooling1d"
    _pool = "max_pool"


class AveragePooling1D(_Pooling1D):
    """Average pooling over the width of a 3-D input."""

    _default_name = "average_pooling1d"
    _pool = "avg_pool"


def conv1d(inputs, filters, kernel_size, strides=1, padding="valid",
           data_format="channels_last", dilation_rate=1, activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
           bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional form of `Conv1D`."""
    layer = Conv1D(filters, kernel_size, strides=strides, padding=padding,
                   data_format=data_format, dilation_rate=dilation_rate, activation=activation,
                   use_bias=use_bias, kernel_initializer=kernel_initializer,
                   bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                   bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                   trainable=trainable, name=name, _reuse=reuse)
    return layer.apply(inputs)


def conv2d_transpose(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", activation=None, use_bias=True,
                     kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                     bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional form of `Conv2DTranspose`."""
    layer = Conv2DTranspose(filters, kernel_size, strides=strides, padding=padding,
                            data_format=data_format, activation=activation, use_bias=use_bias,
                            kernel_initializer=kernel_initializer,
                            bias_initializer=bias_initializer,
                            kernel_regularizer=kernel_regularizer,
                            bias_regularizer=bias_regularizer,
                            activity_regularizer=activity_regularizer, trainable=trainable,
                            name=name, _reuse=reuse)
    return layer.apply(inputs)


def _separable(cls, inputs, filters, kernel_size, strides, padding, data_format, dilation_rate,
               depth_multiplier, activation, use_bias, depthwise_initializer,
               pointwise_initializer, bias_initializer, depthwise_regularizer,
               pointwise_regularizer, bias_regularizer, activity_regularizer, trainable, name,
               reuse):
    layer = cls(filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                dilation_rate=dilation_rate, depth_multiplier=depth_multiplier,
                activation=activation, use_bias=use_bias,
                depthwise_initializer=depthwise_initializer,
                pointwise_initializer=pointwise_initializer, bias_initializer=bias_initializer,
                depthwise_regularizer=depthwise_regularizer,
                pointwise_regularizer=pointwise_regularizer, bias_regularizer=bias_regularizer,
                activity_regularizer=activity_regularizer, trainable=trainable, name=name,
                _reuse=reuse)
    return layer.apply(inputs)


def separable_conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", dilation_rate=(1, 1), depth_multiplier=1,
                     activation=None, use_bias=True, depthwise_initializer=None,
                     pointwise_initializer=None, bias_initializer=None,
                     depthwise_regularizer=None, pointwise_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None,
                     depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                     trainable=True, name=None, reuse=None):
    """Functional form of `SeparableConv2D`."""
    return _separable(SeparableConv2D, inputs, filters, kernel_size, strides, padding,
                      data_format, dilation_rate, depth_multiplier, activation, use_bias,
                      depthwise_initializer, pointwise_initializer, bias_initializer,
                      depthwise_regularizer, pointwise_regularizer, bias_regularizer,
                      activity_regularizer, trainable, name, reuse)


def separable_conv1d(inputs, filters, kernel_size, strides=1, padding="valid",
                     data_format="channels_last", dilation_rate=1, depth_multiplier=1,
                     activation=None, use_bias=True, depthwise_initializer=None,
                     pointwise_initializer=None, bias_initializer=None,
                     depthwise_regularizer=None, pointwise_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None,
                     depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                     trainable=True, name=None, reuse=None):
    """Functional form of `SeparableConv1D`."""
    return _separable(SeparableConv1D, inputs, filters, kernel_size, strides, padding,
                      data_format, dilation_rate, depth_multiplier, activation, use_bias,
                      depthwise_initializer, pointwise_initializer, bias_initializer,
                      depthwise_regularizer, pointwise_regularizer, bias_regularizer,
                      activity_regularizer, trainable, name, reuse)


def max_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """Functional form of `MaxPooling1D`."""
    return MaxPooling1D(pool_size, strides, padding, data_format, name=name).apply(inputs)


def average_pooling1d(inputs, pool_size, strides, padding="valid",
                      data_format="channels_last", name=None):
    """Functional form of `AveragePooling1D`."""
    return AveragePooling1D(pool_size, strides, padding, data_format, name=name).apply(inputs)

