"""contrib.layers normalization: batch_norm, instance_norm and layer_norm with TF 1.15's variables.

batch_norm creates, under `BatchNorm/`, `beta` (if center), `gamma` (if scale) and the
non-trainable model variables `moving_mean` / `moving_variance`. In training it normalizes with
the batch statistics and updates the moving ones (`moving -= (1 - decay) * (moving - batch)`),
either through ops added to `updates_collections` (default UPDATE_OPS, run them with the train
op) or, with `updates_collections=None`, in place before the output. The fused path (the
default for rank-2 and rank-4 inputs, as in TF) updates the moving variance with the unbiased
batch variance (n / (n - 1)); the unfused path with the biased one.
"""

from __future__ import annotations

from tensorflux.contrib.framework.arg_scope import add_arg_scope
from tensorflux.contrib.framework.variables import model_variable
from tensorflux.contrib.layers import utils
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops.nn import functions as nn_impl
from tensorflux.ops.state import variable_scope as vs
from tensorflux.ops.state.initializers import ones_initializer, zeros_initializer
from tensorflux.train.moving_averages import assign_moving_average

__all__ = ["batch_norm", "instance_norm", "layer_norm"]


def _param(name, shape, dtype, default_init, param_initializers, param_regularizers,
           variables_collections, trainable):
    return model_variable(name, shape=shape, dtype=dtype,
                          initializer=param_initializers.get(name, default_init),
                          regularizer=param_regularizers.get(name),
                          collections=utils.get_variable_collections(variables_collections,
                                                                     name),
                          trainable=trainable)


def _moving(name, shape, dtype, init, param_initializers, variables_collections):
    return model_variable(name, shape=shape, dtype=dtype,
                          initializer=param_initializers.get(name, init), trainable=False,
                          collections=utils.get_variable_collections(variables_collections,
                                                                     name))


@add_arg_scope
def batch_norm(inputs, decay=0.999, center=True, scale=False, epsilon=0.001, activation_fn=None,
               param_initializers=None, param_regularizers=None,
               updates_collections=GraphKeys.UPDATE_OPS, is_training=True, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               batch_weights=None, fused=None, data_format="NHWC",
               zero_debias_moving_mean=False, scope=None, renorm=False, renorm_clipping=None,
               renorm_decay=0.99, adjustment=None):
    """Batch normalization (Ioffe and Szegedy 2015) over every axis but the channels.

    Args:
        inputs: a tensor of rank >= 2 with known rank and channel dimension.
        decay: moving-average decay.
        center, scale: create and apply `beta` / `gamma`.
        epsilon: added to the variance.
        activation_fn: applied to the output.
        param_initializers, param_regularizers: dicts keyed beta/gamma/moving_mean/
            moving_variance.
        updates_collections: where the moving-average updates go; None applies them in place.
        is_training: Python bool or boolean tensor (batch vs moving statistics).
        fused: None/True use the fused kernel for rank 2 and 4 inputs; False never.
        data_format: "NHWC" (channels last) or "NCHW".
        zero_debias_moving_mean: bias-correct the moving mean (unfused path).
        reuse, variables_collections, outputs_collections, trainable, scope: as other layers.
        batch_weights, renorm, renorm_clipping, renorm_decay, adjustment: not provided.

    Returns:
        The normalized tensor.

    Raises:
        ValueError: unknown rank or channels, a bad data_format, or an unsupported option.
    """
    if batch_weights is not None or renorm or adjustment is not None:
        raise ValueError("batch_norm: batch_weights, renorm and adjustment are not provided by "
                         "tensorflux")
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format has to be either NCHW or NHWC. Got {data_format!r}")
    param_initializers = param_initializers or {}
    param_regularizers = param_regularizers or {}
    with vs.variable_scope(scope, "BatchNorm", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        shape = inputs.get_shape()
        rank = shape.ndims
        if rank is None:
            raise ValueError(f"Inputs {inputs.name} has undefined rank.")
        if data_format == "NCHW" and rank < 3:
            raise ValueError("data_format NCHW needs inputs of rank >= 3")
        axis = 1 if data_format == "NCHW" else rank - 1
        channels = shape[axis].value
        if channels is None:
            raise ValueError(f"Inputs {inputs.name} has undefined channels dimension {shape}.")
        dtype = inputs.dtype.base_dtype
        beta = gamma = None
        if center:
            beta = _param("beta", [channels], dtype, zeros_initializer(), param_initializers,
                          param_regularizers, variables_collections, trainable)
        if scale:
            gamma = _param("gamma", [channels], dtype, ones_initializer(), param_initializers,
                           param_regularizers, variables_collections, trainable)
        moving_mean = _moving("moving_mean", [channels], dtype, zeros_initializer(),
                              param_initializers, variables_collections)
        moving_variance = _moving("moving_variance", [channels], dtype, ones_initializer(),
                                  param_initializers, variables_collections)
        use_fused = fused is not False and rank in (2, 4)
        if use_fused:
            outputs, mean, variance = _fused(inputs, beta, gamma, moving_mean, moving_variance,
                                             epsilon, data_format, is_training, channels)
            debias = False
        else:
            axes = [i for i in range(rank) if i != axis]
            mean, variance = nn_impl.moments(inputs, axes)
            debias = zero_debias_moving_mean
        outputs = _with_updates(inputs, outputs if use_fused else None, mean, variance,
                                moving_mean, moving_variance, beta, gamma, epsilon, decay,
                                debias, is_training, updates_collections, axis, rank)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return utils.collect_named_outputs(outputs_collections, sc.name, outputs)


def _fused(inputs, beta, gamma, moving_mean, moving_variance, epsilon, data_format,
           is_training, channels):
    """(outputs, batch mean, unbiased batch variance) of the fused kernel (rank 2 or 4)."""
    dtype = inputs.dtype.base_dtype
    original_shape = inputs.get_shape()
    x = inputs
    fmt = data_format
    if original_shape.ndims == 2:
        x = array_ops.reshape(inputs, [-1, 1, 1, channels])
        fmt = "NHWC"
    offset = beta if beta is not None else array_ops.zeros([channels], dtype=dtype)
    scale = gamma if gamma is not None else array_ops.ones([channels], dtype=dtype)

    def training():
        return nn_impl.fused_batch_norm(x, scale, offset, epsilon=epsilon, data_format=fmt)

    def inference():
        return nn_impl.fused_batch_norm(x, scale, offset, mean=moving_mean,
                                        variance=moving_variance, epsilon=epsilon,
                                        data_format=fmt, is_training=False)

    outputs, mean, variance = utils.smart_cond(is_training, training, inference)
    if original_shape.ndims == 2:
        outputs = array_ops.reshape(outputs, array_ops.shape(inputs))
    outputs.set_shape(original_shape)
    return outputs, mean, variance


def _with_updates(inputs, fused_outputs, mean, variance, moving_mean, moving_variance, beta,
                  gamma, epsilon, decay, debias, is_training, updates_collections, axis, rank):
    """Applies (fused) or computes the normalization, wiring the moving-average updates."""
    graph = graph_mod.get_default_graph()
    training_value = utils.constant_value(is_training) if not isinstance(is_training, bool) \
        else is_training

    def updates():
        return (assign_moving_average(moving_mean, mean, decay, zero_debias=debias),
                assign_moving_average(moving_variance, variance, decay, zero_debias=False))

    def normalize(m, v):
        if fused_outputs is not None:
            return fused_outputs
        if axis != rank - 1:
            shape = [1] * rank
            shape[axis] = -1
            m, v = array_ops.reshape(m, shape), array_ops.reshape(v, shape)
            b = array_ops.reshape(beta, shape) if beta is not None else None
            g = array_ops.reshape(gamma, shape) if gamma is not None else None
        else:
            b, g = beta, gamma
        return nn_impl.batch_normalization(inputs, m, v, b, g, epsilon)

    if training_value is False:
        return normalize(moving_mean, moving_variance)
    if fused_outputs is None:
        mean, variance = utils.smart_cond(is_training, lambda: (mean, variance),
                                          lambda: (moving_mean.value(),
                                                   moving_variance.value()))
    if updates_collections is None:
        def forced():
            with graph.control_dependencies(list(updates())):
                return array_ops.identity(normalize(mean, variance))

        return utils.smart_cond(is_training, forced,
                                lambda: array_ops.identity(normalize(mean, variance)))
    update_mean, update_variance = utils.smart_cond(
        is_training, updates, lambda: (moving_mean.value(), moving_variance.value()))
    graph_mod.add_to_collections(updates_collections, update_mean)
    graph_mod.add_to_collections(updates_collections, update_variance)
    return normalize(mean, variance)


@add_arg_scope
def layer_norm(inputs, center=True, scale=True, activation_fn=None, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               begin_norm_axis=1, begin_params_axis=-1, scope=None):
    """Layer normalization (Ba et al. 2016): moments over axes [begin_norm_axis, rank).

    `LayerNorm/beta` and `LayerNorm/gamma` have shape `inputs.shape[begin_params_axis:]`;
    the variance epsilon is 1e-12 as in TF 1.15.

    Returns:
        The normalized tensor.

    Raises:
        ValueError: unknown rank, axes out of range, or params shape not fully defined.
    """
    with vs.variable_scope(scope, "LayerNorm", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        shape = inputs.get_shape()
        rank = shape.ndims
        if rank is None:
            raise ValueError(f"Inputs {inputs.name} has undefined rank.")
        dtype = inputs.dtype.base_dtype
        if begin_norm_axis < 0:
            begin_norm_axis = rank + begin_norm_axis
        if begin_params_axis >= rank or begin_norm_axis >= rank:
            raise ValueError(f"begin_params_axis ({begin_params_axis}) and begin_norm_axis "
                             f"({begin_norm_axis}) must be < rank(inputs) ({rank})")
        params_shape = shape[begin_params_axis:]
        if not params_shape.is_fully_defined():
            raise ValueError(f"Inputs {inputs.name}: shape(inputs)[{begin_params_axis}:] is "
                             f"not fully defined: {shape}")
        beta = gamma = None
        if center:
            beta = model_variable("beta", shape=params_shape.as_list(), dtype=dtype,
                                  initializer=zeros_initializer(), trainable=trainable,
                                  collections=utils.get_variable_collections(
                                      variables_collections, "beta"))
        if scale:
            gamma = model_variable("gamma", shape=params_shape.as_list(), dtype=dtype,
                                   initializer=ones_initializer(), trainable=trainable,
                                   collections=utils.get_variable_collections(
                                       variables_collections, "gamma"))
        mean, variance = nn_impl.moments(inputs, list(range(begin_norm_axis, rank)),
                                         keep_dims=True)
        outputs = nn_impl.batch_normalization(inputs, mean, variance, offset=beta, scale=gamma,
                                              variance_epsilon=1e-12)
        outputs.set_shape(shape)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return utils.collect_named_outputs(outputs_collections, sc.name, outputs)


@add_arg_scope
def instance_norm(inputs, center=True, scale=True, epsilon=1e-6, activation_fn=None,
                  param_initializers=None, reuse=None, variables_collections=None,
                  outputs_collections=None, trainable=True, data_format="NHWC", scope=None):
    """Instance normalization (Ulyanov et al. 2016): moments per example and channel.

    The statistics are taken over every axis but the batch (0) and the channel axis (the last
    for NHWC, 1 for NCHW). `InstanceNorm/beta` (zeros) and `InstanceNorm/gamma` (ones) have
    shape [channels]; `param_initializers` may override either.

    Returns:
        The normalized tensor, of the inputs' shape.

    Raises:
        ValueError: unknown rank, `data_format` neither NHWC nor NCHW, or an unknown
            channel dimension.
    """
    with vs.variable_scope(scope, "InstanceNorm", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        shape = inputs.get_shape()
        rank = shape.ndims
        if rank is None:
            raise ValueError(f"Inputs {inputs.name} has undefined rank.")
        if data_format not in ("NHWC", "NCHW"):
            raise ValueError("data_format has to be either NCHW or NHWC.")
        channel_axis = 1 if data_format == "NCHW" else rank - 1
        params_shape = shape[channel_axis:channel_axis + 1]
        if not params_shape.is_fully_defined():
            raise ValueError(f"Inputs {inputs.name} has undefined channels dimension "
                             f"{params_shape}.")
        broadcast = None
        if data_format == "NCHW" and rank > 2:
            broadcast = [1, params_shape.as_list()[0]] + [1] * (rank - 2)
        dtype = inputs.dtype.base_dtype
        inits = param_initializers or {}
        beta = gamma = None
        if center:
            beta = _param("beta", params_shape.as_list(), dtype, zeros_initializer(), inits, {},
                          variables_collections, trainable)
            if broadcast is not None:
                beta = array_ops.reshape(beta, broadcast)
        if scale:
            gamma = _param("gamma", params_shape.as_list(), dtype, ones_initializer(), inits,
                           {}, variables_collections, trainable)
            if broadcast is not None:
                gamma = array_ops.reshape(gamma, broadcast)
        axes = [a for a in range(1, rank) if a != channel_axis]
        mean, variance = nn_impl.moments(inputs, axes, keep_dims=True)
        outputs = nn_impl.batch_normalization(inputs, mean, variance, offset=beta, scale=gamma,
                                              variance_epsilon=epsilon)
        outputs.set_shape(shape)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return utils.collect_named_outputs(outputs_collections, sc.name, outputs)
