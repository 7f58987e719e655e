"""MaxPoolWithArgmax, its gradient ops, and tf.nn.max_pool_with_argmax.

The argmax of each output is the flat index of its window's first maximum (scan order) in
the unpadded NHWC input: `((b * height + y) * width + x) * channels + c`, where the `b *`
term is present only with `include_batch_in_index=True`. The gradient routes each output
gradient to that index (MaxPoolGradWithArgmax); its gradient reads the input-shaped gradient
at each index (MaxPoolGradGradWithArgmax).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.numerics import conv_nd as conv3d_kernels
from tensorflux.lib.numerics import window as conv_util
from tensorflux.ops import array as array_ops

__all__ = ["max_pool_with_argmax"]

_T = ("T: {float32, float64, int32, uint8, int16, int8, int64, bfloat16, uint16, float16, "
      "uint32, uint64}")
_ATTRS = ["ksize: list(int) >= 4", "strides: list(int) >= 4", "padding: {'SAME', 'VALID'}",
          "include_batch_in_index: bool = False"]


def _window(ksize, strides, padding) -> conv3d_kernels.WindowND:
    return conv3d_kernels.WindowND(
        ksize=conv3d_kernels.spatial_attr(ksize, "NHWC", "ksize", 2),
        strides=conv3d_kernels.spatial_attr(strides, "NHWC", "strides", 2),
        dilations=(1, 1), padding=padding)


def _pooled_shape(input: TensorShape, win) -> TensorShape:
    n, h, w, c = input.with_rank(4).as_list()
    out_h = conv_util.output_size(h, win.ksize[0], win.strides[0], 1, win.padding)[0]
    out_w = conv_util.output_size(w, win.ksize[1], win.strides[1], 1, win.padding)[0]
    return TensorShape([n, out_h, out_w, c])


def _batch_offsets(shape, n: int, include_batch: bool) -> np.ndarray:
    """Per-batch offsets added to an argmax that does not include the batch."""
    if include_batch:
        return np.zeros((n, 1), dtype=np.int64)
    return (np.arange(n, dtype=np.int64) * int(np.prod(shape[1:])))[:, None]


def _flat_argmax(argmax: np.ndarray, input_shape, include_batch: bool, what: str):
    n = input_shape[0]
    flat = argmax.reshape(n, -1).astype(np.int64) + _batch_offsets(input_shape, n,
                                                                   include_batch)
    size = int(np.prod(input_shape))
    if flat.size and (flat.min() < 0 or flat.max() >= size):
        raise ValueError(f"{what}: argmax values must index the input of shape "
                         f"{list(input_shape)} (include_batch_in_index={include_batch})")
    return flat.reshape(-1)


MaxPoolWithArgmax = define_op(
    "MaxPoolWithArgmax", inputs=["input: T"], outputs=["output: T", "argmax: Targmax"],
    attrs=[*_ATTRS[:2], "Targmax: {int32, int64} = int64", *_ATTRS[2:], _T])


@MaxPoolWithArgmax.shape_fn
def _max_pool_with_argmax_shape(input, *, ksize, strides, padding, include_batch_in_index,
                                Targmax):
    shape = _pooled_shape(input, _window(ksize, strides, padding))
    return [shape, shape]


@MaxPoolWithArgmax.kernel(factory=True)
def _max_pool_with_argmax_kernel(ksize, strides, padding, include_batch_in_index, Targmax):
    win = _window(ksize, strides, padding)
    index_dtype = Targmax.as_numpy_dtype

    def max_pool_with_argmax(x):
        if x.ndim != 4:
            raise ValueError(f"MaxPoolWithArgmax: input must be 4-D, got shape {list(x.shape)}")
        return conv3d_kernels.max_pool_argmax(x, win, include_batch_in_index, index_dtype)

    return max_pool_with_argmax


MaxPoolGradWithArgmax = define_op(
    "MaxPoolGradWithArgmax", inputs=["input: T", "grad: T", "argmax: Targmax"],
    outputs=["output: T"], attrs=[*_ATTRS, "Targmax: {int32, int64}", _T])


@MaxPoolGradWithArgmax.shape_fn
def _max_pool_grad_with_argmax_shape(input, grad, argmax, *, ksize, strides, padding,
                                     include_batch_in_index, Targmax):
    win = _window(ksize, strides, padding)
    _pooled_shape(input, win).merge_with(grad.with_rank(4)).merge_with(argmax.with_rank(4))
    return input.with_rank(4)


@MaxPoolGradWithArgmax.kernel(factory=True)
def _max_pool_grad_with_argmax_kernel(ksize, strides, padding, include_batch_in_index,
                                      Targmax):
    _window(ksize, strides, padding)

    def max_pool_grad_with_argmax(x, grad, argmax):
        if grad.shape != argmax.shape:
            raise ValueError(f"MaxPoolGradWithArgmax: grad shape {list(grad.shape)} and argmax "
                             f"shape {list(argmax.shape)} differ")
        flat = _flat_argmax(argmax, x.shape, include_batch_in_index, "MaxPoolGradWithArgmax")
        if np.issubdtype(grad.dtype, np.floating):
            summed = np.bincount(flat, weights=grad.reshape(-1), minlength=x.size)
            return summed.astype(grad.dtype).reshape(x.shape)
        out = np.zeros(x.size, dtype=grad.dtype)
        np.add.at(out, flat, grad.reshape(-1))
        return out.reshape(x.shape)

    return max_pool_grad_with_argmax


MaxPoolGradGradWithArgmax = define_op(
    "MaxPoolGradGradWithArgmax", inputs=["input: T", "grad: T", "argmax: Targmax"],
    outputs=["output: T"], attrs=[*_ATTRS, "Targmax: {int32, int64}", _T])


@MaxPoolGradGradWithArgmax.shape_fn
def _max_pool_grad_grad_with_argmax_shape(input, grad, argmax, *, ksize, strides, padding,
                                          include_batch_in_index, Targmax):
    win = _window(ksize, strides, padding)
    input.with_rank(4).merge_with(grad.with_rank(4))
    return _pooled_shape(input, win).merge_with(argmax.with_rank(4))


@MaxPoolGradGradWithArgmax.kernel(factory=True)
def _max_pool_grad_grad_with_argmax_kernel(ksize, strides, padding, include_batch_in_index,
                                           Targmax):
    _window(ksize, strides, padding)

    def max_pool_grad_grad_with_argmax(x, grad, argmax):
        if grad.shape != x.shape:
            raise ValueError(f"MaxPoolGradGradWithArgmax: grad shape {list(grad.shape)} must "
                             f"equal the input shape {list(x.shape)}")
        flat = _flat_argmax(argmax, x.shape, include_batch_in_index,
                            "MaxPoolGradGradWithArgmax")
        return grad.reshape(-1)[flat].reshape(argmax.shape)

    return max_pool_grad_grad_with_argmax


def _attrs(op) -> dict:
    return {name: op.get_attr_str(name)
            for name in ("ksize", "strides", "padding", "include_batch_in_index")}


@MaxPoolWithArgmax.gradient
def _max_pool_with_argmax_grad(op, grad, unused_argmax_grad):
    return MaxPoolGradWithArgmax(op.inputs[0], grad, op.outputs[1], **_attrs(op))


@MaxPoolGradWithArgmax.gradient
def _max_pool_grad_with_argmax_grad(op, grad):
    x, _, argmax = op.inputs
    return (array_ops.zeros_like(x), MaxPoolGradGradWithArgmax(x, grad, argmax, **_attrs(op)),
            None)


@MaxPoolGradGradWithArgmax.gradient
def _max_pool_grad_grad_with_argmax_grad(op, grad):
    x, _, argmax = op.inputs
    return (array_ops.zeros_like(x), MaxPoolGradWithArgmax(x, grad, argmax, **_attrs(op)),
            None)


def max_pool_with_argmax(input, ksize, strides, padding, data_format="NHWC", Targmax=None,
                         name=None, output_dtype=None, include_batch_in_index=False):
    """Max pooling that also returns the flat index of each window's maximum.

    Args:
        input: 4-D `[batch, height, width, channels]` tensor.
        ksize, strides: an int or 1, 2 or 4 ints (batch and channel entries 1).
        padding: 'SAME' or 'VALID'.
        data_format: must be 'NHWC'.
        Targmax, output_dtype: index dtype, `tf.int64` (default) or `tf.int32`.
        include_batch_in_index: whether the flat index counts the batch dimension.

    Returns:
        `(output, argmax)`; argmax is `((b * height + y) * width + x) * channels + c`.

    Raises:
        ValueError: data_format other than 'NHWC', or both Targmax and output_dtype given.

    Example: `y, idx = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")`.
    """
    if data_format != "NHWC":
        raise ValueError("max_pool_with_argmax: data formats other than 'NHWC' are not yet "
                         f"supported, got {data_format!r}")
    if Targmax is not None and output_dtype is not None and Targmax != output_dtype:
        raise ValueError("max_pool_with_argmax: Targmax and output_dtype differ; pass one")
    dtype = Targmax if Targmax is not None else output_dtype
    padding = padding.decode() if isinstance(padding, bytes) else padding
    attrs = dict(ksize=conv_util.sequence_attr(ksize, "ksize", "NHWC"),
                 strides=conv_util.sequence_attr(strides, "strides", "NHWC"),
                 padding=padding.upper(), include_batch_in_index=include_batch_in_index)
    if dtype is not None:
        attrs["Targmax"] = dtype
    return MaxPoolWithArgmax(input, name=name, **attrs)
