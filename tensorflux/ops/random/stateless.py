"""Stateless random ops: the output is a pure function of `shape` and a `seed` pair.

Each call draws from a `numpy.random.Philox` generator keyed by the two seed values, so the
same (shape, seed) always gives the same tensor, in any session or process, and different
seeds give independent streams. NOTE: the bit streams differ from TensorFlow's Philox
kernels: values are not TF-identical, only the semantics (determinism per seed pair and the
distributions) are.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import math as math_ops
from tensorflux.ops.random.stateful import (
    _dims,
    _finish,
    _sample_categorical,
    _shape_from_value,
    _shape_tensor,
    _work_dtype,
)

__all__ = ["stateless_random_uniform", "stateless_random_normal",
           "stateless_truncated_normal", "stateless_categorical", "stateless_multinomial"]

_FLOATS = "{float16, bfloat16, float32, float64}"
_SHAPED_ATTRS = [f"dtype: {_FLOATS} = float32", "T: {int32, int64} = int32",
                 "Tseed: {int32, int64} = int64"]
_MASK64 = (1 << 64) - 1

StatelessRandomUniform = define_op(
    "StatelessRandomUniform", inputs=["shape: T", "seed: Tseed"], outputs=["output: dtype"],
    attrs=_SHAPED_ATTRS, differentiable=False)
StatelessRandomNormal = define_op(
    "StatelessRandomNormal", inputs=["shape: T", "seed: Tseed"], outputs=["output: dtype"],
    attrs=_SHAPED_ATTRS, differentiable=False)
StatelessTruncatedNormal = define_op(
    "StatelessTruncatedNormal", inputs=["shape: T", "seed: Tseed"], outputs=["output: dtype"],
    attrs=_SHAPED_ATTRS, differentiable=False)
StatelessRandomUniformInt = define_op(
    "StatelessRandomUniformInt",
    inputs=["shape: T", "seed: Tseed", "minval: dtype", "maxval: dtype"],
    outputs=["output: dtype"],
    attrs=["dtype: {int32, int64}", "T: {int32, int64}", "Tseed: {int32, int64} = int64"],
    differentiable=False)
StatelessMultinomial = define_op(
    "StatelessMultinomial", inputs=["logits: T", "num_samples: int32", "seed: Tseed"],
    outputs=["output: output_dtype"],
    attrs=["T: realnumbertype", "Tseed: {int32, int64} = int64",
           "output_dtype: {int32, int64} = int64"],
    differentiable=False)


def _check_seed_shape(seed: TensorShape) -> None:
    dims = seed.with_rank(1)._dim_list
    if dims[0] is not None and dims[0] != 2:
        raise ValueError(f"seed must have shape [2], got {seed}")


def _generator(seed) -> np.random.Generator:
    seed = np.asarray(seed)
    if seed.shape != (2,):
        raise errors.InvalidArgumentError(
            None, None, f"seed must have shape [2], not [{','.join(map(str, seed.shape))}]")
    key = [int(s) & _MASK64 for s in seed]
    return np.random.Generator(np.random.Philox(key=key))


@StatelessRandomUniform.shape_fn(static_inputs=("shape",))
def _stateless_shaped(shape, seed):
    _check_seed_shape(seed)
    return _shape_from_value(shape)


StatelessRandomNormal.shape_fn(static_inputs=("shape",))(_stateless_shaped)
StatelessTruncatedNormal.shape_fn(static_inputs=("shape",))(_stateless_shaped)


@StatelessRandomUniform.kernel
def _stateless_random_uniform_kernel(shape, seed, *, dtype):
    rng, dims = _generator(seed), _dims(shape)
    if dtype.as_numpy_dtype == np.float16:
        # NOTE: a rounded float32 draw could reach 1.0; draw the 10 mantissa bits instead.
        bits = rng.integers(0, 1 << 10, size=dims, dtype=np.int32)
        return (bits * np.float32(2.0**-10)).astype(np.float16)
    return rng.random(dims, dtype=_work_dtype(dtype)).astype(dtype.as_numpy_dtype, copy=False)


@StatelessRandomNormal.kernel
def _stateless_random_normal_kernel(shape, seed, *, dtype):
    values = _generator(seed).standard_normal(_dims(shape), dtype=_work_dtype(dtype))
    return values.astype(dtype.as_numpy_dtype, copy=False)


@StatelessTruncatedNormal.kernel
def _stateless_truncated_normal_kernel(shape, seed, *, dtype):
    rng, work = _generator(seed), _work_dtype(dtype)
    values = rng.standard_normal(_dims(shape), dtype=work)
    flat = values.reshape(-1)
    # Redraw, in rounds over all rejected positions at once, what lies 2 stddev or more out.
    rejected = np.flatnonzero(np.abs(flat) >= 2)
    while rejected.size:
        flat[rejected] = rng.standard_normal(rejected.size, dtype=work)
        rejected = rejected[np.abs(flat[rejected]) >= 2]
    return values.astype(dtype.as_numpy_dtype, copy=False)


@StatelessRandomUniformInt.shape_fn(static_inputs=("shape",))
def _stateless_random_uniform_int_shape(shape, seed, minval, maxval):
    _check_seed_shape(seed)
    for name, value in (("minval", minval), ("maxval", maxval)):
        if value.ndims is not None and value.ndims != 0:
            raise ValueError(f"{name} must be a scalar; got a tensor of shape {value}")
    return _shape_from_value(shape)


@StatelessRandomUniformInt.kernel
def _stateless_random_uniform_int_kernel(shape, seed, minval, maxval, *, dtype):
    rng, dims = _generator(seed), _dims(shape)
    for name, value in (("minval", minval), ("maxval", maxval)):
        if np.ndim(value) != 0:
            raise errors.InvalidArgumentError(
                None, None, f"{name} must be 0-D, got shape {list(np.shape(value))}")
    if int(minval) >= int(maxval):
        raise errors.InvalidArgumentError(
            None, None, f"Need minval < maxval, got {int(minval)} >= {int(maxval)}")
    return rng.integers(int(minval), int(maxval), size=dims, dtype=dtype.as_numpy_dtype)


@StatelessMultinomial.shape_fn(value_inputs=("num_samples",))
def _stateless_multinomial_shape(logits, num_samples, seed):
    _check_seed_shape(seed)
    logits = logits.with_rank(2)
    if num_samples is not None:
        if np.ndim(num_samples) != 0:
            raise ValueError(f"num_samples must be a scalar, got shape {np.shape(num_samples)}")
        if int(num_samples) < 0:
            raise ValueError(f"num_samples must be non-negative, got {int(num_samples)}")
        num_samples = int(num_samples)
    return TensorShape([logits._dim_list[0], num_samples])


@StatelessMultinomial.kernel
def _stateless_multinomial_kernel(logits, num_samples, seed, *, output_dtype):
    rng = _generator(seed)
    out_type = output_dtype.as_numpy_dtype
    if np.ndim(logits) != 2:
        raise errors.InvalidArgumentError(
            None, None, f"logits should be a matrix, got shape {list(np.shape(logits))}")
    n = int(num_samples)
    if n < 0:
        raise errors.InvalidArgumentError(None, None,
                                          f"num_samples should be nonnegative, got {n}")
    batch, classes = logits.shape
    if n > 0 and classes == 0:
        raise errors.InvalidArgumentError(None, None,
                                          f"num_classes should be positive, got {classes}")
    if batch == 0 or n == 0:
        return np.zeros((batch, n), out_type)
    return _sample_categorical(rng, np.asarray(logits, np.float64), n).astype(out_type)


# -- wrappers -----------------------------------------------------------------------------------


def _seed_tensor(seed):
    seed = convert_to_tensor(seed, name="seed")
    if seed.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"seed must be int32 or int64, got {seed.dtype.name}")
    return seed


def stateless_random_uniform(shape, seed, minval=0, maxval=None, dtype=dtypes.float32,
                             name=None):
    """Deterministic uniform values in `[minval, maxval)` for a `seed` pair.

    Args:
        shape: 1-D ints: the output shape.
        seed: a shape [2] int32/int64 tensor; the same seed gives the same values.
        minval: lower bound (included).
        maxval: upper bound (excluded); default 1 for floats; required for integers.
        dtype: float16, bfloat16, float32, float64, int32 or int64.
        name: optional name.

    Returns:
        A tensor of `shape` and `dtype` (values differ from TensorFlow's for the same seed).

    Raises:
        ValueError: an integer `dtype` without both bounds.

    Example:
        >>> tf.random.stateless_uniform([2, 3], seed=[1, 2])
    """
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_integer:
        if minval is None or maxval is None:
            raise ValueError(f"For integer `dtype` argument {dtype!r}, argument `minval` and "
                             f"`maxval` must be both None or not None. Got `minval`={minval} "
                             f"and `maxval`={maxval}.")
        if dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError(f"Invalid dtype for stateless_random_uniform: {dtype!r}")
    elif maxval is None:
        maxval = 1
    with _scope(name, "stateless_random_uniform") as scope:
        shape_t = _shape_tensor(shape)
        seed_t = _seed_tensor(seed)
        low = convert_to_tensor(minval, dtype=dtype, name="min")
        high = convert_to_tensor(maxval, dtype=dtype, name="max")
        if dtype.is_integer:
            return _finish(StatelessRandomUniformInt(shape_t, seed_t, low, high, name=scope),
                           shape)
        rnd = StatelessRandomUniform(shape_t, seed_t, dtype=dtype)
        return _finish(math_ops.add(rnd * (high - low), low, name=scope), shape)


def _scaled(op_def, default_name, shape, seed, mean, stddev, dtype, name):
    dtype = dtypes.as_dtype(dtype)
    with _scope(name, default_name) as scope:
        shape_t = _shape_tensor(shape)
        seed_t = _seed_tensor(seed)
        mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = op_def(shape_t, seed_t, dtype=dtype)
        return _finish(math_ops.add(rnd * stddev_t, mean_t, name=scope), shape)


def stateless_random_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32,
                            name=None):
    """Deterministic normal values for a `seed` pair (see `stateless_random_uniform`)."""
    return _scaled(StatelessRandomNormal, "stateless_random_normal", shape, seed, mean, stddev,
                   dtype, name)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32,
                               name=None):
    """Deterministic normal values within 2 stddev of `mean` for a `seed` pair."""
    return _scaled(StatelessTruncatedNormal, "stateless_truncated_normal", shape, seed, mean,
                   stddev, dtype, name)


def _multinomial(logits, num_samples, seed, output_dtype, name, default_name):
    with _scope(name, default_name):
        logits = convert_to_tensor(logits, name="logits")
        num_samples = convert_to_tensor(num_samples, dtype=dtypes.int32, name="num_samples")
        return StatelessMultinomial(logits, num_samples, _seed_tensor(seed),
                                    output_dtype=dtypes.as_dtype(output_dtype))


def stateless_categorical(logits, num_samples, seed, dtype=dtypes.int64, name=None):
    """Deterministic draws of class indices from `logits` [batch, classes] for a `seed` pair.

    Returns:
        A [batch, num_samples] tensor of `dtype` (int32 or int64).

    Example:
        >>> tf.random.stateless_categorical(tf.log([[0.5, 0.5]]), 5, seed=[7, 17])
    """
    return _multinomial(logits, num_samples, seed, dtype, name, "stateless_categorical")


def stateless_multinomial(logits, num_samples, seed, output_dtype=dtypes.int64, name=None):
    """The TF1 spelling of `stateless_categorical`."""
    return _multinomial(logits, num_samples, seed, output_dtype, name, "stateless_multinomial")
