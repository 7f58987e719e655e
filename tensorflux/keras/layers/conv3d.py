"""Keras 3-D convolution and pooling (channels_last)."""

from __future__ import annotations

from tensorflux.keras.engine.base_layer import InputSpec
from tensorflux.keras.layers import conv
from tensorflux.keras.layers.conv import _Conv, _GlobalPooling, _Pooling
from tensorflux.ops import array as array_ops
from tensorflux.ops.nn import conv3d as nn_conv3d
from tensorflux.ops.nn import pool3d as nn_pool3d

__all__ = ["Conv3D", "MaxPooling3D", "AveragePooling3D", "MaxPool3D", "AvgPool3D", "Convolution3D",
           "Conv3DTranspose", "Convolution3DTranspose", "GlobalMaxPooling3D",
           "GlobalAveragePooling3D", "GlobalMaxPool3D", "GlobalAvgPool3D", "GlobalMaxPool1D",
           "GlobalAvgPool1D"]


class Conv3D(_Conv):
    """3-D convolution over [batch, d, h, w, channels]; kernel [kd, kh, kw, in, filters]."""

    rank = 3

    def _convolve(self, inputs):
        return nn_conv3d.conv3d(
            inputs,
            self.kernel,
            strides=[1, *self.strides, 1],
            padding=self.padding.upper(),
            dilations=[1, *self.dilation_rate, 1],
        )


class MaxPooling3D(_Pooling):
    """Max over `pool_size` windows of [batch, d, h, w, channels]."""

    rank = 3

    def __init__(
        self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None, **kwargs
    ):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)

    def call(self, inputs):
        pool = nn_pool3d.max_pool3d if self.kind == "max" else nn_pool3d.avg_pool3d
        return pool(inputs, [1, *self.pool_size, 1], [1, *self.strides, 1], self.padding.upper())


class AveragePooling3D(MaxPooling3D):
    """Mean over `pool_size` windows of [batch, d, h, w, channels]."""

    kind = "avg"


MaxPool3D, AvgPool3D = MaxPooling3D, AveragePooling3D
Convolution3D = Conv3D


class GlobalMaxPooling3D(_GlobalPooling):
    """Max over depth, height and width: [batch, d, h, w, c] -> [batch, c]."""

    rank = 3


class GlobalAveragePooling3D(_GlobalPooling):
    """Mean over depth, height and width: [batch, d, h, w, c] -> [batch, c]."""

    rank = 3
    kind = "avg"


GlobalMaxPool3D, GlobalAvgPool3D = GlobalMaxPooling3D, GlobalAveragePooling3D
GlobalMaxPool1D, GlobalAvgPool1D = conv.GlobalMaxPooling1D, conv.GlobalAveragePooling1D


class Conv3DTranspose(Conv3D):
    """Transposed 3-D convolution (the gradient of Conv3D with respect to its input) over
    [batch, d, h, w, channels]; kernel [kd, kh, kw, filters, in_channels].

    `output_padding` (an int or 3 ints, each smaller than its stride) adds to the output size.
    """

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 output_padding=None, data_format=None, **kwargs):
        if kwargs.get("dilation_rate", 1) not in (1, (1, 1, 1), [1, 1, 1]):
            raise ValueError("Conv3DTranspose: dilation_rate is not supported.")
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, **kwargs)
        self.output_padding = None
        if output_padding is not None:
            self.output_padding = conv._tuple(output_padding, 3, "output_padding", self.name)
            for pad, stride in zip(self.output_padding, self.strides):
                if pad >= stride:
                    raise ValueError(f'Layer "{self.name}": stride {self.strides} must be '
                                     f"greater than output padding {self.output_padding}.")

    def build(self, input_shape):
        channels = self._defined_channels(input_shape)
        self.kernel = self._add_configured_weight(
            "kernel", (*self.kernel_size, self.filters, channels))
        self.bias = self._add_bias(self.filters)
        self.input_spec = InputSpec(ndim=5, axes={-1: channels})
        self.built = True

    def _size(self, size, axis):
        kernel, stride = self.kernel_size[axis], self.strides[axis]
        extra = self.output_padding[axis] if self.output_padding is not None else None
        if self.padding == "same":
            return size * stride + (extra or 0)
        if extra is None:
            return size * stride + max(kernel - stride, 0)
        return (size - 1) * stride + kernel + extra

    def _convolve(self, inputs):
        dims = inputs.get_shape().as_list()
        if None in dims[1:4]:
            raise ValueError(f'Layer "{self.name}": depth, height and width must be known.')
        sizes = [self._size(dims[i + 1], i) for i in range(3)]
        output_shape = array_ops.stack([array_ops.shape(inputs)[0], *sizes, self.filters])
        outputs = nn_conv3d.conv3d_transpose(inputs, self.kernel, output_shape,
                                             strides=[1, *self.strides, 1],
                                             padding=self.padding.upper())
        outputs.set_shape([dims[0], *sizes, self.filters])
        return outputs


Convolution3DTranspose = Conv3DTranspose
