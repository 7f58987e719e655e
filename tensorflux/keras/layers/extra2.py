"""Keras LayerNormalization, noise and spatial dropout layers, and Cropping2D."""

from __future__ import annotations

from tensorflux.keras import initializers, regularizers
from tensorflux.keras.engine.base_layer import InputSpec, Layer
from tensorflux.keras.layers.core import Dropout, smart_cond, training_value

__all__ = ["LayerNormalization", "GaussianNoise", "SpatialDropout1D", "SpatialDropout2D",
           "Cropping2D"]


def _api():
    import tensorflux

    return tensorflux


class LayerNormalization(Layer):
    """Normalizes each sample over `axis` (last): gamma * (x - mean) / sqrt(var + eps) + beta."""

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, **kwargs):
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
            raise ValueError(f'Layer "{self.name}": the normalized axes {self.axis} of input '
                             f"shape {input_shape} must be defined.")
        self._param_shape = [input_shape[i] if i in self._axes else 1 for i in range(rank)]
        self.gamma = (self.add_weight("gamma", shape, initializer=self.gamma_initializer,
                                      regularizer=self.gamma_regularizer)
                      if self.scale else None)
        self.beta = (self.add_weight("beta", shape, initializer=self.beta_initializer,
                                     regularizer=self.beta_regularizer)
                     if self.center else None)
        self.input_spec = InputSpec(ndim=rank)
        self.built = True

    def call(self, inputs):
        tf = _api()
        mean, variance = tf.nn.moments(inputs, self._axes, keep_dims=True)
        outputs = (inputs - mean) * tf.rsqrt(variance + self.epsilon)
        if self.gamma is not None:
            outputs = outputs * tf.reshape(self.gamma, self._param_shape[1:])
        if self.beta is not None:
            outputs = outputs + tf.reshape(self.beta, self._param_shape[1:])
        return outputs


class GaussianNoise(Layer):
    """Adds N(0, stddev**2) noise while training."""

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.stddev, self.seed = float(stddev), seed

    def call(self, inputs, training=None):
        tf = _api()

        def noisy():
            return inputs + tf.random_normal(tf.shape(inputs), stddev=self.stddev,
                                             dtype=inputs.dtype.base_dtype, seed=self.seed)

        return smart_cond(training_value(training), noisy, lambda: tf.identity(inputs))


class SpatialDropout1D(Dropout):
    """Drops whole channels of [batch, steps, channels] while training."""

    def __init__(self, rate, **kwargs):
        super().__init__(rate, **kwargs)
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs, training=None):
        self.noise_shape = (None, 1, None)
        return super().call(inputs, training)


class SpatialDropout2D(Dropout):
    """Drops whole channels of [batch, height, width, channels] while training."""

    def __init__(self, rate, data_format=None, **kwargs):
        super().__init__(rate, **kwargs)
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs, training=None):
        self.noise_shape = (None, 1, 1, None)
        return super().call(inputs, training)


class Cropping2D(Layer):
    """Removes ((top, bottom), (left, right)) rows and columns of [batch, h, w, c]."""

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(cropping, int):
            cropping = ((cropping, cropping), (cropping, cropping))
        self.cropping = tuple((c, c) if isinstance(c, int) else tuple(c) for c in cropping)
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs):
        (top, bottom), (left, right) = self.cropping
        dims = inputs.get_shape().as_list()
        if dims[1] is not None and top + bottom >= dims[1] or (
                dims[2] is not None and left + right >= dims[2]):
            raise ValueError(f'Layer "{self.name}": cropping {self.cropping} removes the whole '
                             f"input of shape {tuple(dims)}.")
        return inputs[:, top:(-bottom or None), left:(-right or None), :]
