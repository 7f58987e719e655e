"""3-D convolution: Conv3D, Conv3DBackpropInputV2, Conv3DBackpropFilterV2 and tf.nn wrappers.

Inputs are NDHWC (default) or NCDHW, filters `[kd, kh, kw, in, out]`. Each op's input
gradient is the BackpropInput op and its filter gradient the BackpropFilter op; each backprop
op is differentiated into the other two, so conv3d_transpose trains and second derivatives
work. NOTE: dilations above 1 are computed here (TensorFlow's CPU kernel rejects them).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.numerics import conv_nd as conv3d_kernels
from tensorflux.lib.numerics import window as conv_util
from tensorflux.ops import array as array_ops
from tensorflux.ops.nn.pool3d import join_ndhwc, split_ndhwc

__all__ = ["conv3d", "conv3d_transpose", "conv3d_backprop_filter", "conv3d_backprop_filter_v2"]

_T = "T: {float16, bfloat16, float32, float64}"
_ATTRS = [_T, "strides: list(int) >= 5", "padding: {'SAME', 'VALID'}",
          "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'", "dilations: list(int) = [1, 1, 1, 1, 1]"]


def _window(strides, padding, data_format, dilations) -> conv3d_kernels.WindowND:
    return conv3d_kernels.WindowND(
        ksize=(1, 1, 1),
        strides=conv3d_kernels.spatial_attr(strides, data_format, "strides", 3),
        dilations=conv3d_kernels.spatial_attr(dilations, data_format, "dilations", 3),
        padding=padding)


def _output_shape(input: TensorShape, filter: TensorShape, win, data_format) -> TensorShape:
    n, spatial, c = split_ndhwc(input, data_format)
    fdims = filter.with_rank(5).as_list()
    conv_util.merge_dim(c, fdims[3], "input depth must equal the filter's in_channels")
    out = [conv_util.output_size(size, k, s, d, win.padding)[0] if k is not None else None
           for size, k, s, d in zip(spatial, fdims[:3], win.strides, win.dilations)]
    return join_ndhwc(n, out, fdims[4], data_format)


def _sizes(value, what: str) -> list:
    sizes = [int(v) for v in np.asarray(value).reshape(-1)]
    if len(sizes) != 5:
        raise ValueError(f"{what} must have 5 elements, got {sizes}")
    return sizes


def _sizes_shape(value, what: str) -> TensorShape:
    """The static shape given by a `*_sizes` value input (unknown when it is not constant)."""
    return TensorShape([None] * 5) if value is None else TensorShape(_sizes(value, what))


def _check_filter(x_depth: int, w_shape, what: str) -> None:
    if len(w_shape) != 5:
        raise ValueError(f"{what}: filter must be 5-D, got shape {list(w_shape)}")
    if x_depth != w_shape[3]:
        raise ValueError(f"{what}: input depth {x_depth} must equal the filter's in_channels "
                         f"{w_shape[3]}")


# -- Conv3D ---------------------------------------------------------------------------------

Conv3D = define_op("Conv3D", inputs=["input: T", "filter: T"], outputs=["output: T"],
                   attrs=_ATTRS)


@Conv3D.shape_fn
def _conv3d_shape(input, filter, *, strides, padding, data_format, dilations):
    win = _window(strides, padding, data_format, dilations)
    return _output_shape(input, filter, win, data_format)


@Conv3D.kernel(factory=True)
def _conv3d_kernel(strides, padding, data_format, dilations):
    win = _window(strides, padding, data_format, dilations)
    last = data_format == "NDHWC"

    def conv3d(x, w):
        if x.ndim != 5:
            raise ValueError(f"Conv3D: input must be 5-D, got shape {list(x.shape)}")
        x = conv3d_kernels.to_channels_last(x, last)
        _check_filter(x.shape[-1], w.shape, "Conv3D")
        return conv3d_kernels.from_channels_last(conv3d_kernels.conv(x, w, win), last)

    return conv3d


Conv3DBackpropInputV2 = define_op(
    "Conv3DBackpropInputV2", inputs=["input_sizes: Tshape", "filter: T", "out_backprop: T"],
    outputs=["output: T"], attrs=[*_ATTRS, "Tshape: {int32, int64} = int32"])


@Conv3DBackpropInputV2.shape_fn(value_inputs=("input_sizes",))
def _conv3d_backprop_input_shape(input_sizes, filter, out_backprop, *, strides, padding,
                                 data_format, dilations, Tshape):
    _window(strides, padding, data_format, dilations)
    filter.with_rank(5)
    out_backprop.with_rank(5)
    return _sizes_shape(input_sizes, "Conv3DBackpropInputV2: input_sizes")


@Conv3DBackpropInputV2.kernel(factory=True)
def _conv3d_backprop_input_kernel(strides, padding, data_format, dilations, Tshape):
    win = _window(strides, padding, data_format, dilations)
    last = data_format == "NDHWC"

    def conv3d_backprop_input(input_sizes, w, g):
        n, spatial, c = split_ndhwc(
            TensorShape(_sizes(input_sizes, "Conv3DBackpropInputV2: input_sizes")),
            data_format)
        _check_filter(c, w.shape, "Conv3DBackpropInputV2")
        g = conv3d_kernels.to_channels_last(g, last)
        dx = conv3d_kernels.conv_backprop_input((n, *spatial, c), w, g, win)
        return conv3d_kernels.from_channels_last(dx, last)

    return conv3d_backprop_input


Conv3DBackpropFilterV2 = define_op(
    "Conv3DBackpropFilterV2", inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
    outputs=["output: T"], attrs=_ATTRS)


@Conv3DBackpropFilterV2.shape_fn(value_inputs=("filter_sizes",))
def _conv3d_backprop_filter_shape(input, filter_sizes, out_backprop, *, strides, padding,
                                  data_format, dilations):
    _window(strides, padding, data_format, dilations)
    input.with_rank(5)
    out_backprop.with_rank(5)
    return _sizes_shape(filter_sizes, "Conv3DBackpropFilterV2: filter_sizes")


@Conv3DBackpropFilterV2.kernel(factory=True)
def _conv3d_backprop_filter_kernel(strides, padding, data_format, dilations):
    win = _window(strides, padding, data_format, dilations)
    last = data_format == "NDHWC"

    def conv3d_backprop_filter(x, filter_sizes, g):
        sizes = _sizes(filter_sizes, "Conv3DBackpropFilterV2: filter_sizes")
        if x.ndim != 5:
            raise ValueError(f"Conv3DBackpropFilterV2: input must be 5-D, got shape "
                             f"{list(x.shape)}")
        x = conv3d_kernels.to_channels_last(x, last)
        _check_filter(x.shape[-1], sizes, "Conv3DBackpropFilterV2")
        g = conv3d_kernels.to_channels_last(g, last)
        return conv3d_kernels.conv_backprop_filter(x, sizes, g, win)

    return conv3d_backprop_filter


# -- gradients ------------------------------------------------------------------------------


def _attrs(op) -> dict:
    return {name: op.get_attr_str(name)
            for name in ("strides", "padding", "data_format", "dilations")}


def _shape(tensor):
    return array_ops.shape(tensor, out_type=dtypes.int32)


@Conv3D.gradient
def _conv3d_grad(op, grad):
    x, w = op.inputs
    attrs = _attrs(op)
    return (Conv3DBackpropInputV2(_shape(x), w, grad, **attrs),
            Conv3DBackpropFilterV2(x, _shape(w), grad, **attrs))


@Conv3DBackpropInputV2.gradient
def _conv3d_backprop_input_grad(op, grad):
    _, w, out_backprop = op.inputs
    attrs = _attrs(op)
    return (None, Conv3DBackpropFilterV2(grad, _shape(w), out_backprop, **attrs),
            Conv3D(grad, w, **attrs))


@Conv3DBackpropFilterV2.gradient
def _conv3d_backprop_filter_grad(op, grad):
    x, _, out_backprop = op.inputs
    attrs = _attrs(op)
    return (Conv3DBackpropInputV2(_shape(x), grad, out_backprop, **attrs), None,
            Conv3D(x, grad, **attrs))


# -- wrappers -------------------------------------------------------------------------------


def _conv_attrs(strides, padding, data_format, dilations) -> dict:
    data_format = data_format or "NDHWC"
    padding = padding.decode() if isinstance(padding, bytes) else padding
    if padding is None:
        raise ValueError("conv3d: padding must be 'SAME' or 'VALID', got None")
    return dict(strides=conv_util.sequence_attr(strides, "strides", data_format, 3),
                padding=padding.upper(), data_format=data_format,
                dilations=conv_util.sequence_attr(dilations, "dilations", data_format, 3))


def _one_of(a, b, what_a: str, what_b: str):
    if a is not None and b is not None:
        raise ValueError(f"Cannot specify both '{what_a}' and '{what_b}'.")
    return a if a is not None else b


def conv3d(input, filter=None, strides=None, padding=None, data_format="NDHWC",
           dilations=(1, 1, 1, 1, 1), name=None, filters=None):
    """3-D convolution of a 5-D input with a `[kd, kh, kw, in, out]` filter.

    Args:
        input: `[batch, depth, height, width, in]` (or NCDHW).
        filter, filters: the filter (give one of them).
        strides, dilations: an int or 1, 3 or 5 ints (batch and channel entries 1).
        padding: 'SAME' or 'VALID'.

    Returns:
        The convolution, `[batch, out_d, out_h, out_w, out]`.

    Example: `tf.nn.conv3d(x, w, strides=[1, 1, 1, 1, 1], padding="SAME")`.
    """
    filter = _one_of(filter, filters, "filter", "filters")
    return Conv3D(input, filter, name=name,
                  **_conv_attrs(strides, padding, data_format, dilations))


def conv3d_backprop_filter_v2(input, filter_sizes, out_backprop, strides, padding,
                              data_format="NDHWC", dilations=(1, 1, 1, 1, 1), name=None):
    """The gradient of `conv3d` with respect to a filter of shape `filter_sizes`."""
    return Conv3DBackpropFilterV2(input, filter_sizes, out_backprop, name=name,
                                  **_conv_attrs(strides, padding, data_format, dilations))


conv3d_backprop_filter = conv3d_backprop_filter_v2


def conv3d_transpose(value, filter=None, output_shape=None, strides=None, padding="SAME",
                     data_format="NDHWC", name=None, input=None, filters=None,
                     dilations=None):
    """The transpose (input gradient) of `conv3d`, a.k.a. deconvolution.

    Args:
        value, input: `[batch, depth, height, width, in]` (give one of them).
        filter, filters: `[kd, kh, kw, output_channels, in]` (give one of them).
        output_shape: 1-D tensor or list: the 5-D output shape.
        strides, dilations: an int or 1, 3 or 5 ints.

    Returns:
        A tensor of `output_shape`.

    Example: `tf.nn.conv3d_transpose(x, w, [1, 8, 8, 8, 4], [1, 2, 2, 2, 1], "SAME")`.
    """
    value = _one_of(value, input, "value", "input")
    filter = _one_of(filter, filters, "filter", "filters")
    attrs = _conv_attrs(strides, padding, data_format, dilations or 1)
    return Conv3DBackpropInputV2(output_shape, filter, value, name=name or "conv3d_transpose",
                                 **attrs)
