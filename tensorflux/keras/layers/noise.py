"""Keras noise layers: GaussianNoise (active in training only)."""

from __future__ import annotations

from tensorflux.keras.engine.base_layer import Layer
from tensorflux.keras.layers.core import smart_cond, training_value
from tensorflux.ops import array as array_ops
from tensorflux.ops.random import stateful as random_stateful

__all__ = ["GaussianNoise"]


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
