"""Keras `BatchNormalization`: batch statistics while training, moving averages otherwise.

The moving-average updates are graph ops in the layer's `updates` (and in UPDATE_OPS); they
move toward the batch statistics only when the learning phase (or `training=`) is true.
Like Keras' fused kernel, 4-D inputs update the moving variance with the unbiased batch
variance; other ranks use the biased one.
"""

from __future__ import annotations

from tensorflux.framework import graph
from tensorflux.keras import constraints, initializers, regularizers
from tensorflux.keras.engine.base_layer import InputSpec, Layer
from tensorflux.keras.layers.core import smart_cond, training_value
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import functions as nn_functions
from tensorflux.ops.state import variable_ops as state_variable_ops

__all__ = ["BatchNormalization", "LayerNormalization"]


class BatchNormalization(Layer):
    """gamma * (x - mean) / sqrt(var + epsilon) + beta over `axis` (default last)."""

    supports_masking = True

    def __init__(
        self,
        axis=-1,
        momentum=0.99,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        moving_mean_initializer="zeros",
        moving_variance_initializer="ones",
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if not isinstance(axis, int):
            raise ValueError(f'Layer "{self.name}": axis must be an int, got {axis!r}.')
        self.axis = axis
        self.momentum, self.epsilon = float(momentum), float(epsilon)
        self.center, self.scale = center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)

    def build(self, input_shape):
        rank = len(input_shape)
        axis = self.axis % rank if -rank <= self.axis < rank else None
        if axis is None or input_shape[axis] is None:
            raise ValueError(
                f'Layer "{self.name}": axis {self.axis} of input shape '
                f"{input_shape} must exist and be defined."
            )
        self._axis = axis
        size = (input_shape[axis],)
        self.gamma = (
            self.add_weight(
                "gamma",
                size,
                initializer=self.gamma_initializer,
                regularizer=self.gamma_regularizer,
                constraint=self.gamma_constraint,
            )
            if self.scale
            else None
        )
        self.beta = (
            self.add_weight(
                "beta",
                size,
                initializer=self.beta_initializer,
                regularizer=self.beta_regularizer,
                constraint=self.beta_constraint,
            )
            if self.center
            else None
        )
        self.moving_mean = self.add_weight(
            "moving_mean", size, trainable=False, initializer=self.moving_mean_initializer
        )
        self.moving_variance = self.add_weight(
            "moving_variance", size, trainable=False, initializer=self.moving_variance_initializer
        )
        self.input_spec = InputSpec(ndim=rank, axes={axis: input_shape[axis]})
        self.built = True

    def call(self, inputs, training=None):
        rank = inputs.get_shape().ndims
        reduce_axes = [i for i in range(rank) if i != self._axis]
        shape = [1] * rank
        shape[self._axis] = -1

        def broadcast(v):
            return (
                None
                if v is None
                else (v if self._axis == rank - 1 else array_ops.reshape(v, shape))
            )

        gamma, beta = broadcast(self.gamma), broadcast(self.beta)
        training = training_value(training)

        def normalize(mean, variance):
            return nn_functions.batch_normalization(
                inputs, broadcast(mean), broadcast(variance), beta, gamma, self.epsilon
            )

        if training is False or training == 0:
            return normalize(self.moving_mean, self.moving_variance)
        mean, variance = nn_functions.moments(inputs, reduce_axes)
        outputs = smart_cond(
            training,
            lambda: normalize(mean, variance),
            lambda: normalize(self.moving_mean, self.moving_variance),
        )
        if rank == 4:
            count = math_ops.cast(
                math_ops.reduce_prod(array_ops.gather(array_ops.shape(inputs), reduce_axes)),
                variance.dtype,
            )
            variance = variance * count / math_ops.maximum(count - 1.0, 1.0)
        new_mean = smart_cond(training, lambda: mean, lambda: array_ops.identity(self.moving_mean))
        new_variance = smart_cond(
            training, lambda: variance, lambda: array_ops.identity(self.moving_variance)
        )
        decay = 1.0 - self.momentum
        updates = [
            state_variable_ops.assign_sub(self.moving_mean, (self.moving_mean - new_mean) * decay),
            state_variable_ops.assign_sub(
                self.moving_variance, (self.moving_variance - new_variance) * decay
            ),
        ]
        self.add_update(updates)
        for update in updates:
            graph.add_to_collection(graph.GraphKeys.UPDATE_OPS, update)
        return outputs


class LayerNormalization(Layer):
    """Normalizes each sample over `axis` (last): gamma * (x - mean) / sqrt(var + eps) + beta."""

    supports_masking = True

    def __init__(
        self,
        axis=-1,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        beta_regularizer=None,
        gamma_regularizer=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.axis = [axis] if isinstance(axis, int) else list(axis)
        self.epsilon, self.center, self.scale = float(epsilon), center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)

    def build(self, input_shape):
        rank = len(input_shape)
        self._axes = sorted(a % rank for a in self.axis)
        shape = tuple(input_shape[a] for a in self._axes)
        if None in shape:
            raise ValueError(
                f'Layer "{self.name}": the normalized axes {self.axis} of input '
                f"shape {input_shape} must be defined."
            )
        self._param_shape = [input_shape[i] if i in self._axes else 1 for i in range(rank)]
        self.gamma = (
            self.add_weight(
                "gamma",
                shape,
                initializer=self.gamma_initializer,
                regularizer=self.gamma_regularizer,
            )
            if self.scale
            else None
        )
        self.beta = (
            self.add_weight(
                "beta", shape, initializer=self.beta_initializer, regularizer=self.beta_regularizer
            )
            if self.center
            else None
        )
        self.input_spec = InputSpec(ndim=rank)
        self.built = True

    def call(self, inputs):
        mean, variance = nn_functions.moments(inputs, self._axes, keep_dims=True)
        outputs = (inputs - mean) * math_ops.rsqrt(variance + self.epsilon)
        if self.gamma is not None:
            outputs = outputs * array_ops.reshape(self.gamma, self._param_shape[1:])
        if self.beta is not None:
            outputs = outputs + array_ops.reshape(self.beta, self._param_shape[1:])
        return outputs
