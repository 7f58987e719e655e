"""Keras convolution and pooling layers (channels_last): Conv1D, Conv2D, pooling, global pooling."""

from __future__ import annotations

from tensorflux.keras import activations, initializers
from tensorflux.keras.engine.base_layer import InputSpec, Layer
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import conv as nn_conv
from tensorflux.ops.nn import core as nn_core
from tensorflux.ops.nn import pooling as nn_pooling

__all__ = [
    "Conv1D",
    "Conv2D",
    "MaxPooling1D",
    "MaxPooling2D",
    "AveragePooling1D",
    "AveragePooling2D",
    "GlobalAveragePooling1D",
    "GlobalAveragePooling2D",
    "GlobalMaxPooling1D",
    "GlobalMaxPooling2D",
    "MaxPool1D",
    "MaxPool2D",
    "AvgPool1D",
    "AvgPool2D",
    "Convolution1D",
    "Convolution2D",
    "GlobalAvgPool2D",
    "GlobalMaxPool2D",
    "Conv2DTranspose",
    "Convolution2DTranspose",
]


def _tuple(value, rank, what, layer):
    if isinstance(value, int):
        return (value,) * rank
    value = tuple(int(v) for v in value)
    if len(value) != rank:
        raise ValueError(
            f'Layer "{layer}": the `{what}` argument must be a tuple of {rank} '
            f"integers. Received: {value}"
        )
    return value


def _channels_last(data_format, layer):
    if data_format not in (None, "channels_last"):
        raise ValueError(
            f'Layer "{layer}": only data_format="channels_last" is supported, got {data_format!r}.'
        )


def _padding(padding, layer, allowed=("valid", "same")):
    padding = str(padding).lower()
    if padding not in allowed:
        raise ValueError(f'Layer "{layer}": padding must be one of {allowed}, got {padding!r}.')
    return padding


class _Conv(Layer):
    rank = 2

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        _channels_last(data_format, self.name)
        self.filters = int(filters)
        self.kernel_size = _tuple(kernel_size, self.rank, "kernel_size", self.name)
        self.strides = _tuple(strides, self.rank, "strides", self.name)
        self.dilation_rate = _tuple(dilation_rate, self.rank, "dilation_rate", self.name)
        allowed = ("valid", "same", "causal") if self.rank == 1 else ("valid", "same")
        self.padding = _padding(padding, self.name, allowed)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def build(self, input_shape):
        channels = self._defined_channels(input_shape)
        self.kernel = self._add_configured_weight(
            "kernel", (*self.kernel_size, channels, self.filters))
        self.bias = self._add_bias(self.filters)
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={-1: channels})
        self.built = True

    def call(self, inputs):
        outputs = self._convolve(inputs)
        if self.bias is not None:
            outputs = nn_core.bias_add(outputs, self.bias)
        return self.activation(outputs)


class Conv2D(_Conv):
    """2-D convolution over [batch, height, width, channels]; kernel [kh, kw, in, filters]."""

    rank = 2

    def _convolve(self, inputs):
        return nn_conv.conv2d(
            inputs,
            self.kernel,
            strides=[1, *self.strides, 1],
            padding=self.padding.upper(),
            dilations=[1, *self.dilation_rate, 1],
        )


class Conv1D(_Conv):
    """1-D convolution over [batch, steps, channels]; kernel [k, in, filters]; 'causal' pads
    only on the left."""

    rank = 1

    def _convolve(self, inputs):
        padding = self.padding
        if padding == "causal":
            left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            inputs = array_ops.pad(inputs, [[0, 0], [left, 0], [0, 0]])
            padding = "valid"
        x = array_ops.expand_dims(inputs, 1)
        kernel = array_ops.expand_dims(self.kernel, 0)
        y = nn_conv.conv2d(
            x,
            kernel,
            strides=[1, 1, self.strides[0], 1],
            padding=padding.upper(),
            dilations=[1, 1, self.dilation_rate[0], 1],
        )
        return array_ops.squeeze(y, [1])


class _Pooling(Layer):
    rank = 2
    kind = "max"

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, self.name)
        self.pool_size = _tuple(pool_size, self.rank, "pool_size", self.name)
        self.strides = _tuple(
            strides if strides is not None else pool_size, self.rank, "strides", self.name
        )
        self.padding = _padding(padding, self.name)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        pool = nn_pooling.max_pool if self.kind == "max" else nn_pooling.avg_pool
        if self.rank == 1:
            y = pool(
                array_ops.expand_dims(inputs, 1),
                [1, 1, self.pool_size[0], 1],
                [1, 1, self.strides[0], 1],
                self.padding.upper(),
            )
            return array_ops.squeeze(y, [1])
        return pool(inputs, [1, *self.pool_size, 1], [1, *self.strides, 1], self.padding.upper())


class MaxPooling2D(_Pooling):
    """Max over `pool_size` windows of [batch, height, width, channels]."""


class AveragePooling2D(_Pooling):
    """Mean over `pool_size` windows of [batch, height, width, channels]."""

    kind = "avg"


class MaxPooling1D(_Pooling):
    """Max over `pool_size` windows of [batch, steps, channels]."""

    rank = 1

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class AveragePooling1D(MaxPooling1D):
    """Mean over `pool_size` windows of [batch, steps, channels]."""

    kind = "avg"


class _GlobalPooling(Layer):
    rank = 2
    kind = "max"

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, self.name)
        self.keepdims = keepdims
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        reduce = math_ops.reduce_max if self.kind == "max" else math_ops.reduce_mean
        return reduce(inputs, axis=list(range(1, self.rank + 1)), keepdims=self.keepdims)


class GlobalMaxPooling2D(_GlobalPooling):
    """Max over height and width: [batch, h, w, c] -> [batch, c]."""


class GlobalAveragePooling2D(_GlobalPooling):
    """Mean over height and width: [batch, h, w, c] -> [batch, c]."""

    kind = "avg"


class GlobalMaxPooling1D(_GlobalPooling):
    """Max over steps: [batch, steps, c] -> [batch, c]."""

    rank = 1


class GlobalAveragePooling1D(_GlobalPooling):
    """Mean over steps: [batch, steps, c] -> [batch, c]; with a mask, over unmasked steps."""

    rank = 1
    kind = "avg"
    supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        weights = array_ops.expand_dims(math_ops.cast(mask, inputs.dtype), -1)
        total = math_ops.reduce_sum(inputs * weights, axis=1, keepdims=self.keepdims)
        count = math_ops.reduce_sum(weights, axis=1, keepdims=self.keepdims)
        return total / count

    def compute_mask(self, inputs, mask=None):
        return None


MaxPool1D, MaxPool2D = MaxPooling1D, MaxPooling2D
AvgPool1D, AvgPool2D = AveragePooling1D, AveragePooling2D
Convolution1D, Convolution2D = Conv1D, Conv2D
GlobalAvgPool2D, GlobalMaxPool2D = GlobalAveragePooling2D, GlobalMaxPooling2D


class Conv2DTranspose(Conv2D):
    """Transposed 2-D convolution; kernel [kh, kw, filters, in_channels]."""

    def build(self, input_shape):
        channels = self._defined_channels(input_shape)
        self.kernel = self._add_configured_weight(
            "kernel", (*self.kernel_size, self.filters, channels))
        self.bias = self._add_bias(self.filters)
        self.input_spec = InputSpec(ndim=4, axes={-1: channels})
        self.built = True

    def _size(self, size, kernel, stride):
        if size is None:
            return None
        if self.padding == "same":
            return size * stride
        return size * stride + max(kernel - stride, 0)

    def _convolve(self, inputs):
        if self.dilation_rate != (1, 1):
            raise ValueError(f'Layer "{self.name}": dilation_rate is not supported.')
        dims = inputs.get_shape().as_list()
        dynamic = array_ops.shape(inputs)
        sizes = [self._size(dims[i + 1], self.kernel_size[i], self.strides[i]) for i in (0, 1)]
        if None in sizes:
            raise ValueError(f'Layer "{self.name}": height and width must be known.')
        output_shape = array_ops.stack([dynamic[0], sizes[0], sizes[1], self.filters])
        outputs = nn_conv.conv2d_transpose(
            inputs,
            self.kernel,
            output_shape,
            strides=[1, *self.strides, 1],
            padding=self.padding.upper(),
        )
        outputs.set_shape([dims[0], *sizes, self.filters])
        return outputs


Convolution2DTranspose = Conv2DTranspose
