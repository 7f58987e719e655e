"""Keras activation layers with parameters: ReLU, LeakyReLU, ELU, Softmax."""

from __future__ import annotations

from tensorflux.keras import activations
from tensorflux.keras.engine.base_layer import Layer
from tensorflux.ops.nn import activations as nn_activations

__all__ = ["ReLU", "LeakyReLU", "ELU", "Softmax"]


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
