"""`tf.nn.conv1d`, `conv1d_transpose`, `max_pool1d`, `avg_pool1d`: 1-D ops as 2-D ones.

As in TensorFlow, a `[batch, width, channels]` (NWC) or `[batch, channels, width]` (NCW) input
gets a unit spatial dimension (`ExpandDims`), goes through the 2-D op (Conv2D,
Conv2DBackpropInput, MaxPool, AvgPool), and loses it again (`Squeeze`); gradients come from the
2-D ops.
"""

from __future__ import annotations

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.nn import conv as conv_ops
from tensorflux.ops.nn import pooling as pooling_ops

__all__ = ["conv1d", "conv1d_transpose", "max_pool1d", "avg_pool1d"]


def _layout(data_format, what: str):
    """(2-D data format, spatial axis of the 3-D input) for a 1-D data format."""
    if data_format in (None, "NWC", "NHWC"):
        return "NHWC", 1
    if data_format in ("NCW", "NCHW"):
        return "NCHW", 2
    raise ValueError(f"{what}: data_format must be \"NWC\" or \"NCW\", got {data_format!r}")


def _sequence(value, data_format_2d: str, name: str, what: str) -> list:
    """A 1-D stride/dilation/window (int, or 1 or 3 ints) as the 4 values of the 2-D op."""
    if value is None:
        return [1, 1, 1, 1]
    if isinstance(value, Tensor):
        raise TypeError(f"{what}: {name} must be a Python int or list of ints")
    items = [int(value)] if not isinstance(value, (list, tuple)) else [int(v) for v in value]
    if len(items) == 1:
        items = [1, items[0], 1] if data_format_2d == "NHWC" else [1, 1, items[0]]
    elif len(items) != 3:
        raise ValueError(f"{what}: {name} should be of length 1 or 3 but was {len(items)}")
    return [1] + items


def _pick(new, new_name, old, old_name, what):
    if new is not None and old is not None:
        raise ValueError(f"{what}: cannot specify both '{new_name}' and '{old_name}'.")
    return new if new is not None else old


def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None,
           data_format=None, name=None, input=None, dilations=None):
    """1-D convolution of a 3-D input with a `[width, in_channels, out_channels]` filter.

    Args:
        value: `[batch, in_width, in_channels]` (NWC) or `[batch, in_channels, in_width]`
            (NCW); alias `input`.
        filters: `[filter_width, in_channels, out_channels]`.
        stride: an int or a list of 1 or 3 ints.
        padding: 'SAME' or 'VALID'.
        data_format: "NWC" (default) or "NCW".
        dilations: an int or a list of 1 or 3 ints.

    Returns:
        The 3-D convolution result, same dtype as `value`.

    Raises:
        ValueError: a bad `data_format` or stride/dilation length.

    Example: `tf.nn.conv1d(signal, kernel, stride=2, padding="SAME")`.
    """
    value = _pick(input, "input", value, "value", "conv1d")
    format_2d, axis = _layout(data_format, "conv1d")
    strides = _sequence(stride, format_2d, "stride", "conv1d")
    dilations = _sequence(dilations, format_2d, "dilations", "conv1d")
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "conv1d"):
        value = shape_ops.expand_dims(value, axis)
        filters = shape_ops.expand_dims(filters, 0)
        result = conv_ops.conv2d(value, filters, strides=strides, padding=padding,
                                 data_format=format_2d, dilations=dilations)
        return shape_ops.squeeze(result, [axis])


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format="NWC", dilations=None, name=None):
    """The transpose (gradient) of `conv1d`: a "deconvolution" to `output_shape`.

    Args:
        input: 3-D `[batch, width, in_channels]` (NWC) or NCW.
        filters: `[filter_width, output_channels, in_channels]`.
        output_shape: the 3-D output shape (a list or 1-D int tensor).
        strides, padding, data_format, dilations: as in `conv1d`.

    Returns:
        A Tensor of `output_shape`.
    """
    format_2d, axis = _layout(data_format, "conv1d_transpose")
    strides = _sequence(strides, format_2d, "strides", "conv1d_transpose")
    dilations = _sequence(dilations, format_2d, "dilations", "conv1d_transpose")
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "conv1d_transpose"):
        if isinstance(output_shape, Tensor):
            shape = convert_to_tensor(output_shape)

            shape_4d = concat_ops.concat([shape[:axis], [1], shape[axis:]], 0)
        else:
            dims = [int(d) for d in output_shape]
            if len(dims) != 3:
                raise ValueError(f"conv1d_transpose: output_shape must have 3 elements, got "
                                 f"{len(dims)}")
            shape_4d = dims[:axis] + [1] + dims[axis:]
        value = shape_ops.expand_dims(input, axis)
        filters = shape_ops.expand_dims(filters, 0)
        result = conv_ops.conv2d_transpose(value, filters, shape_4d, strides=strides,
                                           padding=padding, data_format=format_2d,
                                           dilations=dilations)
        return shape_ops.squeeze(result, [axis])


def _pool1d(pool, input, ksize, strides, padding, data_format, name, what):  # noqa: A002
    format_2d, axis = _layout(data_format, what)
    ksize = _sequence(ksize, format_2d, "ksize", what)
    strides = _sequence(strides, format_2d, "strides", what)
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or what):
        value = shape_ops.expand_dims(input, axis)
        result = pool(value, ksize=ksize, strides=strides, padding=padding,
                      data_format=format_2d)
        return shape_ops.squeeze(result, [axis])


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """Max pooling of a 3-D NWC (or NCW) input over its width (window/stride: int or 1/3)."""
    return _pool1d(pooling_ops.max_pool, input, ksize, strides, padding, data_format, name,
                   "MaxPool1d")


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """Average pooling of a 3-D NWC (or NCW) input over its width."""
    return _pool1d(pooling_ops.avg_pool, input, ksize, strides, padding, data_format, name,
                   "AvgPool1D")
