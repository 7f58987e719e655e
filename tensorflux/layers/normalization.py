"""`tf.layers.batch_normalization` / `BatchNormalization` with moving statistics.

In training the batch statistics normalize the inputs and the moving mean and variance are
updated by ops added to UPDATE_OPS (run them with the train op, as in TF1); in inference the
moving statistics are used. `training` may be a Python bool or a boolean tensor.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.layers.core import Layer
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import functions as nn_functions
from tensorflux.ops.state import initializers as init_ops
from tensorflux.ops.state import variable_ops as state_ops

__all__ = ["BatchNormalization", "batch_normalization"]


class BatchNormalization(Layer):
    """Normalizes over every axis but `axis` (the channels)."""

    _default_name = "batch_normalization"

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=None, gamma_initializer=None, moving_mean_initializer=None,
                 moving_variance_initializer=None, beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 renorm=False, renorm_clipping=None, renorm_momentum=0.99, fused=None,
                 trainable=True, virtual_batch_size=None, adjustment=None, name=None,
                 **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        if renorm or virtual_batch_size or adjustment:
            raise ValueError("renorm, virtual_batch_size and adjustment are not supported "
                             "by tensorflux's batch_normalization.")
        self.axis = axis
        self.momentum = momentum
        self.epsilon = epsilon
        self.center = center
        self.scale = scale
        self.beta_initializer = beta_initializer
        self.gamma_initializer = gamma_initializer
        self.moving_mean_initializer = moving_mean_initializer
        self.moving_variance_initializer = moving_variance_initializer
        self.beta_regularizer = beta_regularizer
        self.gamma_regularizer = gamma_regularizer

    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        rank = input_shape.ndims
        if rank is None:
            raise ValueError("Input has undefined rank.")
        axis = self.axis if isinstance(self.axis, int) else self.axis[0]
        self._axis = axis % rank
        channels = input_shape[self._axis].value
        if channels is None:
            raise ValueError(f"Input has undefined `axis` dimension. Input shape: "
                             f"{input_shape}")
        self._rank = rank
        param = [channels]
        self.gamma = self.add_variable(
            "gamma", param, initializer=self.gamma_initializer or init_ops.ones_initializer(),
            regularizer=self.gamma_regularizer) if self.scale else None
        self.beta = self.add_variable(
            "beta", param, initializer=self.beta_initializer or init_ops.zeros_initializer(),
            regularizer=self.beta_regularizer) if self.center else None
        self.moving_mean = self.add_variable(
            "moving_mean", param, trainable=False,
            initializer=self.moving_mean_initializer or init_ops.zeros_initializer())
        self.moving_variance = self.add_variable(
            "moving_variance", param, trainable=False,
            initializer=self.moving_variance_initializer or init_ops.ones_initializer())
        self.built = True

    def call(self, inputs, training=False):
        graph = graph_mod.get_default_graph()
        reduce_axes = [i for i in range(self._rank) if i != self._axis]
        shape = [1] * self._rank
        shape[self._axis] = -1

        def reshaped(value):
            if value is None or self._axis == self._rank - 1:
                return value
            return array_ops.reshape(value, shape)

        static = training if isinstance(training, (bool, np.bool_)) or training is None \
            else None
        if static is not None and not static:
            mean, variance = self.moving_mean, self.moving_variance
            return nn_functions.batch_normalization(inputs, reshaped(mean), reshaped(variance),
                                                    reshaped(self.beta), reshaped(self.gamma),
                                                    self.epsilon)
        batch_mean, batch_variance = nn_functions.moments(inputs, reduce_axes)
        if static is None:
            training = convert_to_tensor(training)
            mean = math_ops.where(training, batch_mean, convert_to_tensor(self.moving_mean))
            variance = math_ops.where(training, batch_variance,
                                      convert_to_tensor(self.moving_variance))
            decay = math_ops.where(training,
                                   array_ops.constant(self.momentum, inputs.dtype.base_dtype),
                                   array_ops.constant(1.0, inputs.dtype.base_dtype))
        else:
            mean, variance = batch_mean, batch_variance
            decay = array_ops.constant(self.momentum, inputs.dtype.base_dtype)
        outputs = nn_functions.batch_normalization(inputs, reshaped(mean), reshaped(variance),
                                                   reshaped(self.beta), reshaped(self.gamma),
                                                   self.epsilon)
        if self.trainable or static is None or static:
            with graph.name_scope(None):
                update_mean = _assign_moving_average(self.moving_mean, batch_mean, decay)
                update_variance = _assign_moving_average(self.moving_variance,
                                                         batch_variance, decay)
            self.add_update([update_mean, update_variance])
            graph.add_to_collection(GraphKeys.UPDATE_OPS, update_mean)
            graph.add_to_collection(GraphKeys.UPDATE_OPS, update_variance)
        return outputs


def _assign_moving_average(variable, value, decay):
    graph = graph_mod.get_default_graph()
    with graph.name_scope(f"{variable.op.name}/AssignMovingAvg") as scope:
        with graph.colocate_with(variable.op):
            delta = (convert_to_tensor(variable) - value) * (1.0 - decay)
            return state_ops.assign_sub(variable, delta, name=scope)


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=None, gamma_initializer=None,
                        moving_mean_initializer=None, moving_variance_initializer=None,
                        beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                        gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99,
                        fused=None, virtual_batch_size=None, adjustment=None):
    """Functional form of `BatchNormalization`."""
    layer = BatchNormalization(
        axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
        beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
        moving_mean_initializer=moving_mean_initializer,
        moving_variance_initializer=moving_variance_initializer,
        beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer,
        renorm=renorm, fused=fused, trainable=trainable, name=name, _reuse=reuse,
        _scope=name,
        virtual_batch_size=virtual_batch_size, adjustment=adjustment)
    return layer.apply(inputs, training=training)
