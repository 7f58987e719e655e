"""3-D pooling: MaxPool3D, AvgPool3D, their gradient ops, tf.nn.max_pool3d / avg_pool3d.

Layouts are NDHWC (default) or NCDHW; windows run over the three spatial dimensions only.
As in TensorFlow's CPU kernels, AvgPool3D with SAME padding averages real inputs only,
MaxPool3DGrad gives each output's gradient to every input equal to the window maximum, and
MaxPool3DGradGrad reads the gradient at the window's first maximum. NOTE: MaxPool3D and
MaxPool3DGrad also accept float64 (TensorFlow's do not), so they can be checked numerically.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.numerics import conv_nd as conv3d_kernels
from tensorflux.lib.numerics import window as conv_util
from tensorflux.ops import array as array_ops

__all__ = ["max_pool3d", "avg_pool3d"]

_FLOAT = "{float16, bfloat16, float32, float64}"
_REAL = ("{float32, float64, int32, uint8, int16, int8, int64, bfloat16, uint16, float16, "
         "uint32, uint64}")
_FORMAT = "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'"
_WINDOW = ["ksize: list(int) >= 5", "strides: list(int) >= 5", "padding: {'SAME', 'VALID'}",
           _FORMAT]


def window(ksize, strides, padding, data_format) -> conv3d_kernels.WindowND:
    return conv3d_kernels.WindowND(
        ksize=conv3d_kernels.spatial_attr(ksize, data_format, "ksize", 3),
        strides=conv3d_kernels.spatial_attr(strides, data_format, "strides", 3),
        dilations=(1, 1, 1), padding=padding)


def split_ndhwc(shape: TensorShape, data_format: str) -> tuple:
    """(n, (d, h, w), c) of a rank-5 static shape laid out as `data_format`."""
    dims = shape.with_rank(5).as_list()
    if data_format == "NDHWC":
        return dims[0], tuple(dims[1:4]), dims[4]
    return dims[0], tuple(dims[2:5]), dims[1]


def join_ndhwc(n, spatial, c, data_format: str) -> TensorShape:
    if data_format == "NDHWC":
        return TensorShape([n, *spatial, c])
    return TensorShape([n, c, *spatial])


def _pooled_shape(input: TensorShape, win, data_format: str) -> TensorShape:
    n, spatial, c = split_ndhwc(input, data_format)
    out = [conv_util.output_size(size, k, s, 1, win.padding)[0]
           for size, k, s in zip(spatial, win.ksize, win.strides)]
    return join_ndhwc(n, out, c, data_format)


def _rank5(x: np.ndarray, what: str) -> None:
    if x.ndim != 5:
        raise ValueError(f"{what} must be 5-D, got shape {list(x.shape)}")


def _pool3d_shape(input, *, ksize, strides, padding, data_format):
    """Shape function of MaxPool3D and AvgPool3D."""
    return _pooled_shape(input, window(ksize, strides, padding, data_format), data_format)


def _forward_kernel(op_name: str, pool):
    """Kernel factory of the forward op `op_name`: `pool(x, window)` on channels-last `x`."""

    def factory(ksize, strides, padding, data_format):
        win = window(ksize, strides, padding, data_format)
        last = data_format == "NDHWC"

        def pool3d(x):
            _rank5(x, f"{op_name}: input")
            y = pool(conv3d_kernels.to_channels_last(x, last), win)
            return conv3d_kernels.from_channels_last(y, last)

        return pool3d

    return factory


# -- MaxPool3D ------------------------------------------------------------------------------

MaxPool3D = define_op("MaxPool3D", inputs=["input: T"], outputs=["output: T"],
                      attrs=[*_WINDOW, f"T: {_FLOAT}"])


MaxPool3D.shape_fn(_pool3d_shape)
MaxPool3D.kernel(factory=True)(_forward_kernel("MaxPool3D", conv3d_kernels.max_pool))


MaxPool3DGrad = define_op(
    "MaxPool3DGrad", inputs=["orig_input: TInput", "orig_output: TInput", "grad: T"],
    outputs=["output: T"],
    attrs=[*_WINDOW, f"T: {_FLOAT} = float32", f"TInput: {_FLOAT} = float32"])


@MaxPool3DGrad.shape_fn
def _max_pool3d_grad_shape(orig_input, orig_output, grad, *, ksize, strides, padding,
                           data_format):
    window(ksize, strides, padding, data_format)
    return orig_input.with_rank(5)


@MaxPool3DGrad.kernel(factory=True)
def _max_pool3d_grad_kernel(ksize, strides, padding, data_format):
    win = window(ksize, strides, padding, data_format)
    last = data_format == "NDHWC"

    def max_pool3d_grad(x, y, g):
        _rank5(x, "MaxPool3DGrad: orig_input")
        x, y, g = (conv3d_kernels.to_channels_last(v, last) for v in (x, y, g))
        dx = conv3d_kernels.max_pool_grad_all_maxima(x, y, g, win)
        return conv3d_kernels.from_channels_last(dx, last)

    return max_pool3d_grad


MaxPool3DGradGrad = define_op(
    "MaxPool3DGradGrad", inputs=["orig_input: T", "orig_output: T", "grad: T"],
    outputs=["output: T"], attrs=[*_WINDOW, f"T: {_REAL}"])


@MaxPool3DGradGrad.shape_fn
def _max_pool3d_grad_grad_shape(orig_input, orig_output, grad, *, ksize, strides, padding,
                                data_format):
    win = window(ksize, strides, padding, data_format)
    return _pooled_shape(orig_input, win, data_format).merge_with(orig_output.with_rank(5))


@MaxPool3DGradGrad.kernel(factory=True)
def _max_pool3d_grad_grad_kernel(ksize, strides, padding, data_format):
    win = window(ksize, strides, padding, data_format)
    last = data_format == "NDHWC"

    def max_pool3d_grad_grad(x, y, gg):
        _rank5(x, "MaxPool3DGradGrad: orig_input")
        if gg.shape != x.shape:
            raise ValueError(f"MaxPool3DGradGrad: grad shape {list(gg.shape)} must equal the "
                             f"input shape {list(x.shape)}")
        x, gg = (conv3d_kernels.to_channels_last(v, last) for v in (x, gg))
        out = conv3d_kernels.max_pool_grad_grad(x, gg, win)
        return conv3d_kernels.from_channels_last(out, last)

    return max_pool3d_grad_grad


# -- AvgPool3D ------------------------------------------------------------------------------

AvgPool3D = define_op("AvgPool3D", inputs=["input: T"], outputs=["output: T"],
                      attrs=[*_WINDOW, f"T: {_FLOAT}"])


AvgPool3D.shape_fn(_pool3d_shape)
AvgPool3D.kernel(factory=True)(_forward_kernel("AvgPool3D", conv3d_kernels.avg_pool))


AvgPool3DGrad = define_op(
    "AvgPool3DGrad", inputs=["orig_input_shape: int32", "grad: T"], outputs=["output: T"],
    attrs=[*_WINDOW, f"T: {_FLOAT}"])


@AvgPool3DGrad.shape_fn(value_inputs=("orig_input_shape",))
def _avg_pool3d_grad_shape(orig_input_shape, grad, *, ksize, strides, padding, data_format):
    window(ksize, strides, padding, data_format)
    if orig_input_shape is None:
        return TensorShape([None] * 5)
    return TensorShape([int(v) for v in np.asarray(orig_input_shape).reshape(-1)]).with_rank(5)


@AvgPool3DGrad.kernel(factory=True)
def _avg_pool3d_grad_kernel(ksize, strides, padding, data_format):
    win = window(ksize, strides, padding, data_format)
    last = data_format == "NDHWC"

    def avg_pool3d_grad(orig_input_shape, g):
        sizes = [int(v) for v in np.asarray(orig_input_shape).reshape(-1)]
        if len(sizes) != 5:
            raise ValueError(f"AvgPool3DGrad: orig_input_shape must have 5 elements, got "
                             f"{sizes}")
        n, spatial, c = split_ndhwc(TensorShape(sizes), data_format)
        g = conv3d_kernels.to_channels_last(g, last)
        dx = conv3d_kernels.avg_pool_grad((n, *spatial, c), g, win)
        return conv3d_kernels.from_channels_last(dx, last)

    return avg_pool3d_grad


# -- gradients ------------------------------------------------------------------------------


def _attrs(op) -> dict:
    return {name: op.get_attr_str(name) for name in ("ksize", "strides", "padding", "data_format")}


@MaxPool3D.gradient
def _max_pool3d_grad(op, grad):
    return MaxPool3DGrad(op.inputs[0], op.outputs[0], grad, **_attrs(op))


@MaxPool3DGrad.gradient
def _max_pool3d_grad_grad(op, grad):
    x, y, _ = op.inputs
    return (array_ops.zeros_like(x), array_ops.zeros_like(y),
            MaxPool3DGradGrad(x, y, grad, **_attrs(op)))


@MaxPool3DGradGrad.gradient
def _max_pool3d_grad_grad_grad(op, grad):
    x, y, _ = op.inputs
    return (array_ops.zeros_like(x), array_ops.zeros_like(y),
            MaxPool3DGrad(x, y, grad, **_attrs(op)))


@AvgPool3D.gradient
def _avg_pool3d_grad(op, grad):
    shape = array_ops.shape(op.inputs[0], out_type=dtypes.int32)
    return AvgPool3DGrad(shape, grad, **_attrs(op))


@AvgPool3DGrad.gradient
def _avg_pool3d_grad_grad(op, grad):
    return None, AvgPool3D(grad, **_attrs(op))


# -- wrappers -------------------------------------------------------------------------------


def pool_attrs(ksize, strides, padding, data_format) -> dict:
    data_format = data_format or "NDHWC"
    padding = padding.decode() if isinstance(padding, bytes) else padding
    return dict(ksize=conv_util.sequence_attr(ksize, "ksize", data_format, 3),
                strides=conv_util.sequence_attr(strides, "strides", data_format, 3),
                padding=padding.upper(), data_format=data_format)


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    """Max pooling over the three spatial dimensions of a 5-D tensor.

    Args:
        input: `[batch, depth, height, width, channels]` (or NCDHW).
        ksize, strides: an int or 1, 3 or 5 ints (batch and channel entries 1).
        padding: 'SAME' or 'VALID'.
        data_format: 'NDHWC' (default) or 'NCDHW'.

    Returns:
        The pooled tensor.

    Example: `tf.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "VALID")`.
    """
    return MaxPool3D(input, name=name, **pool_attrs(ksize, strides, padding, data_format))


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    """Average pooling over three spatial dimensions; SAME windows average real inputs only.

    Example: `tf.nn.avg_pool3d(x, 2, 2, "SAME")`.
    """
    return AvgPool3D(input, name=name, **pool_attrs(ksize, strides, padding, data_format))
