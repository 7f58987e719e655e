"""The shared part of location-scale distributions (Normal, Laplace): two broadcast parameter
tensors `loc` and `scale > 0`, their batch shape, and reparameterized sampling."""

from __future__ import annotations

from tensorflux.distributions import util
from tensorflux.distributions.distribution import FULLY_REPARAMETERIZED, Distribution
from tensorflux.framework import dtypes, scopes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops.debug import checks as check_ops

__all__ = ["LocationScale"]


class LocationScale(Distribution):
    """Base of distributions given by `loc` and a positive `scale` (see module docs)."""

    def __init__(self, loc, scale, validate_args, allow_nan_stats, name, parameters):
        with scopes.name_scope(name, values=[loc, scale]) as name:
            checks = [check_ops.assert_positive(scale)] if validate_args else []
            with scopes.control_dependencies(checks):
                self._loc = array_ops.identity(loc, name="loc")
                self._scale = array_ops.identity(scale, name="scale")
                util.assert_same_float_dtype([self._loc, self._scale])
        super().__init__(dtype=self._scale.dtype, reparameterization_type=FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._loc, self._scale],
                         name=name)

    @staticmethod
    def _param_shapes(sample_shape):
        shape = convert_to_tensor(sample_shape, dtype=dtypes.int32)
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
        return array_ops.broadcast_dynamic_shape(array_ops.shape(self.loc),
                                                 array_ops.shape(self.scale))

    def _batch_shape(self):
        return array_ops.broadcast_static_shape(self.loc.shape, self.scale.shape)
