"""Keras activation layers with parameters: ReLU, LeakyReLU, ELU, Softmax."""

from __future__ import annotations

from tensorflux.keras import activations, constraints, initializers, regularizers
from tensorflux.keras.engine.base_layer import InputSpec, Layer
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import activations as nn_activations

__all__ = ["ReLU", "LeakyReLU", "ELU", "Softmax", "PReLU", "ThresholdedReLU"]


class ReLU(Layer):
    """min(max(x, threshold) or negative_slope * (x - threshold), max_value)."""

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        self.max_value, self.negative_slope, self.threshold = max_value, negative_slope, threshold

    def call(self, inputs):
        return activations.relu(
            inputs, alpha=self.negative_slope, max_value=self.max_value, threshold=self.threshold
        )


class LeakyReLU(Layer):
    """x if x > 0 else alpha * x (alpha 0.3)."""

    def __init__(self, alpha=0.3, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs):
        return nn_activations.leaky_relu(inputs, alpha=self.alpha)


class ELU(Layer):
    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs):
        return activations.elu(inputs, self.alpha)


class Softmax(Layer):
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        return activations.softmax(inputs, axis=self.axis)


class PReLU(Layer):
    """x if x > 0 else alpha * x with a learned `alpha` of the input's shape (without the
    batch axis), shared (size 1) along `shared_axes` (1-based axes of the input)."""

    supports_masking = True

    def __init__(self, alpha_initializer="zeros", alpha_regularizer=None, alpha_constraint=None,
                 shared_axes=None, **kwargs):
        super().__init__(**kwargs)
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = constraints.get(alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        elif isinstance(shared_axes, int):
            self.shared_axes = [shared_axes]
        else:
            self.shared_axes = list(shared_axes)

    def build(self, input_shape):
        shape = list(input_shape[1:])
        for axis in self.shared_axes or []:
            if not 1 <= axis <= len(shape):
                raise ValueError(f'Layer "{self.name}": shared axis {axis} is out of range '
                                 f"for inputs of rank {len(shape) + 1}.")
            shape[axis - 1] = 1
        if None in shape:
            raise ValueError(f'Layer "{self.name}": the input shape {tuple(input_shape)} has '
                             "an unknown dimension; share it with `shared_axes`.")
        self.alpha = self._add_configured_weight("alpha", tuple(shape))
        axes = {i: d for i, d in enumerate(input_shape) if i and i not in (self.shared_axes or [])}
        self.input_spec = InputSpec(ndim=len(input_shape), axes=axes)
        self.built = True

    def call(self, inputs):
        positive = nn_activations.relu(inputs)
        return positive - self.alpha * nn_activations.relu(-inputs)


class ThresholdedReLU(Layer):
    """x if x > theta else 0."""

    supports_masking = True

    def __init__(self, theta=1.0, **kwargs):
        super().__init__(**kwargs)
        if theta is None or float(theta) < 0:
            raise ValueError(f'Layer "{self.name}": theta must be a non-negative float, '
                             f"got {theta}.")
        self.theta = float(theta)

    def call(self, inputs):
        return inputs * math_ops.cast(math_ops.greater(inputs, self.theta), inputs.dtype)
