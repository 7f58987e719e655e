"""Initializers (TF1 classes): `init(shape, dtype=None, partition_info=None) -> Tensor`.

Each builds the ops computing a variable's initial value; `get_variable` calls it inside the
variable's `Initializer` name scope, colocated with the variable. Random initializers use the
random ops with their `seed` (see `tf.set_random_seed`), so a seeded graph is repeatable.
"""

from __future__ import annotations

import math

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.op_def import get_op_def
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops.array import diagonal as diag_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.random import stateful as random_ops

__all__ = ["zeros_initializer", "ones_initializer", "constant_initializer",
           "random_uniform_initializer", "random_normal_initializer",
           "truncated_normal_initializer", "uniform_unit_scaling_initializer",
           "variance_scaling_initializer", "orthogonal_initializer",
           "glorot_uniform_initializer", "glorot_normal_initializer"]


def _float_dtype(dtype):
    dtype = dtypes.as_dtype(dtype).base_dtype
    if not dtype.is_floating:
        raise ValueError(f"Expected floating point type, got {dtype.name}.")
    return dtype


def _dims(shape) -> list:
    if isinstance(shape, TensorShape):
        return shape.as_list()
    return [int(d) for d in shape]


def _scale_shape(shape, partition_info) -> list:
    return _dims(partition_info.full_shape if partition_info is not None else shape)


def _compute_fans(shape) -> tuple:
    """(fan_in, fan_out): matrices use their two dims, conv kernels times the receptive field."""
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return int(shape[0]), int(shape[0])
    if len(shape) == 2:
        return int(shape[0]), int(shape[1])
    receptive = int(np.prod(shape[:-2]))
    return int(shape[-2]) * receptive, int(shape[-1]) * receptive


class Initializer:
    """Base class: subclasses implement `__call__` and `get_config`."""

    def __call__(self, shape, dtype=None, partition_info=None):
        raise TypeError(f"{type(self).__name__} does not define __call__.")

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


class Zeros(Initializer):
    """Initializes to 0 (the default for integer, bool and string variables)."""

    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.zeros(shape, self.dtype if dtype is None else dtype)

    def get_config(self) -> dict:
        return {"dtype": self.dtype.name}


class Ones(Initializer):
    """Initializes to 1."""

    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.ones(shape, self.dtype if dtype is None else dtype)

    def get_config(self) -> dict:
        return {"dtype": self.dtype.name}


class Constant(Initializer):
    """Initializes to `value`: a scalar (filled), or a list/array (the last element repeats
    when shorter than the shape; more elements than the shape is a ValueError).

    Example:
        >>> tf.get_variable("c", [2, 2], initializer=tf.constant_initializer([1, 2, 3]))
        # value [[1, 2], [3, 3]]
    """

    def __init__(self, value=0, dtype=dtypes.float32, verify_shape=False):
        if not (np.isscalar(value) or isinstance(value, (list, tuple, np.ndarray))):
            raise TypeError(f"Invalid type for initial value: {type(value)} (expected Python "
                            "scalar, list or tuple of values, or numpy.ndarray).")
        self.value = value
        self.dtype = dtypes.as_dtype(dtype)
        self._verify_shape = verify_shape

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        if verify_shape is None:
            verify_shape = self._verify_shape
        return array_ops.constant(self.value, dtype=self.dtype if dtype is None else dtype,
                                  shape=shape, verify_shape=verify_shape)

    def get_config(self) -> dict:
        return {"value": self.value, "dtype": self.dtype.name}


class RandomUniform(Initializer):
    """Uniform values in [minval, maxval)."""

    def __init__(self, minval=0, maxval=None, seed=None, dtype=dtypes.float32):
        self.minval = minval
        self.maxval = maxval
        self.seed = seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_uniform(shape, self.minval, self.maxval,
                                         self.dtype if dtype is None else dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed,
                "dtype": self.dtype.name}


class RandomNormal(Initializer):
    """Normal values with `mean` and `stddev`."""

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        self.mean = mean
        self.stddev = stddev
        self.seed = seed
        self.dtype = _float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_normal(shape, self.mean, self.stddev,
                                        self.dtype if dtype is None else dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed,
                "dtype": self.dtype.name}


class TruncatedNormal(Initializer):
    """Normal values redrawn when more than two stddevs from the mean."""

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        self.mean = mean
        self.stddev = stddev
        self.seed = seed
        self.dtype = _float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.truncated_normal(shape, self.mean, self.stddev,
                                           self.dtype if dtype is None else dtype,
                                           seed=self.seed)

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed,
                "dtype": self.dtype.name}


class UniformUnitScaling(Initializer):
    """Uniform in ±sqrt(3 / input_size) * factor, input_size = product of all dims but the
    last (deprecated in TF1 in favour of variance_scaling)."""

    def __init__(self, factor=1.0, seed=None, dtype=dtypes.float32):
        self.factor = factor
        self.seed = seed
        self.dtype = _float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        input_size = max(float(np.prod(_scale_shape(shape, partition_info)[:-1])), 1.0)
        limit = math.sqrt(3 / input_size) * self.factor
        return random_ops.random_uniform(shape, -limit, limit,
                                         self.dtype if dtype is None else dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {"factor": self.factor, "seed": self.seed, "dtype": self.dtype.name}


class VarianceScaling(Initializer):
    """Values with variance `scale / n`, n from the fans (`mode`), drawn from `distribution`.

    `mode`: "fan_in", "fan_out" or "fan_avg"; `distribution`: "truncated_normal" (alias
    "normal"; stddev corrected for the truncation), "untruncated_normal" or "uniform".
    Convolution kernels count their receptive field in both fans.
    """

    _CORRECTION = 0.87962566103423978  # std of a unit normal truncated to [-2, 2]

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=dtypes.float32):
        if scale <= 0.0:
            raise ValueError("`scale` must be positive float.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode!r} (expected fan_in, fan_out or "
                             "fan_avg)")
        distribution = distribution.lower()
        if distribution not in ("normal", "uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution!r}")
        self.scale = scale
        self.mode = mode
        self.distribution = distribution
        self.seed = seed
        self.dtype = _float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self.dtype if dtype is None else dtype
        fan_in, fan_out = _compute_fans(_scale_shape(shape, partition_info))
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}
        scale = self.scale / max(1.0, fan[self.mode])
        if self.distribution in ("normal", "truncated_normal"):
            stddev = math.sqrt(scale) / self._CORRECTION
            return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(scale), dtype,
                                            seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self.seed, "dtype": self.dtype.name}


class GlorotUniform(VarianceScaling):
    """Uniform in ±sqrt(6 / (fan_in + fan_out)); get_variable's default for floats."""

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)

    def get_config(self) -> dict:
        return {"seed": self.seed, "dtype": self.dtype.name}


class GlorotNormal(VarianceScaling):
    """Truncated normal with stddev sqrt(2 / (fan_in + fan_out))."""

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)

    def get_config(self) -> dict:
        return {"seed": self.seed, "dtype": self.dtype.name}


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix times `gain`: Q of the QR of a normal matrix, its columns'
    signs fixed by R's diagonal; shapes of rank > 2 are flattened to (prod(dims[:-1]),
    dims[-1])."""

    def __init__(self, gain=1.0, seed=None, dtype=dtypes.float32):
        self.gain = gain
        self.seed = seed
        self.dtype = _float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self.dtype if dtype is None else dtypes.as_dtype(dtype)
        dims = _dims(shape)
        if len(dims) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional")
        rows = int(np.prod(dims[:-1]))
        cols = int(dims[-1])
        flat = (cols, rows) if rows < cols else (rows, cols)
        a = random_ops.random_normal(flat, dtype=dtype, seed=self.seed)
        q, r = get_op_def("Qr")(a, full_matrices=False)  # the linear-algebra family's op
        q = q * unary_ops.sign(diag_ops.diag_part(r))
        if rows < cols:
            q = array_ops.matrix_transpose(q)
        return self.gain * array_ops.reshape(q, dims)

    def get_config(self) -> dict:
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}


class Identity(Initializer):
    """`gain` times the identity matrix (2-D shapes only; rectangular allowed)."""

    def __init__(self, gain=1.0, dtype=dtypes.float32):
        self.gain = gain
        self.dtype = _float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        full = _scale_shape(shape, partition_info)
        if len(full) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices.")
        dtype = self.dtype if dtype is None else dtypes.as_dtype(dtype)
        value = np.eye(full[0], full[1]) * self.gain
        if partition_info is not None:
            offset = partition_info.var_offset
            dims = _dims(shape)
            value = value[offset[0]:offset[0] + dims[0], offset[1]:offset[1] + dims[1]]
        return array_ops.constant(value.astype(dtype.as_numpy_dtype), dtype=dtype)

    def get_config(self) -> dict:
        return {"gain": self.gain, "dtype": self.dtype.name}


def lecun_normal(seed=None):
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    return VarianceScaling(1.0, "fan_in", "uniform", seed)


def he_normal(seed=None):
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
uniform_unit_scaling_initializer = UniformUnitScaling
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
orthogonal_initializer = Orthogonal
identity_initializer = Identity
