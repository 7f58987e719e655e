"""2-D convolutions: Conv2D, DepthwiseConv2dNative and their backprop ops, with the tf.nn
wrappers (conv2d, conv2d_transpose, depthwise_conv2d, separable_conv2d, ...).

Kernels work in NHWC (an NCHW input is a transposed view, so no extra copy before im2col) and
bind their window attrs once per node in a factory. A convolution's input gradient is its
BackpropInput op and its filter gradient its BackpropFilter op; each backprop op is in turn
differentiated into the other two, so conv2d_transpose trains and second derivatives work.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.numerics import conv2d as conv_kernels
from tensorflux.lib.numerics import window as conv_util
from tensorflux.ops import array as array_ops
from tensorflux.ops.array import shapes as array_shapes
from tensorflux.ops.array.shapes import constant_value_as_shape
from tensorflux.ops.nn import conv3d as conv3d_ops

__all__: list = []

_CONV_ATTRS = [
    "strides: list(int)",
    "padding: {'SAME', 'VALID', 'EXPLICIT'}",
    "explicit_paddings: list(int) = []",
    "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
    "dilations: list(int) = [1, 1, 1, 1]",
]
_CUDNN = "use_cudnn_on_gpu: bool = True"


def _window(strides, padding, explicit_paddings, data_format, dilations):
    return conv_util.window(data_format, None, strides, dilations, padding, explicit_paddings)


def _to_nhwc(x: np.ndarray, geo) -> np.ndarray:
    return x if geo.channels_last else x.transpose(0, 2, 3, 1)


def _from_nhwc(y: np.ndarray, geo) -> np.ndarray:
    return y if geo.channels_last else np.ascontiguousarray(y.transpose(0, 3, 1, 2))


def _sizes_nhwc(sizes: np.ndarray, geo, what: str) -> tuple:
    sizes = [int(v) for v in np.asarray(sizes).reshape(-1)]
    if len(sizes) != 4:
        raise errors.InvalidArgumentError(
            None, None, f"{what} must be a vector of 4 sizes, got {sizes}")
    if geo.channels_last:
        return tuple(sizes)
    n, c, h, w = sizes
    return (n, h, w, c)


def _groups(in_depth, filter_depth, out_depth, op: str, error=errors.InvalidArgumentError):
    """The number of groups of a (grouped) convolution: input depth / filter input depth.

    Raises `error` when the input depth is not a multiple of the filter's input depth or the
    output depth not a multiple of the number of groups (TF's Conv2D rules)."""
    if in_depth is None or filter_depth is None or filter_depth == 0:
        return None
    if in_depth % filter_depth:
        message = (f"{op}: Depth of input ({in_depth}) is not a multiple of input depth of "
                   f"filter ({filter_depth})")
        raise error(message) if error is ValueError else error(None, None, message)
    groups = in_depth // filter_depth
    if out_depth is not None and groups > 1 and out_depth % groups:
        message = (f"{op}: Depth of output ({out_depth}) is not a multiple of the number of "
                   f"groups ({groups})")
        raise error(message) if error is ValueError else error(None, None, message)
    return groups


def _check_depth(in_depth, filter_depth, op: str, out_depth=None) -> int:
    return _groups(in_depth, filter_depth, out_depth, op)


def _check_equal_depth(in_depth, filter_depth, op: str) -> None:
    if in_depth != filter_depth:
        raise errors.InvalidArgumentError(
            None, None, f"{op}: input depth {in_depth} must equal the filter's input depth "
                        f"{filter_depth}")


def _grouped(fn, groups: int, x_axis_parts, w, combine_axis):
    """Runs `fn(x_part, w_part)` per group (the filter split on its output depth) and joins
    the results on `combine_axis`. `x_axis_parts(g)` gives group g's slice of the input."""
    per = w.shape[3] // groups
    parts = [fn(x_axis_parts(g), w[..., g * per:(g + 1) * per]) for g in range(groups)]
    return np.concatenate(parts, axis=combine_axis)


def _check_backprop_sizes(input_nhwc, filter_shape, g_nhwc, geo, op: str) -> None:
    """InvalidArgumentError when `out_backprop` is not the output of a convolution of an
    input of `input_nhwc` with a `filter_shape` filter (batch, spatial sizes and depth)."""
    try:
        out_hw, _ = geo.geometry(input_nhwc[1], input_nhwc[2], filter_shape[0], filter_shape[1])
    except ValueError as err:
        raise errors.InvalidArgumentError(None, None, f"{op}: {err}") from None
    expect = (input_nhwc[0], *out_hw, filter_shape[3])
    if tuple(g_nhwc) != expect:
        raise errors.InvalidArgumentError(
            None, None, f"{op}: out_backprop has shape {list(g_nhwc)} (NHWC) but a convolution "
                        f"of an input of shape {list(input_nhwc)} with a filter of shape "
                        f"{list(filter_shape)}, strides {list(geo.strides)} and padding "
                        f"{geo.padding} gives {list(expect)}")


def _conv_out_shape(input_shape: TensorShape, filter_shape: TensorShape, geo, depthwise: bool):
    n, h, w, c = conv_util.split_nhwc(input_shape, geo.data_format)
    kh, kw, fc, depth = filter_shape.with_rank(4).as_list()
    if depthwise:
        c = conv_util.merge_dim(c, fc, "input depth must equal the filter's input depth")
    else:
        _groups(c, fc, depth, "Conv2D", error=ValueError)
    if depthwise:
        depth = c * depth if c is not None and depth is not None else None
    out_h = out_w = None
    if kh is not None:
        out_h = conv_util.output_size(h, kh, geo.strides[0], geo.dilations[0], geo.padding,
                                      geo.explicit[0])[0]
    if kw is not None:
        out_w = conv_util.output_size(w, kw, geo.strides[1], geo.dilations[1], geo.padding,
                                      geo.explicit[1])[0]
    return conv_util.join_nhwc(n, out_h, out_w, depth, geo.data_format)


def _sizes_shape(sizes) -> TensorShape:
    """The static shape given by a constant sizes vector (unknown dims when not constant)."""
    if sizes is None:
        return TensorShape([None] * 4)
    values = [int(v) for v in np.asarray(sizes).reshape(-1)]
    if len(values) != 4:
        raise ValueError(f"sizes must be a vector of 4 elements, got {values}")
    return TensorShape(values)


# -- Conv2D ---------------------------------------------------------------------------------

Conv2D = define_op(
    "Conv2D", inputs=["input: T", "filter: T"], outputs=["output: T"],
    attrs=["T: {float16, bfloat16, float32, float64, int32}", _CUDNN, *_CONV_ATTRS])


@Conv2D.shape_fn
def _conv2d_shape(input, filter, *, strides, padding, explicit_paddings, data_format,
                  dilations):
    # NOTE: as in TF, batch/depth strides and dilations pass graph construction (the shape
    # uses the spatial ones) and fail when the kernel runs.
    geo = _window(conv_util.spatial_only(strides, data_format), padding, explicit_paddings,
                  data_format, conv_util.spatial_only(dilations, data_format))
    return _conv_out_shape(input, filter, geo, depthwise=False)


def _unimplemented(message: str):
    def kernel(*args):
        raise errors.UnimplementedError(None, None, message)

    return kernel


@Conv2D.kernel(factory=True)
def _conv2d_kernel(strides, padding, explicit_paddings, data_format, dilations):
    for what, values in (("strides", strides), ("dilations", dilations)):
        if conv_util.nonspatial(values, data_format):
            return _unimplemented(f"Conv2D: Current implementation does not yet support {what} "
                                  f"in the batch and depth dimensions (got {list(values)}).")
    geo = _window(strides, padding, explicit_paddings, data_format, dilations)

    def conv2d(x, w):
        x = _to_nhwc(x, geo)
        groups = _check_depth(x.shape[3], w.shape[2], "Conv2D", w.shape[3])
        if groups is not None and groups > 1:
            c = w.shape[2]
            return _from_nhwc(_grouped(lambda xp, wp: conv_kernels.conv2d(xp, wp, geo),
                                       groups, lambda g: x[..., g * c:(g + 1) * c], w, 3), geo)
        return _from_nhwc(conv_kernels.conv2d(x, w, geo), geo)

    return conv2d


_WINDOW_ATTRS = ("strides", "padding", "explicit_paddings", "data_format", "dilations")


def _attrs(op, names=_WINDOW_ATTRS) -> dict:
    return {name: op.get_attr_str(name) for name in names}


def _conv_attrs_of(op) -> dict:
    return _attrs(op, _WINDOW_ATTRS + ("use_cudnn_on_gpu",))


def _shape(tensor):
    return array_ops.shape(tensor, out_type=dtypes.int32)


@Conv2D.gradient
def _conv2d_grad(op, grad):
    x, w = op.inputs
    attrs = _conv_attrs_of(op)
    return (Conv2DBackpropInput(_shape(x), w, grad, **attrs),
            Conv2DBackpropFilter(x, _shape(w), grad, **attrs))


Conv2DBackpropInput = define_op(
    "Conv2DBackpropInput", inputs=["input_sizes: int32", "filter: T", "out_backprop: T"],
    outputs=["output: T"],
    attrs=["T: {float16, bfloat16, float32, float64, int32}", _CUDNN, *_CONV_ATTRS])


@Conv2DBackpropInput.shape_fn(value_inputs=("input_sizes",))
def _conv2d_backprop_input_shape(input_sizes, filter, out_backprop, *, strides, padding,
                                 explicit_paddings, data_format, dilations):
    _window(strides, padding, explicit_paddings, data_format, dilations)
    filter.with_rank(4)
    out_backprop.with_rank(4)
    return _sizes_shape(input_sizes)


@Conv2DBackpropInput.kernel(factory=True)
def _conv2d_backprop_input_kernel(strides, padding, explicit_paddings, data_format, dilations):
    geo = _window(strides, padding, explicit_paddings, data_format, dilations)

    def conv2d_backprop_input(input_sizes, w, g):
        shape = _sizes_nhwc(input_sizes, geo, "Conv2DBackpropInput: input_sizes")
        groups = _check_depth(shape[3], w.shape[2], "Conv2DBackpropInput", w.shape[3])
        g = _to_nhwc(g, geo)
        _check_backprop_sizes(shape, w.shape, g.shape, geo, "Conv2DBackpropInput")
        if groups is not None and groups > 1:
            per = w.shape[3] // groups
            part_shape = (*shape[:3], w.shape[2])
            dx = _grouped(lambda gp, wp: conv_kernels.conv2d_backprop_input(part_shape, wp, gp,
                                                                            geo),
                          groups, lambda k: g[..., k * per:(k + 1) * per], w, 3)
            return _from_nhwc(dx, geo)
        return conv_kernels.conv2d_backprop_input(shape, w, g, geo,
                                                  channels_first_out=not geo.channels_last)

    return conv2d_backprop_input


@Conv2DBackpropInput.gradient
def _conv2d_backprop_input_grad(op, grad):
    _, w, out_backprop = op.inputs
    attrs = _conv_attrs_of(op)
    return (None, Conv2DBackpropFilter(grad, _shape(w), out_backprop, **attrs),
            Conv2D(grad, w, **attrs))


Conv2DBackpropFilter = define_op(
    "Conv2DBackpropFilter", inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
    outputs=["output: T"], attrs=["T: {float16, bfloat16, float32, float64}", _CUDNN,
                                  *_CONV_ATTRS])


@Conv2DBackpropFilter.shape_fn(value_inputs=("filter_sizes",))
def _conv2d_backprop_filter_shape(input, filter_sizes, out_backprop, *, strides, padding,
                                  explicit_paddings, data_format, dilations):
    _window(strides, padding, explicit_paddings, data_format, dilations)
    input.with_rank(4)
    out_backprop.with_rank(4)
    return _sizes_shape(filter_sizes)


@Conv2DBackpropFilter.kernel(factory=True)
def _conv2d_backprop_filter_kernel(strides, padding, explicit_paddings, data_format, dilations):
    geo = _window(strides, padding, explicit_paddings, data_format, dilations)

    def conv2d_backprop_filter(x, filter_sizes, g):
        shape = tuple(int(v) for v in np.asarray(filter_sizes).reshape(-1))
        x = _to_nhwc(x, geo)
        if len(shape) != 4:
            raise errors.InvalidArgumentError(
                None, None, f"Conv2DBackpropFilter: filter_sizes must have 4 elements, got "
                            f"{list(shape)}")
        groups = _check_depth(x.shape[3], shape[2], "Conv2DBackpropFilter", shape[3])
        g = _to_nhwc(g, geo)
        _check_backprop_sizes(x.shape, shape, g.shape, geo, "Conv2DBackpropFilter")
        if groups is not None and groups > 1:
            c, per = shape[2], shape[3] // groups
            part = (*shape[:3], per)
            return np.concatenate([
                conv_kernels.conv2d_backprop_filter(x[..., k * c:(k + 1) * c], part,
                                                    g[..., k * per:(k + 1) * per], geo)
                for k in range(groups)], axis=3)
        return conv_kernels.conv2d_backprop_filter(x, shape, g, geo)

    return conv2d_backprop_filter


@Conv2DBackpropFilter.gradient
def _conv2d_backprop_filter_grad(op, grad):
    x, _, out_backprop = op.inputs
    attrs = _conv_attrs_of(op)
    return (Conv2DBackpropInput(_shape(x), grad, out_backprop, **attrs), None,
            Conv2D(x, grad, **attrs))


# -- DepthwiseConv2dNative -------------------------------------------------------------------

DepthwiseConv2dNative = define_op(
    "DepthwiseConv2dNative", inputs=["input: T", "filter: T"], outputs=["output: T"],
    attrs=["T: {float16, bfloat16, float32, float64}", *_CONV_ATTRS])


@DepthwiseConv2dNative.shape_fn
def _depthwise_shape(input, filter, *, strides, padding, explicit_paddings, data_format,
                     dilations):
    geo = _window(strides, padding, explicit_paddings, data_format, dilations)
    return _conv_out_shape(input, filter, geo, depthwise=True)


@DepthwiseConv2dNative.kernel(factory=True)
def _depthwise_kernel(strides, padding, explicit_paddings, data_format, dilations):
    geo = _window(strides, padding, explicit_paddings, data_format, dilations)

    def depthwise_conv2d_native(x, w):
        x = _to_nhwc(x, geo)
        _check_equal_depth(x.shape[3], w.shape[2], "DepthwiseConv2dNative")
        return _from_nhwc(conv_kernels.depthwise_conv2d(x, w, geo), geo)

    return depthwise_conv2d_native


@DepthwiseConv2dNative.gradient
def _depthwise_grad(op, grad):
    x, w = op.inputs
    attrs = _attrs(op)
    return (DepthwiseConv2dNativeBackpropInput(_shape(x), w, grad, **attrs),
            DepthwiseConv2dNativeBackpropFilter(x, _shape(w), grad, **attrs))


DepthwiseConv2dNativeBackpropInput = define_op(
    "DepthwiseConv2dNativeBackpropInput",
    inputs=["input_sizes: int32", "filter: T", "out_backprop: T"], outputs=["output: T"],
    attrs=["T: {float16, bfloat16, float32, float64}", *_CONV_ATTRS])


@DepthwiseConv2dNativeBackpropInput.shape_fn(value_inputs=("input_sizes",))
def _depthwise_backprop_input_shape(input_sizes, filter, out_backprop, *, strides, padding,
                                    explicit_paddings, data_format, dilations):
    _window(strides, padding, explicit_paddings, data_format, dilations)
    return _sizes_shape(input_sizes)


@DepthwiseConv2dNativeBackpropInput.kernel(factory=True)
def _depthwise_backprop_input_kernel(strides, padding, explicit_paddings, data_format,
                                     dilations):
    geo = _window(strides, padding, explicit_paddings, data_format, dilations)

    def depthwise_backprop_input(input_sizes, w, g):
        shape = _sizes_nhwc(input_sizes, geo, "DepthwiseConv2dNativeBackpropInput: input_sizes")
        _check_equal_depth(shape[3], w.shape[2], "DepthwiseConv2dNativeBackpropInput")
        dx = conv_kernels.depthwise_backprop_input(shape, w, _to_nhwc(g, geo), geo)
        return _from_nhwc(dx, geo)

    return depthwise_backprop_input


@DepthwiseConv2dNativeBackpropInput.gradient
def _depthwise_backprop_input_grad(op, grad):
    _, w, out_backprop = op.inputs
    attrs = _attrs(op)
    return (None,
            DepthwiseConv2dNativeBackpropFilter(grad, _shape(w), out_backprop,
                                                         **attrs),
            DepthwiseConv2dNative(grad, w, **attrs))


DepthwiseConv2dNativeBackpropFilter = define_op(
    "DepthwiseConv2dNativeBackpropFilter",
    inputs=["input: T", "filter_sizes: int32", "out_backprop: T"], outputs=["output: T"],
    attrs=["T: {float16, bfloat16, float32, float64}", *_CONV_ATTRS])


@DepthwiseConv2dNativeBackpropFilter.shape_fn(value_inputs=("filter_sizes",))
def _depthwise_backprop_filter_shape(input, filter_sizes, out_backprop, *, strides, padding,
                                     explicit_paddings, data_format, dilations):
    _window(strides, padding, explicit_paddings, data_format, dilations)
    return _sizes_shape(filter_sizes)


@DepthwiseConv2dNativeBackpropFilter.kernel(factory=True)
def _depthwise_backprop_filter_kernel(strides, padding, explicit_paddings, data_format,
                                      dilations):
    geo = _window(strides, padding, explicit_paddings, data_format, dilations)

    def depthwise_backprop_filter(x, filter_sizes, g):
        shape = tuple(int(v) for v in np.asarray(filter_sizes).reshape(-1))
        x = _to_nhwc(x, geo)
        if len(shape) != 4:
            raise errors.InvalidArgumentError(
                None, None, f"DepthwiseConv2dNativeBackpropFilter: filter_sizes must have 4 "
                            f"elements, got {list(shape)}")
        _check_equal_depth(x.shape[3], shape[2], "DepthwiseConv2dNativeBackpropFilter")
        return conv_kernels.depthwise_backprop_filter(x, shape, _to_nhwc(g, geo), geo)

    return depthwise_backprop_filter


@DepthwiseConv2dNativeBackpropFilter.gradient
def _depthwise_backprop_filter_grad(op, grad):
    x, _, out_backprop = op.inputs
    attrs = _attrs(op)
    return (DepthwiseConv2dNativeBackpropInput(_shape(x), grad, out_backprop,
                                                        **attrs),
            None, DepthwiseConv2dNative(x, grad, **attrs))


# -- wrappers -------------------------------------------------------------------------------


def _conv_attrs(strides, padding, data_format, dilations) -> dict:
    data_format = data_format or "NHWC"
    padding, explicit = conv_util.convert_padding(padding, data_format)
    return dict(strides=conv_util.sequence_attr(strides, "strides", data_format),
                padding=padding, explicit_paddings=explicit, data_format=data_format,
                dilations=conv_util.sequence_attr(dilations, "dilations", data_format))


def _pick(new, new_name: str, old, old_name: str):
    if new is not None and old is not None:
        raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'.")
    return new if new is not None else old


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,
           data_format="NHWC", dilations=(1, 1, 1, 1), name=None, filters=None):
    """2-D convolution of a 4-D `input` with a `[kh, kw, in, out]` filter.

    Args:
        input: `[batch, height, width, channels]` (NHWC) or `[batch, channels, height, width]`.
        filter: `[filter_height, filter_width, in_channels, out_channels]` (alias `filters`).
        strides: an int or 1, 2 or 4 ints.
        padding: 'SAME', 'VALID' or a list of 4 `[before, after]` pairs (explicit padding).
        data_format: 'NHWC' or 'NCHW'.
        dilations: an int or 1, 2 or 4 ints.

    Returns:
        The convolution, same dtype as `input`.

    Example: `tf.nn.conv2d(images, kernel, strides=[1, 2, 2, 1], padding="SAME")`.
    """
    filter = _pick(filters, "filters", filter, "filter")
    return Conv2D(input, filter, use_cudnn_on_gpu=use_cudnn_on_gpu, name=name,
                  **_conv_attrs(strides, padding, data_format, dilations))


def _with_sizes_shape(result, sizes):
    """Refines `result`'s static shape with the partially known shape the `sizes` tensor
    denotes (e.g. `tf.stack([tf.shape(x)[0], 8, 8, 2])` gives `[?, 8, 8, 2]`)."""

    known = constant_value_as_shape(sizes)
    if known.ndims is not None and result.shape.is_compatible_with(known):
        result.set_shape(known)
    return result


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None,
                          padding=None, use_cudnn_on_gpu=True, data_format="NHWC",
                          dilations=(1, 1, 1, 1), name=None, filters=None):
    """The gradient of conv2d with respect to its input, of shape `input_sizes`."""
    filter = _pick(filters, "filters", filter, "filter")
    input_sizes = convert_to_tensor(input_sizes, preferred_dtype=dtypes.int32)
    result = Conv2DBackpropInput(input_sizes, filter, out_backprop,
                                 use_cudnn_on_gpu=use_cudnn_on_gpu, name=name,
                                 **_conv_attrs(strides, padding, data_format, dilations))
    return _with_sizes_shape(result, input_sizes)


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,
                           use_cudnn_on_gpu=True, data_format="NHWC", dilations=(1, 1, 1, 1),
                           name=None):
    """The gradient of conv2d with respect to its filter, of shape `filter_sizes`."""
    return Conv2DBackpropFilter(input, filter_sizes, out_backprop,
                                use_cudnn_on_gpu=use_cudnn_on_gpu, name=name,
                                **_conv_attrs(strides, padding, data_format, dilations))


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None, padding="SAME",
                     data_format="NHWC", name=None, input=None, filters=None,
                     dilations=None):
    """The transpose of conv2d (a "deconvolution"): Conv2DBackpropInput of `value`.

    Args:
        value: 4-D input `[batch, height, width, in_channels]` (alias `input`).
        filter: `[height, width, output_channels, in_channels]` (alias `filters`).
        output_shape: 1-D shape of the result.
        strides, padding, data_format, dilations: as in conv2d.

    Raises:
        ValueError: the filter's last dimension does not match the input depth.
    """
    value = _pick(input, "input", value, "value")
    filter = _pick(filters, "filters", filter, "filter")
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "conv2d_transpose") as scope:
        value = convert_to_tensor(value, name="value")
        filter = convert_to_tensor(filter, name="filter")
        axis = 3 if (data_format or "NHWC") == "NHWC" else 1
        depth = value.shape._dim_list[axis] if value.shape.ndims == 4 else None
        out_depth = filter.shape._dim_list[3] if filter.shape.ndims == 4 else None
        if depth is not None and out_depth is not None and depth != out_depth:
            raise ValueError(f"input channels does not match filter's input channels, "
                             f"{depth} != {out_depth}")
        output_shape = convert_to_tensor(output_shape, preferred_dtype=dtypes.int32,
                                         name="output_shape")
        result = Conv2DBackpropInput(output_shape, filter, value, name=scope,
                                     **_conv_attrs(strides, padding, data_format, dilations))
        return _with_sizes_shape(result, output_shape)


def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC",
                            dilations=(1, 1, 1, 1), name=None):
    """Depthwise convolution: each input channel convolved with `channel_multiplier` filters."""
    return DepthwiseConv2dNative(input, filter, name=name,
                                 **_conv_attrs(strides, padding, data_format, dilations))


def depthwise_conv2d_native_backprop_input(input_sizes, filter, out_backprop, strides,
                                           padding, data_format="NHWC",
                                           dilations=(1, 1, 1, 1), name=None):
    """The gradient of depthwise_conv2d_native with respect to its input."""
    return DepthwiseConv2dNativeBackpropInput(
        input_sizes, filter, out_backprop, name=name,
        **_conv_attrs(strides, padding, data_format, dilations))


def depthwise_conv2d_native_backprop_filter(input, filter_sizes, out_backprop, strides,
                                            padding, data_format="NHWC",
                                            dilations=(1, 1, 1, 1), name=None):
    """The gradient of depthwise_conv2d_native with respect to its filter."""
    return DepthwiseConv2dNativeBackpropFilter(
        input, filter_sizes, out_backprop, name=name,
        **_conv_attrs(strides, padding, data_format, dilations))


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None, data_format=None,
                     dilations=None):
    """Depthwise 2-D convolution with optional atrous `rate` (TF1 `tf.nn.depthwise_conv2d`)."""
    rate = _pick(dilations, "dilations", rate, "rate")
    graph = graph_mod.get_default_graph()
    data_format = data_format or "NHWC"
    with graph.name_scope(name or "depthwise") as scope:
        return DepthwiseConv2dNative(input, filter, name=scope,
                                     **_conv_attrs(strides, padding, data_format, rate))


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, rate=None,
                     name=None, data_format=None, dilations=None):
    """A depthwise convolution followed by a 1x1 (pointwise) convolution."""
    rate = _pick(dilations, "dilations", rate, "rate")
    data_format = data_format or "NHWC"
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "separable_conv2d") as scope:
        depthwise = DepthwiseConv2dNative(input, depthwise_filter, name="depthwise",
                                          **_conv_attrs(strides, padding, data_format, rate))
        return Conv2D(depthwise, pointwise_filter, name=scope,
                      **_conv_attrs(1, "VALID", data_format, 1))


def _per_spatial(value, count, what):
    """`value` (None, an int or `count` ints) as a list of `count` ints."""
    if value is None:
        return [1] * count
    values = [int(value)] * count if np.ndim(value) == 0 else [int(v) for v in value]
    if len(values) != count:
        raise ValueError(f"convolution: {what} must hold {count} value(s) for a "
                         f"{count}-D convolution, got {values}")
    return values


def convolution(input, filter=None, padding=None, strides=None, dilation_rate=None, name=None,
                data_format=None, filters=None, dilations=None):
    """N-D convolution for N = 1, 2 or 3 spatial dimensions (a 3-, 4- or 5-D input): Conv2D
    (through `conv1d` for N = 1) or Conv3D; `strides` and `dilation_rate` hold N values.

    Raises:
        ValueError: the input (or, when its rank is unknown, the filter) is not of rank 3 to
            5, a bad `data_format`, or `strides`/`dilation_rate` of the wrong length.
    """
    filter = _pick(filters, "filters", filter, "filter")
    dilation_rate = _pick(dilations, "dilations", dilation_rate, "dilation_rate")
    input = convert_to_tensor(input, name="input")
    filter = convert_to_tensor(filter, name="filter")
    rank = input.shape.ndims if input.shape.ndims is not None else filter.shape.ndims
    if rank is not None and rank not in (3, 4, 5):
        raise ValueError(f"convolution: num_spatial_dims (input.shape.ndims - 2) must be one "
                         f"of 1, 2 or 3 but saw {rank - 2}")
    graph = graph_mod.get_default_graph()
    if rank == 3:
        # cycle: conv1d builds on this module's conv2d.
        from tensorflux.ops.nn import conv1d as conv1d_ops
        data_format = data_format or "NWC"
        if data_format not in ("NWC", "NCW"):
            raise ValueError(f"convolution: data_format must be 'NWC' or 'NCW' for 1-D, got "
                             f"{data_format!r}")
        with graph.name_scope(name or "convolution"):
            return conv1d_ops.conv1d(input, filter, _per_spatial(strides, 1, "strides"),
                                     padding, data_format=data_format,
                                     dilations=_per_spatial(dilation_rate, 1, "dilation_rate"))
    if rank == 5:
        data_format = data_format or "NDHWC"
        if data_format not in ("NDHWC", "NCDHW"):
            raise ValueError(f"convolution: data_format must be 'NDHWC' or 'NCDHW' for 3-D, "
                             f"got {data_format!r}")
        spatial = (lambda v: [1, *v, 1]) if data_format == "NDHWC" else (lambda v: [1, 1, *v])
        with graph.name_scope(name or "convolution") as scope:
            return conv3d_ops.conv3d(
                input, filter, strides=spatial(_per_spatial(strides, 3, "strides")),
                padding=padding, data_format=data_format,
                dilations=spatial(_per_spatial(dilation_rate, 3, "dilation_rate")), name=scope)
    data_format = data_format or "NHWC"
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"convolution: data_format must be 'NHWC' or 'NCHW' for 2-D, got "
                         f"{data_format!r}")
    with graph.name_scope(name or "convolution") as scope:
        return Conv2D(input, filter, name=scope,
                      **_conv_attrs(strides, padding, data_format, dilation_rate))


def atrous_conv2d(value, filters, rate, padding, name=None):
    """Dilated ("atrous") 2-D convolution of an NHWC `value` with stride 1.

    Raises:
        ValueError: `rate` is smaller than 1.
    """
    if rate < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    return Conv2D(value, filters, name=name or "convolution",
                  **_conv_attrs(1, padding, "NHWC", rate))


# -- conv2d_backprop_*_v2 ---------------------------------------------------------------------
# NOTE: TF builds Conv2DBackprop{Filter,Input}V2 nodes, which take the tensor instead of its
# shape; these wrappers feed the tensor's shape to the V1 ops, which compute the same values.

def _v2_conv_attrs(strides, padding, explicit_paddings, data_format, dilations):
    explicit = list(explicit_paddings or [])
    if padding == "EXPLICIT" or (isinstance(padding, bytes) and padding == b"EXPLICIT"):
        attrs = _conv_attrs(strides, "VALID", data_format, dilations)
        if len(explicit) != 8:
            raise ValueError(f"explicit_paddings must hold 8 values for padding EXPLICIT, got "
                             f"{explicit}")
        attrs.update(padding="EXPLICIT", explicit_paddings=[int(v) for v in explicit])
        return attrs
    if explicit:
        raise ValueError(f"explicit_paddings must be empty unless padding is EXPLICIT, got "
                         f"{explicit}")
    return _conv_attrs(strides, padding, data_format, dilations)


def conv2d_backprop_filter_v2(input, filter, out_backprop, strides, padding,
                              use_cudnn_on_gpu=True, explicit_paddings=(), data_format="NHWC",
                              dilations=(1, 1, 1, 1), name=None):
    """The gradient of conv2d with respect to its filter; `filter` supplies only the shape.

    Returns:
        A tensor shaped like `filter`.
    """

    with _scope(name, "Conv2DBackpropFilterV2") as scope:
        filter = convert_to_tensor(filter, name="filter")
        return Conv2DBackpropFilter(input, array_shapes.shape(filter), out_backprop,
                                    use_cudnn_on_gpu=use_cudnn_on_gpu, name=scope,
                                    **_v2_conv_attrs(strides, padding, explicit_paddings,
                                                     data_format, dilations))


def conv2d_backprop_input_v2(input, filter, out_backprop, strides, padding,
                             use_cudnn_on_gpu=True, explicit_paddings=(), data_format="NHWC",
                             dilations=(1, 1, 1, 1), name=None):
    """The gradient of conv2d with respect to its input; `input` supplies only the shape.

    Returns:
        A tensor shaped like `input`.
    """

    with _scope(name, "Conv2DBackpropInputV2") as scope:
        input = convert_to_tensor(input, name="input")
        return Conv2DBackpropInput(array_shapes.shape(input), filter, out_backprop,
                                   use_cudnn_on_gpu=use_cudnn_on_gpu, name=scope,
                                   **_v2_conv_attrs(strides, padding, explicit_paddings,
                                                    data_format, dilations))
