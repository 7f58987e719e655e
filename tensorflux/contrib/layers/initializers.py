"""contrib.layers initializers: xavier (Glorot) and variance scaling, with TF 1.15's formulas.

`variance_scaling_initializer(factor, mode, uniform)`: with n = fan_in, fan_out or their
average (fans over the last two dims times the receptive field), uniform draws from
[-sqrt(3 * factor / n), +sqrt(3 * factor / n)]; otherwise a truncated normal with stddev
sqrt(1.3 * factor / n). `xavier_initializer(uniform)` is factor 1.0, mode FAN_AVG.
"""

from __future__ import annotations

import math

from tensorflux.framework import dtypes
from tensorflux.ops.random import stateful as random_ops
from tensorflux.ops.state.initializers import Initializer

__all__ = ["xavier_initializer", "xavier_initializer_conv2d", "variance_scaling_initializer"]

_MODES = ("FAN_IN", "FAN_OUT", "FAN_AVG")


def _fans(shape) -> tuple:
    if not shape:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    receptive = 1.0
    for dim in shape[:-2]:
        receptive *= float(dim)
    return float(shape[-2]) * receptive, float(shape[-1]) * receptive


class _VarianceScaling(Initializer):
    def __init__(self, factor, mode, uniform, seed, dtype):
        self.factor = factor
        self.mode = mode
        self.uniform = uniform
        self.seed = seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = dtypes.as_dtype(dtype) if dtype is not None else self.dtype
        if not dtype.is_floating:
            raise TypeError("Cannot create initializer for non-floating point type.")
        full = list(shape)
        if partition_info is not None and getattr(partition_info, "full_shape", None):
            full = list(partition_info.full_shape)
        fan_in, fan_out = _fans([int(d) for d in full])
        n = {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2.0}[
            self.mode]
        if self.uniform:
            limit = math.sqrt(3.0 * self.factor / n)
            return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)
        stddev = math.sqrt(1.3 * self.factor / n)
        return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {"factor": self.factor, "mode": self.mode, "uniform": self.uniform,
                "seed": self.seed, "dtype": self.dtype.name}


def variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=False, seed=None,
                                 dtype=dtypes.float32):
    """An initializer whose variance scales with the fan (He et al. 2015 by default).

    Args:
        factor: the variance multiplier.
        mode: "FAN_IN", "FAN_OUT" or "FAN_AVG".
        uniform: uniform instead of truncated normal.
        seed: the op seed.
        dtype: a floating dtype.

    Returns:
        The initializer `fn(shape, dtype=None, partition_info=None)`.

    Raises:
        TypeError: a non-floating dtype or an unknown mode.
    """
    if not dtypes.as_dtype(dtype).is_floating:
        raise TypeError("Cannot create initializer for non-floating point type.")
    if mode not in _MODES:
        raise TypeError(f"Unknown mode {mode} [FAN_IN, FAN_OUT, FAN_AVG]")
    return _VarianceScaling(factor, mode, uniform, seed, dtype)


def xavier_initializer(uniform=True, seed=None, dtype=dtypes.float32):
    """Glorot/Xavier initialization: variance scaling with factor 1 over the average fan.

    Returns:
        The initializer.
    """
    return variance_scaling_initializer(factor=1.0, mode="FAN_AVG", uniform=uniform,
                                        seed=seed, dtype=dtype)


xavier_initializer_conv2d = xavier_initializer
