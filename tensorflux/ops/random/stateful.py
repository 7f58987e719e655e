"""Stateful random ops: uniform, normal, truncated normal, multinomial, shuffle, gamma, Poisson.

Each node owns a `numpy.random.Generator` (PCG64) created once per session from its `seed` and
`seed2` attrs (see `random_seed.get_seed`), so its sequence advances step by step and restarts
with a new Session; `seed == seed2 == 0` draws fresh OS entropy. A seeded op's values depend only
on its own seeds and how many values it drew before, never on other ops (TF1's rule: each op has
its own stream). Values are not bit-identical to TensorFlow's Philox streams; their distributions
are the same.

Threads: a kernel instance (one per node and session) is shared by every thread that runs the
node, as TF shares an op's generator. NumPy's array draws take the generator's lock and release
the GIL for the fill; for the tiny draws of per-example preprocessing (a scalar, a crop offset)
that GIL round trip is a thread handoff per draw, and a thread that waits for the GIL inside the
fill holds the lock the other threads then queue on. Draws of at most `_SMALL` values are made
one value at a time through NumPy's scalar path, which keeps the GIL (its lock is then never
contended): the same values, in the same order, as one array draw of the stream. Uniform draws
(RandomUniform, RandomUniformInt) go through a `BufferedStream`: small draws are served from a
block of the stream drawn at once (the same values again; `buffered_stream.py`).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op, get_op_def
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import Dimension, TensorShape
from tensorflux.ops import math as math_ops
from tensorflux.ops.random.buffered_stream import BufferedStream
from tensorflux.ops.random.seed import get_seed

__all__ = ["random_uniform", "random_normal", "truncated_normal", "random_shuffle",
           "multinomial", "categorical", "random_gamma", "random_poisson"]

_SEED_ATTRS = ["seed: int = 0", "seed2: int = 0"]
_REAL_FLOATS = "{float16, bfloat16, float32, float64}"
_UINT64 = (1 << 64) - 1


def _generator(seed: int, seed2: int) -> np.random.Generator:
    """A PCG64 generator for a node: seeded from both attrs, or from entropy when both are 0."""
    if seed == 0 and seed2 == 0:
        return np.random.Generator(np.random.PCG64())
    sequence = np.random.SeedSequence([int(seed) & _UINT64, int(seed2) & _UINT64])
    return np.random.Generator(np.random.PCG64(sequence))


_SMALL = 16


def _count(dims: tuple) -> int:
    count = 1
    for d in dims:
        count *= d
    return count


def _draw(draw, dims: tuple, dtype, *args):
    """`draw(*args, size=dims, dtype=dtype)`, made value by value (keeping the GIL) when small.

    NumPy's scalar draw (`size=None`) consumes the stream exactly as one element of an array
    draw does, so both paths give the same values.
    """
    if not dims:
        return np.array(draw(*args, dtype=dtype), dtype)
    count = _count(dims)
    if count > _SMALL:
        return draw(*args, size=dims, dtype=dtype)
    values = np.array([draw(*args, dtype=dtype) for _ in range(count)], dtype)
    return values.reshape(dims) if len(dims) != 1 else values


def _dims(shape) -> tuple:
    """Validates a runtime `shape` input (a vector of non-negative ints)."""
    shape = np.asarray(shape)
    if shape.ndim != 1:
        raise errors.InvalidArgumentError(
            None, None, f"shape must be a vector of {{int32,int64}}, got shape "
                        f"[{','.join(str(d) for d in shape.shape)}]")
    dims = tuple(shape.tolist())  # Python ints, cheaper than int() of each NumPy scalar
    for d in dims:
        if d < 0:
            raise errors.InvalidArgumentError(None, None, f"Dimension {d} must be >= 0")
    return dims


def _shape_from_value(shape) -> TensorShape:
    """Static output shape from a `shape` input (a StaticInput): its constant value, else the
    dims known while the graph is built (`tf.stack([n, 5])` gives [?, 5], as TF's
    shape-tensor rule)."""
    if shape.shape.ndims is not None and shape.shape.ndims != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {shape.shape.ndims}")
    if shape.value is None:
        return shape.as_shape()
    shape = np.asarray(shape.value)
    if shape.ndim != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {shape.ndim}")
    dims = [int(d) for d in shape]
    for d in dims:
        if d < -1:
            raise ValueError(f"Dimension {d} must be >= 0")
    return TensorShape([None if d == -1 else d for d in dims])


def _work_dtype(dtype):
    """The NumPy dtype to sample in: float16 is drawn in float32, then cast."""
    np_dtype = np.dtype(dtype.as_numpy_dtype)
    return np.float64 if np_dtype == np.float64 else np.float32


# -- RandomUniform ----------------------------------------------------------------------------

RandomUniform = define_op(
    "RandomUniform", inputs=["shape: T"], outputs=["output: dtype"],
    attrs=[*_SEED_ATTRS, f"dtype: {_REAL_FLOATS}", "T: {int32, int64}"],
    stateful=True, differentiable=False)


@RandomUniform.shape_fn(static_inputs=("shape",))
def _random_uniform_shape(shape):
    return _shape_from_value(shape)


@RandomUniform.kernel(factory=True)
def _random_uniform_kernel(seed, seed2, dtype):
    rng = _generator(seed, seed2)
    out_type = np.dtype(dtype.as_numpy_dtype)
    if out_type == np.float16:
        # NOTE: casting a float32 draw could round up to 1.0; draw the 10 mantissa bits instead.
        bit_stream = BufferedStream(rng, rng.integers, np.int32)

        def uniform_half(shape):
            bits = bit_stream.take(_dims(shape), 0, 1 << 10)
            return (bits * np.float32(2.0**-10)).astype(np.float16)

        return uniform_half
    stream = BufferedStream(rng, rng.random, _work_dtype(dtype))

    def uniform(shape):
        return stream.take(_dims(shape))

    return uniform


RandomUniformInt = define_op(
    "RandomUniformInt", inputs=["shape: T", "minval: Tout", "maxval: Tout"],
    outputs=["output: Tout"], attrs=[*_SEED_ATTRS, "Tout: {int32, int64}", "T: {int32, int64}"],
    stateful=True, differentiable=False)


@RandomUniformInt.shape_fn(static_inputs=("shape",))
def _random_uniform_int_shape(shape, minval, maxval):
    for name, value in (("minval", minval), ("maxval", maxval)):
        if value.ndims is not None and value.ndims != 0:
            raise ValueError(f"{name} must be a scalar; got a tensor of shape {value}")
    return _shape_from_value(shape)


@RandomUniformInt.kernel(factory=True)
def _random_uniform_int_kernel(seed, seed2, Tout):
    rng = _generator(seed, seed2)
    stream = BufferedStream(rng, rng.integers, Tout.as_numpy_dtype)

    def uniform_int(shape, minval, maxval):
        dims = _dims(shape)
        for name, value in (("minval", minval), ("maxval", maxval)):
            if np.ndim(value) != 0:
                raise errors.InvalidArgumentError(
                    None, None, f"{name} must be 0-D, got shape {list(np.shape(value))}")
        low, high = int(minval), int(maxval)
        if low >= high:
            raise errors.InvalidArgumentError(
                None, None, f"Need minval < maxval, got {low} >= {high}")
        return stream.take(dims, low, high)

    return uniform_int


# -- RandomStandardNormal, TruncatedNormal ----------------------------------------------------

RandomStandardNormal = define_op(
    "RandomStandardNormal", inputs=["shape: T"], outputs=["output: dtype"],
    attrs=[*_SEED_ATTRS, f"dtype: {_REAL_FLOATS}", "T: {int32, int64}"],
    stateful=True, differentiable=False)


@RandomStandardNormal.shape_fn(static_inputs=("shape",))
def _random_standard_normal_shape(shape):
    return _shape_from_value(shape)


@RandomStandardNormal.kernel(factory=True)
def _random_standard_normal_kernel(seed, seed2, dtype):
    rng = _generator(seed, seed2)
    work = _work_dtype(dtype)
    out_type = dtype.as_numpy_dtype

    def standard_normal(shape):
        return _draw(rng.standard_normal, _dims(shape), work).astype(out_type, copy=False)

    return standard_normal


TruncatedNormal = define_op(
    "TruncatedNormal", inputs=["shape: T"], outputs=["output: dtype"],
    attrs=[*_SEED_ATTRS, f"dtype: {_REAL_FLOATS}", "T: {int32, int64}"],
    stateful=True, differentiable=False)


@TruncatedNormal.shape_fn(static_inputs=("shape",))
def _truncated_normal_shape(shape):
    return _shape_from_value(shape)


@TruncatedNormal.kernel(factory=True)
def _truncated_normal_kernel(seed, seed2, dtype):
    rng = _generator(seed, seed2)
    work = _work_dtype(dtype)
    out_type = dtype.as_numpy_dtype

    def truncated_normal(shape):
        values = _draw(rng.standard_normal, _dims(shape), work).astype(out_type, copy=False)
        flat = values.reshape(-1)
        # Resample, in rounds over all rejected positions at once, what lies 2 stddev or more
        # out (about 4.6% per round, so a handful of rounds).
        rejected = np.flatnonzero(np.abs(flat) >= 2)
        while rejected.size:
            flat[rejected] = rng.standard_normal(rejected.size, dtype=work)
            rejected = rejected[np.abs(flat[rejected]) >= 2]
        return values

    return truncated_normal


# -- Multinomial -------------------------------------------------------------------------------

Multinomial = define_op(
    "Multinomial", inputs=["logits: T", "num_samples: int32"], outputs=["output: output_dtype"],
    attrs=[*_SEED_ATTRS, "T: realnumbertype", "output_dtype: {int32, int64} = int64"],
    stateful=True, differentiable=False)


@Multinomial.shape_fn(value_inputs=("num_samples",))
def _multinomial_shape(logits, num_samples):
    logits = logits.with_rank(2)
    if num_samples is not None:
        if np.ndim(num_samples) != 0:
            raise ValueError(f"num_samples must be a scalar, got shape {np.shape(num_samples)}")
        if int(num_samples) < 0:
            raise ValueError(f"Dimension size, given by scalar input 1, must be non-negative "
                             f"but is {int(num_samples)}")
        num_samples = int(num_samples)
    return TensorShape([logits._dim_list[0], num_samples])


@Multinomial.kernel(factory=True)
def _multinomial_kernel(seed, seed2, output_dtype):
    rng = _generator(seed, seed2)
    out_type = output_dtype.as_numpy_dtype

    def multinomial(logits, num_samples):
        if np.ndim(logits) != 2:
            raise errors.InvalidArgumentError(
                None, None, f"logits should be a matrix, got shape {list(np.shape(logits))}")
        if np.ndim(num_samples) != 0:
            raise errors.InvalidArgumentError(
                None, None, f"num_samples should be a scalar, got shape "
                            f"{list(np.shape(num_samples))}")
        n = int(num_samples)
        if n < 0:
            raise errors.InvalidArgumentError(
                None, None, f"num_samples should be nonnegative, got {n}")
        batch, classes = logits.shape
        if n > 0 and classes == 0:
            raise errors.InvalidArgumentError(
                None, None, f"num_classes should be positive, got {classes}")
        if batch == 0 or n == 0:
            return np.zeros((batch, n), out_type)
        return _sample_categorical(rng, np.asarray(logits, np.float64), n).astype(out_type)

    return multinomial


def _sample_categorical(rng, logits: np.ndarray, n: int) -> np.ndarray:
    """Inverse-CDF sampling of every row at once with one searchsorted over shifted rows."""
    batch, classes = logits.shape
    peak = logits.max(axis=1, keepdims=True)
    hopeless = ~np.isfinite(peak[:, 0])  # rows of all -inf (or nan): no class can be drawn
    probs = np.exp(logits - np.where(np.isfinite(peak), peak, 0.0))
    probs[hopeless] = 1.0
    cdf = np.cumsum(probs, axis=1)
    cdf /= cdf[:, -1:]
    # Row r lives in [2r, 2r + 1]: the rows form one increasing sequence for searchsorted.
    offsets = 2.0 * np.arange(batch, dtype=np.float64)[:, None]
    draws = rng.random((batch, n)) + offsets
    found = np.searchsorted((cdf + offsets).reshape(-1), draws.reshape(-1), side="right")
    samples = found.reshape(batch, n) - classes * np.arange(batch)[:, None]
    np.minimum(samples, classes - 1, out=samples)
    samples[hopeless] = classes  # TensorFlow's answer for a row with no finite logit
    return samples


# -- RandomShuffle -----------------------------------------------------------------------------

RandomShuffle = define_op(
    "RandomShuffle", inputs=["value: T"], outputs=["output: T"],
    attrs=[*_SEED_ATTRS, "T: type"], stateful=True, differentiable=False)


@RandomShuffle.shape_fn
def _random_shuffle_shape(value):
    return value


@RandomShuffle.kernel(factory=True)
def _random_shuffle_kernel(seed, seed2):
    rng = _generator(seed, seed2)

    def shuffle(value):
        if np.ndim(value) == 0 or len(value) <= 1:
            return value
        return value[rng.permutation(len(value))]

    return shuffle


# -- RandomGamma, RandomPoissonV2 -------------------------------------------------------------

RandomGamma = define_op(
    "RandomGamma", inputs=["shape: S", "alpha: T"], outputs=["output: T"],
    attrs=[*_SEED_ATTRS, "S: {int32, int64}", "T: {float16, float32, float64}"],
    stateful=True, differentiable=False)


def _prefix_shape(shape_value, param: TensorShape) -> TensorShape:
    return _shape_from_value(shape_value).concatenate(param)


@RandomGamma.shape_fn(static_inputs=("shape",))
def _random_gamma_shape(shape, alpha):
    return _prefix_shape(shape, alpha)


@RandomGamma.kernel(factory=True)
def _random_gamma_kernel(seed, seed2):
    rng = _generator(seed, seed2)

    def gamma(shape, alpha):
        dims = _dims(shape) + np.shape(alpha)
        positive = alpha > 0
        safe = np.where(positive, alpha, 1).astype(np.float64)
        draws = rng.standard_gamma(np.broadcast_to(safe, dims))
        # alpha <= 0 has no gamma distribution: nan, as in TensorFlow (alpha == 0 gives 0).
        draws = np.where(positive, draws, np.where(alpha == 0, 0.0, np.nan))
        return draws.astype(alpha.dtype)

    return gamma


RandomPoissonV2 = define_op(
    "RandomPoissonV2", inputs=["shape: S", "rate: R"], outputs=["output: dtype"],
    attrs=[*_SEED_ATTRS, "S: {int32, int64}",
           "R: {float16, float32, float64, int32, int64} = float64",
           "dtype: {float16, float32, float64, int32, int64} = int64"],
    stateful=True, differentiable=False)


@RandomPoissonV2.shape_fn(static_inputs=("shape",))
def _random_poisson_shape(shape, rate):
    return _prefix_shape(shape, rate)


@RandomPoissonV2.kernel(factory=True)
def _random_poisson_kernel(seed, seed2, dtype):
    rng = _generator(seed, seed2)
    out_type = dtype.as_numpy_dtype

    def poisson(shape, rate):
        dims = _dims(shape) + np.shape(rate)
        lam = np.asarray(rate, np.float64)
        valid = lam >= 0  # a negative rate draws 0, as in TensorFlow; nan stays nan
        draws = rng.poisson(np.broadcast_to(np.where(valid, lam, 0.0), dims))
        if np.issubdtype(out_type, np.floating):
            draws = np.where(np.isnan(lam), np.nan, draws)
        return draws.astype(out_type)

    return poisson


# -- Python wrappers ---------------------------------------------------------------------------

_UNIFORM_TYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64, dtypes.int32,
                  dtypes.int64)


def _shape_tensor(shape) -> Tensor:
    """A 1-D int tensor from a list/tuple/TensorShape (possibly holding scalar tensors)."""
    if isinstance(shape, TensorShape):
        shape = shape.as_list()
    if isinstance(shape, (list, tuple)):
        items = [int(d) if isinstance(d, Dimension) else d for d in shape]
        if any(isinstance(d, Tensor) for d in items):
            parts = [convert_to_tensor(d, dtype=dtypes.int32) for d in items]
            return get_op_def("Pack")(parts, axis=0, name="shape")
        if not items:
            return convert_to_tensor(np.zeros([0], np.int32), name="shape")
        return convert_to_tensor(items, name="shape")
    return convert_to_tensor(shape, name="shape")


def _static_shape(shape) -> TensorShape:
    """The static shape a `shape` argument promises (dims that are tensors stay unknown)."""
    if isinstance(shape, TensorShape):
        return shape
    if isinstance(shape, (list, tuple)):
        return TensorShape([None if isinstance(d, Tensor) else d for d in shape])
    if isinstance(shape, Tensor):
        if shape.op.type == "Shape":
            return shape.op.inputs[0].shape
        if shape.shape.ndims == 1 and shape.shape._dim_list[0] is not None:
            return TensorShape([None] * int(shape.shape._dim_list[0]))
    return TensorShape(None)


def _finish(result: Tensor, shape) -> Tensor:
    static = _static_shape(shape)
    if result.shape.is_compatible_with(static):
        result.set_shape(static)
    return result


def _seed_attrs(seed) -> dict:
    seed1, seed2 = get_seed(seed)
    return {"seed": seed1 or 0, "seed2": seed2 or 0}



def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Uniform values in `[minval, maxval)` (TF1 `tf.random_uniform`).

    Args:
        shape: 1-D ints (list, TensorShape or tensor): the output shape.
        minval: lower bound (included); a scalar of `dtype`.
        maxval: upper bound (excluded); defaults to 1 for floats, required for integers.
        dtype: float16, bfloat16, float32, float64, int32 or int64.
        seed: op-level seed (see `tf.set_random_seed`).
        name: optional name.

    Returns:
        A tensor of `shape` and `dtype`.

    Raises:
        ValueError: `dtype` is not supported, or `maxval` is missing for an integer dtype.

    Example:
        >>> tf.random_uniform([2, 3], minval=-1.0, maxval=1.0, seed=4)
    """
    dtype = dtypes.as_dtype(dtype)
    if dtype not in _UNIFORM_TYPES:
        raise ValueError(f"Argument `dtype` got invalid value {dtype}. Accepted dtypes are "
                         f"({', '.join(repr(t) for t in _UNIFORM_TYPES)}).")
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
        maxval = 1
    unit_range = (not isinstance(minval, Tensor) and not isinstance(maxval, Tensor)
                  and np.all(np.asarray(minval) == 0) and np.all(np.asarray(maxval) == 1)
                  and np.ndim(minval) == 0 and np.ndim(maxval) == 0)
    with _scope(name, "random_uniform") as scope:
        shape_t = _shape_tensor(shape)
        seeds = _seed_attrs(seed)
        if dtype.is_integer:
            low = convert_to_tensor(minval, dtype=dtype, name="min")
            high = convert_to_tensor(maxval, dtype=dtype, name="max")
            return _finish(RandomUniformInt(shape_t, low, high, **seeds, name=scope), shape)
        if unit_range:
            return _finish(RandomUniform(shape_t, dtype=dtype, **seeds), shape)
        low = convert_to_tensor(minval, dtype=dtype, name="min")
        high = convert_to_tensor(maxval, dtype=dtype, name="max")
        rnd = RandomUniform(shape_t, dtype=dtype, **seeds)
        return _finish(math_ops.add(rnd * (high - low), low, name=scope), shape)


def _scaled_normal(op_def, default_name, shape, mean, stddev, dtype, seed, name):
    dtype = dtypes.as_dtype(dtype)
    with _scope(name, default_name) as scope:
        shape_t = _shape_tensor(shape)
        mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = op_def(shape_t, dtype=dtype, **_seed_attrs(seed))
        return _finish(math_ops.add(rnd * stddev_t, mean_t, name=scope), shape)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal values with the given mean and standard deviation (TF1 `tf.random_normal`).

    Args:
        shape: 1-D ints: the output shape.
        mean: scalar or tensor broadcastable to `shape`.
        stddev: scalar or tensor broadcastable to `shape`.
        dtype: a floating type.
        seed: op-level seed.
        name: optional name.

    Returns:
        A tensor of `shape` and `dtype`.
    """
    return _scaled_normal(RandomStandardNormal, "random_normal", shape, mean, stddev, dtype,
                          seed, name)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal values redrawn until within 2 standard deviations of `mean`.

    Args:
        shape: 1-D ints: the output shape.
        mean: scalar mean.
        stddev: scalar standard deviation (of the normal before truncation).
        dtype: a floating type.
        seed: op-level seed.
        name: optional name.

    Returns:
        A tensor of `shape` and `dtype`, every value in `(mean - 2 stddev, mean + 2 stddev)`.
    """
    return _scaled_normal(TruncatedNormal, "truncated_normal", shape, mean, stddev, dtype, seed,
                          name)


def random_shuffle(value, seed=None, name=None):
    """Shuffles `value` along its first dimension (TF1 `tf.random_shuffle`).

    Args:
        value: a tensor.
        seed: op-level seed.
        name: optional name.

    Returns:
        A tensor like `value` with its rows in a random order.
    """
    return RandomShuffle(value, **_seed_attrs(seed), name=name)


def multinomial(logits, num_samples, seed=None, name=None, output_dtype=None):
    """Draws class indices from categorical distributions (TF1 `tf.multinomial`).

    Args:
        logits: `[batch_size, num_classes]` unnormalized log-probabilities.
        num_samples: 0-D int: samples per row.
        seed: op-level seed.
        name: optional name.
        output_dtype: int32 or int64 (default int64).

    Returns:
        `[batch_size, num_samples]` class indices.
    """
    with _scope(name, "multinomial"):
        logits = convert_to_tensor(logits, name="logits")
        return Multinomial(logits, num_samples, **_seed_attrs(seed),
                           output_dtype=output_dtype or dtypes.int64)


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """`tf.random.categorical`: `multinomial` with the output type named `dtype`."""
    with _scope(name, "categorical"):
        logits = convert_to_tensor(logits, name="logits")
        return Multinomial(logits, num_samples, **_seed_attrs(seed),
                           output_dtype=dtype or dtypes.int64)


def random_gamma(shape, alpha, beta=None, dtype=dtypes.float32, seed=None, name=None):
    """Gamma samples of shape `shape + broadcast(alpha, beta).shape` (TF1 `tf.random_gamma`).

    Args:
        shape: 1-D ints: samples to draw per distribution.
        alpha: shape (concentration) parameters.
        beta: inverse scale (rate) parameters, default 1.
        dtype: float16, float32 or float64.
        seed: op-level seed.
        name: optional name.

    Returns:
        Samples, never below the smallest normal of `dtype`.
    """
    dtype = dtypes.as_dtype(dtype)
    with _scope(name, "random_gamma"):
        shape_t = _shape_tensor(shape)
        alpha = convert_to_tensor(alpha, dtype=dtype, name="alpha")
        tiny = convert_to_tensor(np.finfo(dtype.as_numpy_dtype).tiny, dtype=dtype)
        if beta is None:
            sample = RandomGamma(shape_t, alpha, **_seed_attrs(seed))
        else:
            beta = convert_to_tensor(beta, dtype=dtype, name="beta")
            ones = get_op_def("OnesLike")(beta)
            alpha_b = alpha * ones  # alpha broadcast against beta's shape
            sample = get_op_def("RealDiv")(RandomGamma(shape_t, alpha_b, **_seed_attrs(seed)),
                                           beta)
        return get_op_def("Maximum")(tiny, sample)


def random_poisson(lam, shape, dtype=dtypes.float32, seed=None, name=None):
    """Poisson samples of shape `shape + lam.shape` (TF1 `tf.random_poisson`).

    Args:
        lam: rates of the distributions.
        shape: 1-D ints: samples to draw per distribution.
        dtype: float16, float32, float64, int32 or int64.
        seed: op-level seed.
        name: optional name.

    Returns:
        Samples of type `dtype`.
    """
    with _scope(name, "random_poisson"):
        shape_t = _shape_tensor(shape)
        lam = convert_to_tensor(lam, name="lam")
        return RandomPoissonV2(shape_t, lam, dtype=dtypes.as_dtype(dtype), **_seed_attrs(seed))
