"""Composite tf.nn functions over existing ops: conv_transpose, atrous_conv2d_transpose,
with_space_to_batch (and tf.required_space_to_batch_paddings), depthwise backprop aliases and
batch_norm_with_global_normalization; plus TF's legacy BatchNormWithGlobalNormalization op (and
its gradient op), which old GraphDefs (producer version < 9, e.g. Inception v3) contain.
"""

from __future__ import annotations

import numbers

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import gather_scatter as gather_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.array.space_batch import batch_to_space_nd, space_to_batch_nd
from tensorflux.ops.nn.conv import (
    conv2d_backprop_input,
    conv2d_transpose,
    depthwise_conv2d_native_backprop_filter,
    depthwise_conv2d_native_backprop_input,
)
from tensorflux.ops.nn.conv1d import conv1d_transpose
from tensorflux.ops.nn.conv3d import conv3d_transpose
from tensorflux.ops.nn.functions import batch_normalization

__all__ = ["conv_transpose", "atrous_conv2d_transpose", "with_space_to_batch",
           "required_space_to_batch_paddings", "depthwise_conv2d_backprop_input",
           "depthwise_conv2d_backprop_filter", "batch_norm_with_global_normalization"]



def depthwise_conv2d_backprop_input(input_sizes, filter, out_backprop, strides,  # noqa: A002
                                    padding, data_format="NHWC", dilations=(1, 1, 1, 1),
                                    name=None):
    """The gradient of depthwise_conv2d with respect to its input (TF1 alias of
    `depthwise_conv2d_native_backprop_input`)."""
    return depthwise_conv2d_native_backprop_input(input_sizes, filter, out_backprop, strides,
                                                  padding, data_format=data_format,
                                                  dilations=dilations, name=name)


def depthwise_conv2d_backprop_filter(input, filter_sizes, out_backprop, strides,  # noqa: A002
                                     padding, data_format="NHWC", dilations=(1, 1, 1, 1),
                                     name=None):
    """The gradient of depthwise_conv2d with respect to its filter (TF1 alias of
    `depthwise_conv2d_native_backprop_filter`)."""
    return depthwise_conv2d_native_backprop_filter(input, filter_sizes, out_backprop, strides,
                                                   padding, data_format=data_format,
                                                   dilations=dilations, name=name)


def batch_norm_with_global_normalization(t=None, m=None, v=None, beta=None, gamma=None,
                                         variance_epsilon=None, scale_after_normalization=None,
                                         name=None, input=None, mean=None,  # noqa: A002
                                         variance=None):
    """Batch normalization with given mean and variance (TF1's deprecated spelling).

    Args:
        t: the input (alias `input`).
        m: the mean (alias `mean`); v: the variance (alias `variance`).
        beta: the offset; gamma: the scale, used when `scale_after_normalization`.
        variance_epsilon: a small float added to the variance.
        scale_after_normalization: whether to multiply by `gamma`.
        name: optional name.

    Returns:
        `(t - m) * rsqrt(v + variance_epsilon) * gamma + beta`.

    Example:
        >>> tf.nn.batch_norm_with_global_normalization(x, m, v, beta, gamma, 1e-3, True)
    """
    t = input if t is None else t
    m = mean if m is None else m
    v = variance if v is None else v
    return batch_normalization(t, m, v, beta, gamma if scale_after_normalization else None,
                               variance_epsilon, name=name or "batchnorm")


_BN_ATTRS = ["T: {float16, float32, float64}", "variance_epsilon: float",
             "scale_after_normalization: bool"]

BatchNormWithGlobalNormalization = define_op(
    "BatchNormWithGlobalNormalization",
    inputs=["t: T", "m: T", "v: T", "beta: T", "gamma: T"], outputs=["result: T"],
    attrs=_BN_ATTRS)


def _bn_depth(t, vectors):
    t = t.with_rank(4)
    depth = t[3]
    for vector in vectors:
        depth = depth.merge_with(vector.with_rank(1)[0])
    return t, depth


@BatchNormWithGlobalNormalization.shape_fn
def _batch_norm_global_shape(t, m, v, beta, gamma):
    t, depth = _bn_depth(t, (m, v, beta, gamma))
    return TensorShape(list(t._dim_list[:3]) + [depth])


def _check_bn(t, vectors):
    if t.ndim != 4 or any(x.shape != (t.shape[3],) for x in vectors):
        raise errors.InvalidArgumentError(
            None, None, f"t must be 4-D and m, v, beta, gamma 1-D of its depth, got "
                        f"{list(t.shape)} and {[list(x.shape) for x in vectors]}")


@BatchNormWithGlobalNormalization.kernel
def _batch_norm_global_kernel(t, m, v, beta, gamma, *, variance_epsilon,
                              scale_after_normalization):
    _check_bn(t, (m, v, beta, gamma))
    scale = 1.0 / np.sqrt(v + np.asarray(variance_epsilon, t.dtype))
    if scale_after_normalization:
        scale = scale * gamma
    return ((t - m) * scale + beta).astype(t.dtype)


BatchNormWithGlobalNormalizationGrad = define_op(
    "BatchNormWithGlobalNormalizationGrad",
    inputs=["t: T", "m: T", "v: T", "gamma: T", "backprop: T"],
    outputs=["dx: T", "dm: T", "dv: T", "db: T", "dg: T"], attrs=_BN_ATTRS,
    differentiable=False)


@BatchNormWithGlobalNormalizationGrad.shape_fn
def _batch_norm_global_grad_shape(t, m, v, gamma, backprop):
    t, depth = _bn_depth(t.merge_with(backprop), (m, v, gamma))
    vector = TensorShape([depth])
    return [TensorShape(list(t._dim_list[:3]) + [depth]), vector, vector, vector, vector]


@BatchNormWithGlobalNormalizationGrad.kernel
def _batch_norm_global_grad_kernel(t, m, v, gamma, backprop, *, variance_epsilon,
                                   scale_after_normalization):
    _check_bn(t, (m, v, gamma))
    axes = (0, 1, 2)
    rstd = 1.0 / np.sqrt(v + np.asarray(variance_epsilon, t.dtype))
    centered = t - m
    g = gamma if scale_after_normalization else np.ones_like(gamma)
    dx = backprop * (g * rstd)
    db = backprop.sum(axis=axes)
    dm = -dx.sum(axis=axes)
    dv = (backprop * centered).sum(axis=axes) * g * (-0.5 * rstd ** 3)
    dg = (backprop * centered).sum(axis=axes) * rstd if scale_after_normalization else \
        np.zeros_like(gamma)
    return tuple(x.astype(t.dtype) for x in (dx, dm, dv, db, dg))


@BatchNormWithGlobalNormalization.gradient
def _batch_norm_global_grad(op, grad):
    t, m, v, _, gamma = op.inputs
    dx, dm, dv, db, dg = BatchNormWithGlobalNormalizationGrad(
        t, m, v, gamma, grad, variance_epsilon=op.get_attr("variance_epsilon"),
        scale_after_normalization=op.get_attr("scale_after_normalization"))
    return [dx, dm, dv, db, dg]


def _expand(values, n, channels_first, what):
    """An int or n-list of spatial values as the full (n + 2)-element attr list."""
    if values is None:
        values = 1
    if isinstance(values, numbers.Integral):
        values = [int(values)] * n
    values = [int(v) for v in values]
    if len(values) == n + 2:
        return values
    if len(values) != n:
        raise ValueError(f"conv_transpose: {what} must be an int or have {n} or {n + 2} "
                         f"elements, got {values}")
    return [1, 1] + values if channels_first else [1] + values + [1]


def conv_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                   data_format=None, dilations=None, name=None):
    """The transpose of `convolution`, dispatched to the 1-D, 2-D or 3-D version by rank.

    Args:
        input: `[batch, spatial..., in_channels]` (or channels-first) tensor of rank 3 to 5.
        filters: `[spatial..., output_channels, in_channels]`.
        output_shape: the output shape (a list or 1-D int tensor of rank + 2 elements).
        strides: an int, or N or N + 2 ints.
        padding: "SAME" or "VALID".
        data_format: defaults to channels-last ("NWC", "NHWC" or "NDHWC").
        dilations: an int, or N or N + 2 ints.
        name: optional name.

    Returns:
        A tensor of `output_shape`.

    Raises:
        ValueError: the rank is unknown or not 3, 4 or 5.

    Example:
        >>> tf.nn.conv_transpose(x, w, [1, 8, 8, 3], strides=2)
    """
    with _scope(name, "conv_transpose"):
        input = convert_to_tensor(input, name="input")  # noqa: A001
        rank = input.shape.ndims
        if rank is None:
            length = output_shape.shape._dim_list[0] if isinstance(output_shape, Tensor) else \
                len(output_shape)
            rank = None if length is None else int(length)
        if rank not in (3, 4, 5):
            raise ValueError(f"conv_transpose: input must be of rank 3, 4 or 5, got {rank}")
        n = rank - 2
        channels_first = bool(data_format) and data_format.startswith("NC")
        strides = _expand(strides, n, channels_first, "strides")
        dilations = _expand(dilations, n, channels_first, "dilations")
        if n == 1:
            return conv1d_transpose(input, filters, output_shape, strides,
                                    padding=padding, data_format=data_format or "NWC",
                                    dilations=dilations)
        if n == 2:
            return conv2d_transpose(input, filters, output_shape, strides, padding=padding,
                                    data_format=data_format or "NHWC", dilations=dilations)
        return conv3d_transpose(input, filters, output_shape, strides, padding=padding,
                                data_format=data_format or "NDHWC", dilations=dilations)


def atrous_conv2d_transpose(value, filters, output_shape, rate, padding, name=None):
    """The transpose of `atrous_conv2d`: Conv2DBackpropInput with dilation `rate`.

    Args:
        value: `[batch, in_height, in_width, in_channels]` (NHWC).
        filters: `[filter_height, filter_width, out_channels, in_channels]`.
        output_shape: the 4-D output shape.
        rate: a positive int, the filter dilation.
        padding: "SAME" or "VALID".
        name: optional name.

    Returns:
        A tensor of `output_shape`.

    Raises:
        ValueError: `rate` is not positive, bad padding or mismatched channels.

    Example:
        >>> tf.nn.atrous_conv2d_transpose(x, w, [1, 9, 9, 2], rate=2, padding="SAME")
    """
    if not isinstance(rate, numbers.Integral) or rate < 1:
        raise ValueError(f"atrous_conv2d_transpose: rate must be a positive int, got {rate}")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"atrous_conv2d_transpose: padding must be 'SAME' or 'VALID', got "
                         f"{padding!r}")
    with _scope(name, "AtrousConv2DTranspose") as scope:
        value = convert_to_tensor(value, name="value")
        filters = convert_to_tensor(filters, name="filters")
        depth, out_depth = value.shape.with_rank(4)[3], filters.shape.with_rank(4)[3]
        if not depth.is_compatible_with(out_depth):
            raise ValueError(f"atrous_conv2d_transpose: value has {depth} channels but filters "
                             f"expect {out_depth}")
        if not isinstance(output_shape, Tensor):
            output_shape = convert_to_tensor(np.asarray(output_shape, np.int32),
                                             name="output_shape")
        return conv2d_backprop_input(output_shape, filters, value, [1, 1, 1, 1], padding,
                                     dilations=[1, rate, rate, 1], name=scope)


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None, name=None):
    """Paddings and crops that make the padded spatial shape divisible by `block_shape`.

    Args:
        input_shape: int32 `[N]` spatial sizes.
        block_shape: int32 `[N]` block sizes.
        base_paddings: optional int32 `[N, 2]` minimal paddings (zeros by default).
        name: optional name.

    Returns:
        `(paddings, crops)`, both int32 `[N, 2]`: `paddings` extends `base_paddings` at the
        end so each padded size is a multiple of its block; `crops` is `[0, extra]`.

    Example:
        >>> tf.required_space_to_batch_paddings([5], [2])   # ([[0, 1]], [[0, 1]])
    """
    with _scope(name, "required_space_to_batch_paddings"):
        input_shape = math_ops.cast(convert_to_tensor(input_shape, name="input_shape"),
                                    dtypes.int32)
        block_shape = math_ops.cast(convert_to_tensor(block_shape, name="block_shape"),
                                    dtypes.int32)
        if base_paddings is None:
            base_paddings = array_ops.zeros_like(concat_ops.stack([block_shape, block_shape], 1))
        base_paddings = math_ops.cast(convert_to_tensor(base_paddings, name="base_paddings"),
                                      dtypes.int32)
        start, end = base_paddings[:, 0], base_paddings[:, 1]
        full = input_shape + start + end
        extra = (block_shape - full % block_shape) % block_shape
        paddings = concat_ops.stack([start, end + extra], 1, name="paddings")
        crops = concat_ops.stack([array_ops.zeros_like(extra), extra], 1, name="crops")
    return paddings, crops


def _static_ints(tensor):
    value = constant_value(tensor)
    return None if value is None else [int(v) for v in np.asarray(value).reshape(-1)]


def with_space_to_batch(input, dilation_rate, padding, op, filter_shape=None,  # noqa: A002
                        spatial_dims=None, data_format=None):
    """Runs `op` on a space-to-batch view of `input`: a dilated `op` from an undilated one.

    `op(converted_input, num_spatial_dims, padding)` is called once; with all rates 1 it sees
    `input` and `padding` unchanged, otherwise `input` after SpaceToBatchND by
    `dilation_rate` (padded as `padding` and `filter_shape` require) and padding "VALID", and
    its result goes back through BatchToSpaceND.

    Args:
        input: tensor of rank at least `spatial_dims[-1] + 1`.
        dilation_rate: int32 `[N]` positive rates.
        padding: "SAME" or "VALID".
        op: the function to run.
        filter_shape: int32 `[N]` spatial filter size (required for "SAME").
        spatial_dims: the N increasing spatial dimensions (default 1..N, or 2..N+1 when
            `data_format` starts with "NC").
        data_format: picks the default `spatial_dims`.

    Returns:
        The (converted back) result of `op`.

    Raises:
        ValueError: bad rates, padding, spatial_dims or a missing `filter_shape`.

    Example:
        >>> conv = lambda x, n, p: tf.nn.conv2d(x, w, [1, 1, 1, 1], p)
        >>> y = tf.nn.with_space_to_batch(x, [2, 2], "SAME", conv, filter_shape=[3, 3])
    """
    input = convert_to_tensor(input, name="input")  # noqa: A001
    rate = math_ops.cast(convert_to_tensor(dilation_rate, name="dilation_rate"), dtypes.int32)
    if rate.shape.ndims != 1 or rate.shape._dim_list[0] is None:
        raise ValueError("with_space_to_batch: dilation_rate must be a 1-D tensor of known "
                         "size")
    n = int(rate.shape._dim_list[0])
    if spatial_dims is None:
        first = 2 if data_format is not None and data_format.startswith("NC") else 1
        spatial_dims = list(range(first, first + n))
    spatial_dims = [int(d) for d in spatial_dims]
    if len(spatial_dims) != n or spatial_dims != sorted(set(spatial_dims)) or \
            spatial_dims[0] < 1:
        raise ValueError(f"with_space_to_batch: spatial_dims must be {n} increasing dimensions "
                         f">= 1, got {spatial_dims}")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"with_space_to_batch: padding must be 'SAME' or 'VALID', got "
                         f"{padding!r}")
    static_rate = _static_ints(rate)
    if static_rate is not None and any(r < 1 for r in static_rate):
        raise ValueError(f"with_space_to_batch: dilation_rate must be positive, got "
                         f"{static_rate}")
    if static_rate is not None and all(r == 1 for r in static_rate):
        return op(input, n, padding)
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError("with_space_to_batch: filter_shape must be given for SAME "
                             "padding")
        filter_shape = math_ops.cast(convert_to_tensor(filter_shape, name="filter_shape"),
                                     dtypes.int32)
        total = (filter_shape - 1) * rate
        base = concat_ops.stack([total // 2, total - total // 2], 1)
    else:
        base = None
    input_spatial = gather_ops.gather(shape_ops.shape(input, out_type=dtypes.int32),
                                      spatial_dims)
    paddings, crops = required_space_to_batch_paddings(input_spatial, rate, base)
    # Non-spatial dimensions between 1 and the last spatial one get block 1 and no padding.
    block, pads, cuts = [], [], []
    zero_pair = array_ops.zeros([1, 2], dtypes.int32)
    for dim in range(1, spatial_dims[-1] + 1):
        if dim in spatial_dims:
            k = spatial_dims.index(dim)
            block.append(rate[k:k + 1])
            pads.append(paddings[k:k + 1])
            cuts.append(crops[k:k + 1])
        else:
            block.append(array_ops.ones([1], dtypes.int32))
            pads.append(zero_pair)
            cuts.append(zero_pair)
    block = concat_ops.concat(block, 0)
    converted = space_to_batch_nd(input, block, concat_ops.concat(pads, 0))
    result = op(converted, n, "VALID")
    return batch_to_space_nd(result, block, concat_ops.concat(cuts, 0))
