"""Keras noise layers (active in training only): GaussianNoise, GaussianDropout, AlphaDropout."""

from __future__ import annotations

from tensorflux.keras.engine.base_layer import Layer
from tensorflux.keras.layers.core import smart_cond, training_value
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.random import stateful as random_stateful

__all__ = ["GaussianNoise", "GaussianDropout", "AlphaDropout"]


class GaussianNoise(Layer):
    """Adds N(0, stddev**2) noise while training."""

    supports_masking = True

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.stddev, self.seed = float(stddev), seed

    def call(self, inputs, training=None):

        def noisy():
            return inputs + random_stateful.random_normal(
                array_ops.shape(inputs),
                stddev=self.stddev,
                dtype=inputs.dtype.base_dtype,
                seed=self.seed,
            )

        return smart_cond(training_value(training), noisy, lambda: array_ops.identity(inputs))


def _rate(layer, rate):
    rate = float(rate)
    if not 0 <= rate < 1:
        raise ValueError(f'Layer "{layer.name}": rate must be in [0, 1), got {rate}.')
    return rate


class GaussianDropout(Layer):
    """Multiplies by N(1, rate / (1 - rate)) noise while training."""

    supports_masking = True

    def __init__(self, rate, **kwargs):
        super().__init__(**kwargs)
        self.rate = _rate(self, rate)

    def call(self, inputs, training=None):
        if not self.rate:
            return array_ops.identity(inputs)
        stddev = (self.rate / (1.0 - self.rate)) ** 0.5

        def noisy():
            return inputs * random_stateful.random_normal(
                array_ops.shape(inputs), mean=1.0, stddev=stddev, dtype=inputs.dtype.base_dtype)

        return smart_cond(training_value(training), noisy, lambda: array_ops.identity(inputs))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


class AlphaDropout(Layer):
    """Dropout for SELU networks while training: dropped inputs take SELU's negative
    saturation value, then an affine map keeps the mean and variance."""

    supports_masking = True

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = _rate(self, rate)
        self.noise_shape, self.seed = noise_shape, seed

    def call(self, inputs, training=None):
        if not 0 < self.rate < 1:
            return array_ops.identity(inputs)
        rate = self.rate
        saturation = -_SELU_ALPHA * _SELU_SCALE
        scale = ((1 - rate) * (1 + rate * saturation ** 2)) ** -0.5
        shift = -scale * saturation * rate

        def dropped():
            shape = array_ops.shape(inputs)
            if self.noise_shape is not None:
                shape = array_ops.stack([shape[i] if d is None else d
                                         for i, d in enumerate(self.noise_shape)])
            kept = math_ops.cast(
                math_ops.greater_equal(random_stateful.random_uniform(
                    shape, dtype=inputs.dtype.base_dtype, seed=self.seed), rate),
                inputs.dtype)
            return scale * (inputs * kept + saturation * (1 - kept)) + shift

        return smart_cond(training_value(training), dropped, lambda: array_ops.identity(inputs))
