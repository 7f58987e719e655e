"""contrib.layers layers without variables: pooling, flatten, dropout, one-hot, softmax,
unit_norm, and the `repeat` / `stack` combinators.

Name scopes follow TF 1.15 (`MaxPool2D`, `AvgPool2D`, `Flatten`, `Dropout`,
`OneHotEncoding`, `softmax`, `UnitNorm`); outputs go to `outputs_collections` under them.
"""

from __future__ import annotations

import numpy as np

from tensorflux.contrib.framework.arg_scope import add_arg_scope
from tensorflux.contrib.layers import utils
from tensorflux.framework import dtypes
from tensorflux.framework.scopes import name_scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import core as nn_ops
from tensorflux.ops.nn import functions as nn_impl
from tensorflux.ops.nn import pooling as pooling_ops
from tensorflux.ops.state import variable_scope as vs

__all__ = ["max_pool2d", "avg_pool2d", "flatten", "dropout", "one_hot_encoding", "softmax",
           "unit_norm", "repeat", "stack", "maxout"]


def _pool(pool_fn, default_name, inputs, kernel_size, stride, padding, data_format,
          outputs_collections, scope):
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"data_format has to be either NCHW or NHWC. Got {data_format!r}")
    with name_scope(scope, default_name, [inputs]) as sc:
        inputs = convert_to_tensor(inputs)
        if inputs.get_shape().ndims not in (None, 4):
            raise ValueError(f"{default_name}: inputs must have rank 4, got shape "
                             f"{inputs.get_shape()}")
        kh, kw = utils.two_element_tuple(kernel_size)
        sh, sw = utils.two_element_tuple(stride)
        if data_format == "NCHW":
            ksize, strides = [1, 1, kh, kw], [1, 1, sh, sw]
        else:
            ksize, strides = [1, kh, kw, 1], [1, sh, sw, 1]
        outputs = pool_fn(inputs, ksize, strides, padding, data_format=data_format)
        return utils.collect_named_outputs(outputs_collections, sc, outputs)


@add_arg_scope
def max_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC",
               outputs_collections=None, scope=None):
    """2-D max pooling (window `kernel_size`, default stride 2, padding "VALID").

    Raises:
        ValueError: bad data_format or rank.
    """
    return _pool(pooling_ops.max_pool, "MaxPool2D", inputs, kernel_size, stride, padding,
                 data_format, outputs_collections, scope)


@add_arg_scope
def avg_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC",
               outputs_collections=None, scope=None):
    """2-D average pooling (window `kernel_size`, default stride 2, padding "VALID").

    Raises:
        ValueError: bad data_format or rank.
    """
    return _pool(pooling_ops.avg_pool, "AvgPool2D", inputs, kernel_size, stride, padding,
                 data_format, outputs_collections, scope)


@add_arg_scope
def flatten(inputs, outputs_collections=None, scope=None):
    """Reshapes [batch, ...] to [batch, k], keeping the batch dimension.

    Raises:
        ValueError: unknown rank or rank < 2.
    """
    with name_scope(scope, "Flatten", [inputs]) as sc:
        inputs = convert_to_tensor(inputs)
        shape = inputs.get_shape()
        if shape.ndims is None or shape.ndims < 2:
            raise ValueError(f"Inputs must have a least 2 dimensions, got shape {shape}.")
        rest = shape[1:]
        if rest.is_fully_defined():
            outputs = array_ops.reshape(inputs, [-1, int(np.prod(rest.as_list()))])
            outputs.set_shape([shape[0].value, int(np.prod(rest.as_list()))])
        else:
            outputs = array_ops.reshape(inputs, array_ops.stack([array_ops.shape(inputs)[0],
                                                                 -1]))
        return utils.collect_named_outputs(outputs_collections, sc, outputs)


@add_arg_scope
def dropout(inputs, keep_prob=0.5, noise_shape=None, is_training=True,
            outputs_collections=None, scope=None, seed=None):
    """Drops units with probability 1 - keep_prob in training (scaling the rest), else identity.

    `is_training` may be a Python bool or a boolean tensor.
    """
    with vs.variable_scope(scope, "Dropout", [inputs]) as sc:
        inputs = convert_to_tensor(inputs)

        def dropped():
            return nn_impl.dropout(inputs, noise_shape=noise_shape, seed=seed,
                                   rate=1 - keep_prob)

        outputs = utils.smart_cond(is_training, dropped, lambda: array_ops.identity(inputs))
        return utils.collect_named_outputs(outputs_collections, sc.name, outputs)


@add_arg_scope
def one_hot_encoding(labels, num_classes, on_value=1.0, off_value=0.0,
                     outputs_collections=None, scope=None):
    """One-hot float encoding of integer `labels` (int32 labels are widened to int64)."""
    with name_scope(scope, "OneHotEncoding", [labels, num_classes]) as sc:
        labels = convert_to_tensor(labels)
        if labels.dtype == dtypes.int32:
            labels = math_ops.cast(labels, dtypes.int64)
        outputs = array_ops.one_hot(labels, num_classes, on_value=on_value,
                                    off_value=off_value)
        return utils.collect_named_outputs(outputs_collections, sc, outputs)


def softmax(logits, scope=None):
    """Softmax over the last axis of an N-D `logits` (computed on its 2-D reshape).

    Raises:
        ValueError: rank < 2 or unknown last dimension.
    """
    with vs.variable_scope(scope, "softmax", [logits]):
        logits = convert_to_tensor(logits)
        num_logits = utils.last_dimension(logits.get_shape(), min_rank=2)
        flat = array_ops.reshape(logits, [-1, num_logits])
        predictions = array_ops.reshape(nn_ops.softmax(flat), array_ops.shape(logits))
        predictions.set_shape(logits.get_shape())
        return predictions


@add_arg_scope
def unit_norm(inputs, dim, epsilon=1e-7, scope=None):
    """`inputs / sqrt(epsilon + sum(inputs ** 2, dim))`.

    Raises:
        ValueError: unknown rank or `dim` out of [0, rank).
    """
    with vs.variable_scope(scope, "UnitNorm", [inputs]):
        inputs = convert_to_tensor(inputs)
        rank = inputs.get_shape().ndims
        if rank is None:
            raise ValueError("The input rank must be known.")
        if dim < 0 or dim >= rank:
            raise ValueError("dim must be positive but smaller than the input rank.")
        lengths = math_ops.sqrt(epsilon + math_ops.reduce_sum(math_ops.square(inputs), dim,
                                                              keepdims=True))
        return math_ops.truediv(inputs, lengths)


def maxout(inputs, num_units, axis=-1, scope=None):
    """Maxout (Goodfellow et al. 2013): the channels of `axis` split into `num_units` groups
    of consecutive channels, each reduced to its maximum.

    As in TF 1.x the grouped channels are reshaped to a new last axis, so for `axis` other
    than the last one the result keeps TF's layout: `shape[axis] = num_units` and the max
    runs over a trailing axis of the reshaped input.

    Args:
        inputs: a tensor whose `axis` dimension is statically known.
        num_units: output features along `axis`; must divide that dimension.
        axis: the channel axis (default the last).
        scope: optional variable scope (default "MaxOut").

    Returns:
        The maxout tensor.

    Raises:
        ValueError: the number of features is not a multiple of `num_units`.
    """
    with vs.variable_scope(scope, "MaxOut", [inputs]):
        inputs = convert_to_tensor(inputs)
        shape = inputs.get_shape().as_list()
        num_channels = shape[axis]
        if num_channels is None:
            raise ValueError(f"maxout: the size of axis {axis} of the input must be known")
        if num_channels % num_units:
            raise ValueError(f"number of features({num_channels}) is not a multiple of "
                             f"num_units({num_units})")
        shape[axis] = num_units
        shape += [num_channels // num_units]
        dynamic = array_ops.shape(inputs)
        shape = [dynamic[i] if dim is None else dim for i, dim in enumerate(shape)]
        if any(not isinstance(dim, int) for dim in shape):
            shape = array_ops.stack(shape)
        return math_ops.reduce_max(array_ops.reshape(inputs, shape), -1, keepdims=False)


def _layer_name(layer, fallback):
    if hasattr(layer, "__name__"):
        return layer.__name__
    if hasattr(layer, "func") and hasattr(layer.func, "__name__"):
        return layer.func.__name__
    return fallback


def repeat(inputs, repetitions, layer, *args, **kwargs):
    """Applies `layer` `repetitions` times, in scopes `<scope>/<scope>_1`, `_2`, ...

    `scope` (a keyword) names the outer scope (default "Repeat") and the inner prefix
    (default the layer's name).

    Returns:
        The last layer's output.
    """
    scope = kwargs.pop("scope", None)
    with vs.variable_scope(scope, "Repeat", [inputs]):
        inputs = convert_to_tensor(inputs)
        if scope is None:
            scope = _layer_name(layer, "repeat")
        outputs = inputs
        for i in range(repetitions):
            kwargs["scope"] = f"{scope}_{i + 1}"
            outputs = layer(outputs, *args, **kwargs)
        return outputs


def stack(inputs, layer, stack_args, **kwargs):
    """Applies `layer` once per entry of `stack_args` (each a tuple of positional args).

    Scopes are `<scope>/<scope>_1`, `_2`, ... (outer default "Stack").

    Returns:
        The last layer's output.

    Raises:
        ValueError: `stack_args` is not a list or tuple.
    """
    scope = kwargs.pop("scope", None)
    if not isinstance(stack_args, (list, tuple)):
        raise ValueError("stack_args need to be a list or tuple")
    with vs.variable_scope(scope, "Stack", [inputs]):
        inputs = convert_to_tensor(inputs)
        if scope is None:
            scope = _layer_name(layer, "stack")
        outputs = inputs
        for i, layer_args in enumerate(stack_args):
            kwargs["scope"] = f"{scope}_{i + 1}"
            if not isinstance(layer_args, (list, tuple)):
                layer_args = [layer_args]
            outputs = layer(outputs, *layer_args, **kwargs)
        return outputs
