"""The shared part of location-scale distributions (Normal, Laplace): two broadcast parameter
tensors `loc` and `scale > 0`, their batch shape, and reparameterized sampling."""

from __future__ import annotations

import tensorflux as tf
from tensorflux.distributions import util
from tensorflux.distributions.distribution import FULLY_REPARAMETERIZED, Distribution

__all__ = ["LocationScale"]


class LocationScale(Distribution):
    """Base of distributions given by `loc` and a positive `scale` (see module docs)."""

    def __init__(self, loc, scale, validate_args, allow_nan_stats, name, parameters):
        with tf.name_scope(name, values=[loc, scale]) as name:
            checks = [tf.assert_positive(scale)] if validate_args else []
            with tf.control_dependencies(checks):
                self._loc = tf.identity(loc, name="loc")
                self._scale = tf.identity(scale, name="scale")
                util.assert_same_float_dtype([self._loc, self._scale])
        super().__init__(dtype=self._scale.dtype, reparameterization_type=FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._loc, self._scale],
                         name=name)

    @staticmethod
    def _param_shapes(sample_shape):
        shape = tf.convert_to_tensor(sample_shape, dtype=tf.int32)
        return {"loc": shape, "scale": shape}

    @property
    def loc(self):
        """Distribution parameter for the location."""
        return self._loc

    @property
    def scale(self):
        """Distribution parameter for the scale."""
        return self._scale

    def _batch_shape_tensor(self):
        return tf.broadcast_dynamic_shape(tf.shape(self.loc), tf.shape(self.scale))

    def _batch_shape(self):
        return tf.broadcast_static_shape(self.loc.shape, self.scale.shape)
