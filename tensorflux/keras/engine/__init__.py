"""Keras engine: the base `Layer`, `Input`, and the `Model` / `Sequential` classes."""

from tensorflux.keras.engine.base_layer import InputSpec, Layer
from tensorflux.keras.engine.input_layer import Input, InputLayer
from tensorflux.keras.engine.functional import Model, Sequential
