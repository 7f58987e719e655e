"""Keras 3-D convolution and pooling (channels_last)."""

from __future__ import annotations

from tensorflux.keras.layers.conv import _Conv, _Pooling
from tensorflux.ops.nn import conv3d as nn_conv3d
from tensorflux.ops.nn import pool3d as nn_pool3d

__all__ = ["Conv3D", "MaxPooling3D", "AveragePooling3D", "MaxPool3D", "AvgPool3D", "Convolution3D"]


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
