"""`tf.layers`: Conv3D, Conv3DTranspose, MaxPooling3D, AveragePooling3D (TF1 classes and
functions).

Variables are named and shaped as in TF1 so checkpoints move between the systems: Conv3D
`kernel [kd, kh, kw, in, filters]`, Conv3DTranspose `kernel [kd, kh, kw, filters, in]`, and
with `use_bias` a `bias [filters]`. Default scopes are `conv3d`, `conv3d_transpose`,
`max_pooling3d` and `average_pooling3d`.
"""

from __future__ import annotations

from tensorflux.layers.core import _Conv, _ConvTranspose, _layer_call, _Pooling
from tensorflux.ops.nn import conv3d as nn_conv3d
from tensorflux.ops.nn import pool3d as nn_pool3d

__all__ = ["Conv3D", "conv3d", "Conv3DTranspose", "conv3d_transpose", "MaxPooling3D",
           "max_pooling3d", "AveragePooling3D", "average_pooling3d"]


class Conv3D(_Conv):
    """3-D convolution layer (e.g. over volumes or video) with `filters` kernels."""

    _default_name = "conv3d"
    _rank = 3
    _formats = ("NDHWC", "NCDHW")
    _op = staticmethod(nn_conv3d.conv3d)


class Conv3DTranspose(_ConvTranspose):
    """Transposed 3-D convolution: output size `in * stride` for "same", `in * stride +
    max(kernel - stride, 0)` for "valid"."""

    _default_name = "conv3d_transpose"
    _rank = 3
    _formats = ("NDHWC", "NCDHW")
    _op = staticmethod(nn_conv3d.conv3d_transpose)


def conv3d(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1, 1), activation=None,
           use_bias=True, kernel_initializer=None, bias_initializer=None,
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
           reuse=None):
    """Functional form of `Conv3D`.

    Example: `y = tf.layers.conv3d(x, filters=8, kernel_size=3, padding="same")`.
    """
    return _layer_call(Conv3D, locals())


def conv3d_transpose(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                     data_format="channels_last", activation=None, use_bias=True,
                     kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                     bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional form of `Conv3DTranspose`.

    Example: `y = tf.layers.conv3d_transpose(x, 4, 2, strides=2, padding="same")`.
    """
    return _layer_call(Conv3DTranspose, locals())


class _Pooling3D(_Pooling):
    _rank = 3
    _formats = ("NDHWC", "NCDHW")


class MaxPooling3D(_Pooling3D):
    """Max pooling over 3-D windows of a 5-D input."""

    _default_name = "max_pooling3d"
    _pool = staticmethod(nn_pool3d.max_pool3d)


class AveragePooling3D(_Pooling3D):
    """Average pooling over 3-D windows of a 5-D input."""

    _default_name = "average_pooling3d"
    _pool = staticmethod(nn_pool3d.avg_pool3d)


def max_pooling3d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """Functional form of `MaxPooling3D`."""
    return MaxPooling3D(pool_size, strides, padding, data_format, name=name).apply(inputs)


def average_pooling3d(inputs, pool_size, strides, padding="valid",
                      data_format="channels_last", name=None):
    """Functional form of `AveragePooling3D`."""
    return AveragePooling3D(pool_size, strides, padding, data_format, name=name).apply(inputs)
