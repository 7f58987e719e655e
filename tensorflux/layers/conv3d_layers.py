"""`tf.layers`: Conv3D, Conv3DTranspose, MaxPooling3D, AveragePooling3D (TF1 classes and
functions).

Variables are named and shaped as in TF1 so checkpoints move between the systems: Conv3D
`kernel [kd, kh, kw, in, filters]`, Conv3DTranspose `kernel [kd, kh, kw, filters, in]`, and
with `use_bias` a `bias [filters]`. Default scopes are `conv3d`, `conv3d_transpose`,
`max_pooling3d` and `average_pooling3d`.
"""

from __future__ import annotations

from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.layers.core import Layer, _activate, _api

__all__ = ["Conv3D", "conv3d", "Conv3DTranspose", "conv3d_transpose", "MaxPooling3D",
           "max_pooling3d", "AveragePooling3D", "average_pooling3d"]


def _triple(value, what):
    if isinstance(value, int):
        return (value,) * 3
    value = tuple(int(v) for v in value)
    if len(value) != 3:
        raise ValueError(f"The `{what}` argument must be a tuple of 3 integers. Received: "
                         f"{value}")
    return value


def _data_format(value):
    if value in ("channels_last", "NDHWC", None):
        return "NDHWC"
    if value in ("channels_first", "NCDHW"):
        return "NCDHW"
    raise ValueError(f"The `data_format` argument must be one of 'channels_first', "
                     f"'channels_last'. Received: {value}")


def _padding(value):
    padding = value.upper()
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"The `padding` argument must be one of 'valid', 'same'. Received: "
                         f"{value}")
    return padding


def _full(values, data_format):
    return [1, *values, 1] if data_format == "NDHWC" else [1, 1, *values]


class _Conv3DBase(Layer):
    """Shared arguments, kernel/bias creation and bias + activation of the 3-D conv layers."""

    def __init__(self, filters, kernel_size, strides, padding, data_format, activation,
                 use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                 bias_regularizer, activity_regularizer, trainable, name, **kwargs):
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.filters = int(filters)
        self.kernel_size = _triple(kernel_size, "kernel_size")
        self.strides = _triple(strides, "strides")
        self.padding = _padding(padding)
        self.data_format = _data_format(data_format)
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer

    def _channels(self, input_shape):
        input_shape = TensorShape(input_shape).with_rank(5)
        channels = input_shape[-1 if self.data_format == "NDHWC" else 1].value
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found "
                             "`None`.")
        return channels

    def _build(self, kernel_shape):
        tf = _api()

        self.kernel = self.add_variable("kernel", kernel_shape,
                                        initializer=self.kernel_initializer,
                                        regularizer=self.kernel_regularizer)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_variable(
                "bias", [self.filters],
                initializer=self.bias_initializer or tf.zeros_initializer(),
                regularizer=self.bias_regularizer)
        self.built = True

    def _finish(self, outputs):
        tf = _api()

        if self.bias is not None:
            if self.data_format == "NDHWC":
                outputs = tf.nn.bias_add(outputs, self.bias)
            else:
                outputs = outputs + tf.reshape(self.bias, [self.filters, 1, 1, 1])
        return _activate(outputs, self.activation)


class Conv3D(_Conv3DBase):
    """3-D convolution layer (e.g. over volumes or video) with `filters` kernels."""

    _default_name = "conv3d"

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1, 1), activation=None,
                 use_bias=True, kernel_initializer=None, bias_initializer=None,
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, activation,
                         use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                         bias_regularizer, activity_regularizer, trainable, name, **kwargs)
        self.dilation_rate = _triple(dilation_rate, "dilation_rate")

    def build(self, input_shape):
        self._build([*self.kernel_size, self._channels(input_shape), self.filters])

    def call(self, inputs):
        tf = _api()

        outputs = tf.nn.conv3d(inputs, self.kernel, strides=_full(self.strides,
                                                                  self.data_format),
                               padding=self.padding, data_format=self.data_format,
                               dilations=_full(self.dilation_rate, self.data_format))
        return self._finish(outputs)


class Conv3DTranspose(_Conv3DBase):
    """Transposed 3-D convolution: output size `in * stride` for "same", `in * stride +
    max(kernel - stride, 0)` for "valid"."""

    _default_name = "conv3d_transpose"

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format="channels_last", activation=None, use_bias=True,
                 kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, activation,
                         use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                         bias_regularizer, activity_regularizer, trainable, name, **kwargs)

    def build(self, input_shape):
        self._build([*self.kernel_size, self.filters, self._channels(input_shape)])

    def _length(self, length, kernel, stride):
        if self.padding == "SAME":
            return length * stride
        return length * stride + max(kernel - stride, 0)

    def call(self, inputs):
        tf = _api()

        axes = (1, 2, 3) if self.data_format == "NDHWC" else (2, 3, 4)
        static = inputs.get_shape()
        dynamic = tf.shape(inputs)
        sizes, static_sizes = [], []
        for axis, kernel, stride in zip(axes, self.kernel_size, self.strides):
            known = static[axis].value
            size = dynamic[axis] if known is None else known
            sizes.append(self._length(size, kernel, stride))
            static_sizes.append(None if known is None else self._length(known, kernel, stride))
        batch = static[0].value if static[0].value is not None else dynamic[0]
        if self.data_format == "NDHWC":
            shape = [batch, *sizes, self.filters]
            static_shape = [static[0].value, *static_sizes, self.filters]
        else:
            shape = [batch, self.filters, *sizes]
            static_shape = [static[0].value, self.filters, *static_sizes]
        if any(isinstance(s, tf.Tensor) for s in shape):
            shape = tf.stack(shape)
        outputs = tf.nn.conv3d_transpose(inputs, self.kernel, shape,
                                         strides=_full(self.strides, self.data_format),
                                         padding=self.padding, data_format=self.data_format)
        outputs.set_shape(static_shape)
        return self._finish(outputs)


def conv3d(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1, 1), activation=None,
           use_bias=True, kernel_initializer=None, bias_initializer=None,
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
           reuse=None):
    """Functional form of `Conv3D`.

    Example: `y = tf.layers.conv3d(x, filters=8, kernel_size=3, padding="same")`.
    """
    layer = Conv3D(filters, kernel_size, strides=strides, padding=padding,
                   data_format=data_format, dilation_rate=dilation_rate, activation=activation,
                   use_bias=use_bias, kernel_initializer=kernel_initializer,
                   bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                   bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                   trainable=trainable, name=name, _reuse=reuse)
    return layer.apply(inputs)


def conv3d_transpose(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                     data_format="channels_last", activation=None, use_bias=True,
                     kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                     bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional form of `Conv3DTranspose`.

    Example: `y = tf.layers.conv3d_transpose(x, 4, 2, strides=2, padding="same")`.
    """
    layer = Conv3DTranspose(filters, kernel_size, strides=strides, padding=padding,
                            data_format=data_format, activation=activation, use_bias=use_bias,
                            kernel_initializer=kernel_initializer,
                            bias_initializer=bias_initializer,
                            kernel_regularizer=kernel_regularizer,
                            bias_regularizer=bias_regularizer,
                            activity_regularizer=activity_regularizer, trainable=trainable,
                            name=name, _reuse=reuse)
    return layer.apply(inputs)


class _Pooling3D(Layer):
    _pool = "max_pool3d"

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_size = _triple(pool_size, "pool_size")
        self.strides = _triple(strides, "strides")
        self.padding = _padding(padding)
        self.data_format = _data_format(data_format)

    def call(self, inputs):
        tf = _api()

        pool = getattr(tf.nn, self._pool)
        return pool(inputs, ksize=_full(self.pool_size, self.data_format),
                    strides=_full(self.strides, self.data_format), padding=self.padding,
                    data_format=self.data_format)


class MaxPooling3D(_Pooling3D):
    """Max pooling over 3-D windows of a 5-D input."""

    _default_name = "max_pooling3d"
    _pool = "max_pool3d"


class AveragePooling3D(_Pooling3D):
    """Average pooling over 3-D windows of a 5-D input."""

    _default_name = "average_pooling3d"
    _pool = "avg_pool3d"


def max_pooling3d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """Functional form of `MaxPooling3D`."""
    return MaxPooling3D(pool_size, strides, padding, data_format, name=name).apply(inputs)


def average_pooling3d(inputs, pool_size, strides, padding="valid",
                      data_format="channels_last", name=None):
    """Functional form of `AveragePooling3D`."""
    return AveragePooling3D(pool_size, strides, padding, data_format, name=name).apply(inputs)
