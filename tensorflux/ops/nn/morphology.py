"""Grayscale morphology: Dilation2D and its input/filter gradients; dilation2d, erosion2d.

`output[b, y, x, c] = max over (i, j) of input[b, y*sh + i*rh - top, x*sw + j*rw - left, c] +
filter[i, j, c]`, with positions outside the input ignored (SAME padding). The kernels take one
strided slice per filter tap (a loop over taps, not elements) keeping a running maximum and the
winning tap; gradients route each output gradient to the winning input position and filter tap
(the first maximum in tap order, as in TensorFlow).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.numerics.window import output_size, spatial_pair
from tensorflux.ops.array.padding import reverse
from tensorflux.ops.math.unary import negative

__all__ = ["dilation2d", "erosion2d"]

_TYPES = "{float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64}"
_ATTRS = [f"T: {_TYPES}", "strides: list(int) >= 4", "rates: list(int) >= 4",
          "padding: {'SAME', 'VALID'}"]


def _geometry(strides, rates, padding):
    return (spatial_pair(strides, "NHWC", "strides"), spatial_pair(rates, "NHWC", "rates"),
            padding)


def _out_shape(input, filter, strides, rates, padding):
    n, h, w, c = input.with_rank(4).as_list()
    kh, kw, fc = filter.with_rank(3).as_list()
    if c is not None and fc is not None and c != fc:
        raise ValueError(f"input depth {c} and filter depth {fc} must be the same")
    (sh, sw), (rh, rw), _ = _geometry(strides, rates, padding)
    out_h = None if kh is None else output_size(h, kh, sh, rh, padding)[0]
    out_w = None if kw is None else output_size(w, kw, sw, rw, padding)[0]
    return TensorShape([n, out_h, out_w, c if c is not None else fc])


def _plan(x_shape, f_shape, strides, rates, padding):
    """Output size, padding and per-tap slices/validity for concrete shapes."""
    if len(x_shape) != 4 or len(f_shape) != 3:
        raise errors.InvalidArgumentError(
            None, None, f"input must be 4-D and filter 3-D, got shapes {list(x_shape)} and "
                        f"{list(f_shape)}")
    if x_shape[3] != f_shape[2]:
        raise errors.InvalidArgumentError(
            None, None, f"input and filter must have the same depth: {x_shape[3]} vs "
                        f"{f_shape[2]}")
    (sh, sw), (rh, rw), _ = _geometry(strides, rates, padding)
    try:
        out_h, top, _ = output_size(x_shape[1], f_shape[0], sh, rh, padding)
        out_w, left, _ = output_size(x_shape[2], f_shape[1], sw, rw, padding)
    except ValueError as err:
        raise errors.InvalidArgumentError(None, None, str(err)) from None
    rows = np.arange(out_h) * sh - top
    cols = np.arange(out_w) * sw - left
    taps = []
    for i in range(f_shape[0]):
        for j in range(f_shape[1]):
            r, c = rows + i * rh, cols + j * rw
            valid = ((r >= 0) & (r < x_shape[1]))[:, None] & ((c >= 0) & (c < x_shape[2]))
            taps.append((i, j, np.clip(r, 0, x_shape[1] - 1), np.clip(c, 0, x_shape[2] - 1),
                         valid))
    return (out_h, out_w), taps


def _lowest(dtype):
    # NOTE: a window with no tap inside the input yields the lowest finite value (as in TF).
    return np.finfo(dtype).min if np.issubdtype(dtype, np.floating) else np.iinfo(dtype).min


def _forward(x, f, strides, rates, padding):
    """Running max over taps: (output, winning tap index per output)."""
    (out_h, out_w), taps = _plan(x.shape, f.shape, strides, rates, padding)
    out = np.full((x.shape[0], out_h, out_w, x.shape[3]), _lowest(x.dtype), x.dtype)
    best = np.zeros(out.shape, np.int64)
    have = np.zeros(out.shape, bool)
    for k, (i, j, r, c, valid) in enumerate(taps):
        with np.errstate(over="ignore"):
            value = x[:, r[:, None], c[None, :], :] + f[i, j]
        better = valid[None, :, :, None] & (~have | (value > out))
        have |= better
        np.copyto(out, value, where=better)
        np.copyto(best, k, where=better)
    return out, best, taps


Dilation2D = define_op("Dilation2D", inputs=["input: T", "filter: T"], outputs=["output: T"],
                       attrs=_ATTRS)


@Dilation2D.shape_fn
def _dilation2d_shape(input, filter, *, strides, rates, padding):
    return _out_shape(input, filter, strides, rates, padding)


@Dilation2D.kernel
def _dilation2d_kernel(input, filter, *, strides, rates, padding):
    return _forward(input, filter, strides, rates, padding)[0]


Dilation2DBackpropInput = define_op(
    "Dilation2DBackpropInput", inputs=["input: T", "filter: T", "out_backprop: T"],
    outputs=["in_backprop: T"], attrs=_ATTRS, differentiable=False)


def _check_backprop(out, out_backprop):
    if out.shape != out_backprop.shape:
        raise errors.InvalidArgumentError(
            None, None, f"out_backprop has shape {list(out_backprop.shape)} but the output "
                        f"has shape {list(out.shape)}")


@Dilation2DBackpropInput.shape_fn
def _dilation2d_backprop_input_shape(input, filter, out_backprop, *, strides, rates, padding):
    out_backprop.merge_with(_out_shape(input, filter, strides, rates, padding))
    return input.with_rank(4)


@Dilation2DBackpropInput.kernel
def _dilation2d_backprop_input_kernel(input, filter, out_backprop, *, strides, rates, padding):
    out, best, taps = _forward(input, filter, strides, rates, padding)
    _check_backprop(out, out_backprop)
    rows = np.stack([t[2] for t in taps])[best, np.arange(out.shape[1])[None, :, None, None]]
    cols = np.stack([t[3] for t in taps])[best, np.arange(out.shape[2])[None, None, :, None]]
    n, h, w, c = input.shape
    flat = ((np.arange(n)[:, None, None, None] * h + rows) * w + cols) * c + \
        np.arange(c)[None, None, None, :]
    grad = np.bincount(flat.reshape(-1), weights=out_backprop.reshape(-1).astype(np.float64),
                       minlength=input.size)
    return grad.reshape(input.shape).astype(input.dtype)


Dilation2DBackpropFilter = define_op(
    "Dilation2DBackpropFilter", inputs=["input: T", "filter: T", "out_backprop: T"],
    outputs=["filter_backprop: T"], attrs=_ATTRS, differentiable=False)


@Dilation2DBackpropFilter.shape_fn
def _dilation2d_backprop_filter_shape(input, filter, out_backprop, *, strides, rates, padding):
    out_backprop.merge_with(_out_shape(input, filter, strides, rates, padding))
    return filter.with_rank(3)


@Dilation2DBackpropFilter.kernel
def _dilation2d_backprop_filter_kernel(input, filter, out_backprop, *, strides, rates, padding):
    out, best, _ = _forward(input, filter, strides, rates, padding)
    _check_backprop(out, out_backprop)
    c = filter.shape[2]
    flat = best * c + np.arange(c)
    grad = np.bincount(flat.reshape(-1), weights=out_backprop.reshape(-1).astype(np.float64),
                       minlength=filter.size)
    return grad.reshape(filter.shape).astype(filter.dtype)


@Dilation2D.gradient
def _dilation2d_grad(op, grad):
    attrs = {name: op.get_attr_str(name) for name in ("strides", "rates", "padding")}
    x, f = op.inputs
    return [Dilation2DBackpropInput(x, f, grad, **attrs),
            Dilation2DBackpropFilter(x, f, grad, **attrs)]


def _pick(new, new_name, old, old_name, what):
    if new is not None and old is not None:
        raise ValueError(f"{what}: pass only one of {old_name} and {new_name}")
    return new if new is not None else old


def dilation2d(input, filter=None, strides=None, rates=None, padding=None, name=None,  # noqa: A002
               filters=None, dilations=None):
    """Grayscale dilation of a 4-D NHWC `input` by a 3-D `filter` (max of input + filter).

    Args:
        input: `[batch, in_height, in_width, depth]` real tensor.
        filter: `[filter_height, filter_width, depth]` structuring function (alias `filters`).
        strides: 4 ints `[1, stride_h, stride_w, 1]`.
        rates: 4 ints `[1, rate_h, rate_w, 1]`: the input stride of the filter taps (alias
            `dilations`).
        padding: "SAME" or "VALID".
        name: optional name.

    Returns:
        A `[batch, out_height, out_width, depth]` tensor of the input's dtype.

    Raises:
        ValueError: bad strides/rates, mismatched depths or both spellings of an argument.

    Example:
        >>> tf.nn.dilation2d(images, kernel, [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
    """
    filter = _pick(filters, "filters", filter, "filter", "dilation2d")  # noqa: A001
    rates = _pick(dilations, "dilations", rates, "rates", "dilation2d")
    with graph_mod.get_default_graph().name_scope(name or "dilation2d"):
        input = convert_to_tensor(input, name="input")  # noqa: A001
        filter = convert_to_tensor(filter, dtype=input.dtype.base_dtype, name="filter")  # noqa: A001
        return Dilation2D(input, filter, strides=list(strides), rates=list(rates),
                          padding=padding)


def erosion2d(value, kernel, strides, rates, padding, name=None):
    """Grayscale erosion: `-dilation2d(-value, reversed kernel)` (min of value - kernel).

    Args:
        value: `[batch, in_height, in_width, depth]` float tensor.
        kernel: `[kernel_height, kernel_width, depth]`.
        strides: 4 ints `[1, stride_h, stride_w, 1]`.
        rates: 4 ints `[1, rate_h, rate_w, 1]`.
        padding: "SAME" or "VALID".
        name: optional name.

    Returns:
        A `[batch, out_height, out_width, depth]` tensor.

    Example:
        >>> tf.nn.erosion2d(images, kernel, [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
    """
    with graph_mod.get_default_graph().name_scope(name or "erosion2d"):
        value = convert_to_tensor(value, name="value")
        kernel = convert_to_tensor(kernel, dtype=value.dtype.base_dtype, name="kernel")
        flipped = reverse(kernel, [0, 1])
        return negative(Dilation2D(negative(value), flipped,
                                            strides=list(strides), rates=list(rates),
                                            padding=padding))
